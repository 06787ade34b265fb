package fault

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/packet"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Link
		err  string
	}{
		{"top.net.r(1)(0).out(1)@20000", Link{"top.net.r(1)(0).out(1)", 20000}, ""},
		{" top.leaf(2).out(5) @ 1_000 ", Link{"top.leaf(2).out(5)", 1000}, ""},
		{"x@0", Link{"x", 0}, ""},
		{"top.leaf(2).out(5)", Link{}, "PATH@CYCLE"},
		{"@5", Link{}, "PATH@CYCLE"},
		{"a@", Link{}, "PATH@CYCLE"},
		{"a@-1", Link{}, "not a cycle number"},
		{"a@1e3", Link{}, "not a cycle number"},
		{"top.net.r(1,0).out(1)@7", Link{"top.net.r(1,0).out(1)", 7}, ""},
		{"top.net.r(1.out(1)@7", Link{}, `the '(' at byte 10 of the path is never closed`},
		{"top.net.r(1)).out(1)@7", Link{}, `the ')' at byte 13 of the path closes nothing`},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
		back, err := Parse(got.String())
		require.NoError(t, err)
		require.Equal(t, got, back, "String round-trips")
	}
	_, err := ParseAll([]string{"a@1", "b"})
	require.ErrorContains(t, err, "entry 2")
}

// A log counts every drop and the measured ones, keeps the first Keep
// (all with KeepAll); Merge orders by cycle, then packet id.
func TestLogAndMerge(t *testing.T) {
	var a, b Log
	for i := 0; i < Keep+10; i++ {
		a.Add(uint64(100-i), "a", &packet.Packet{ID: uint64(i), Measured: i%2 == 0, Payload: []uint64{1}})
	}
	b.KeepAll = true
	for i := 0; i < Keep+10; i++ {
		b.Add(5, "b", &packet.Packet{ID: uint64(1000 - i)})
	}
	require.Equal(t, uint64(Keep+10), a.N)
	require.Equal(t, uint64((Keep+10)/2), a.Measured)
	require.Len(t, a.Drops(), PerBlock)
	require.Nil(t, a.Drops()[0].Pkt.Payload, "payloads are not kept")
	require.Len(t, b.Drops(), Keep+10)
	all, n, m := Merge([]*Log{&a, nil, &b})
	require.Equal(t, uint64(2*(Keep+10)), n)
	require.Equal(t, a.Measured, m)
	require.Len(t, all, Keep)
	require.Equal(t, "b", all[Keep-1].Where, "a kept %d, b all", PerBlock)
	for i := 1; i < len(all); i++ {
		require.True(t, all[i-1].At < all[i].At || all[i-1].At == all[i].At && all[i-1].Pkt.ID < all[i].Pkt.ID)
	}
	require.Equal(t, "b", all[0].Where)
}

// A comma list cut inside parentheses (by --set's list syntax or a YAML
// flow list) is joined back into the faults the user wrote, numbered as
// written; an entry left open to the end is refused.
func TestParseAllRejoins(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []Link
		err  string
	}{
		{[]string{"top.net.r(1", "0).out(1)@5"}, []Link{{"top.net.r(1,0).out(1)", 5}}, ""},
		{[]string{"a(1", "2", "3).out(1)@5", "b(0)(1).out(2)@6"}, []Link{{"a(1,2,3).out(1)", 5}, {"b(0)(1).out(2)", 6}}, ""},
		{[]string{"x@1", "a(1", "2).out(1)@"}, nil, "entry 2: \"a(1,2).out(1)@\" is not PATH@CYCLE"},
		{[]string{"a(1", "b@2"}, nil, "entry 1: \"a(1,b@2\": the '(' at byte 2 of the path is never closed"},
		{[]string{"a(1)@1", "oops"}, nil, "entry 2: \"oops\" is not PATH@CYCLE"},
	} {
		got, err := ParseAll(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.want, got, "%q", c.in)
	}
}

// Canon spells a block's indices as rtl.Idx does, whichever form --trace
// would accept.
func TestCanon(t *testing.T) {
	for in, want := range map[string]string{
		"top.net.r(1)(0).out(1)":     "top.net.r(1)(0).out(1)",
		"top.net.r(1,0).out(1)":      "top.net.r(1)(0).out(1)",
		" top.net.r( 1, 0 ).out(1) ": "top.net.r(1)(0).out(1)",
		"top.net.r(1,2,3).out(4)":    "top.net.r(1)(2)(3).out(4)",
		"top.mid(1,2).out(0)":        "top.mid(1)(2).out(0)",
		"leaf(2).out(5)":             "leaf(2).out(5)",
		"a,b":                        "a,b", // not inside parentheses: left for the caller to refuse
	} {
		require.Equal(t, want, Canon(in), in)
	}
}

// Repeated finds two entries naming one output port, however spelled,
// and says which; Twice tells a port named twice from a link's two ends.
func TestRepeated(t *testing.T) {
	for _, c := range []struct {
		in  []Link
		err string
	}{
		{[]Link{{"top.net.r(0)(0).out(1)", 0}, {"top.net.r(0)(0).out(2)", 0}}, ""},
		{[]Link{{"top.net.r(0)(0).out(1)", 0}, {"top.net.r(1)(0).out(1)", 5}, {"top.net.r(0)(0).out(1)", 9}},
			"entries 1 (top.net.r(0)(0).out(1)@0) and 3 (top.net.r(0)(0).out(1)@9) name the same link; a link goes down once: keep one entry"},
		{[]Link{{"top.net.r(1,0).out(1)", 0}, {"net.r(1)(0).out(1)", 5}},
			"entries 1 (top.net.r(1,0).out(1)@0) and 2 (net.r(1)(0).out(1)@5) name the same link; a link goes down once: keep one entry"},
	} {
		err := Repeated(c.in)
		if c.err == "" {
			require.NoError(t, err)
			continue
		}
		require.EqualError(t, err, c.err)
	}
	ends := []Link{{"top.net.r(0)(0).out(1)", 0}, {"top.net.r(1)(0).out(2)", 3}}
	require.NoError(t, Repeated(ends), "two ends are the network's to match")
	require.EqualError(t, Twice(ends, 0, 1), "entries 1 (top.net.r(0)(0).out(1)@0) and 2 (top.net.r(1)(0).out(2)@3) name the same link from its two ends (a link dies both ways); a link goes down once: keep one entry")
}
