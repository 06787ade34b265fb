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
