package scenario

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/vcd"
)

// The waveform of a traced router shows what the router did: in the
// wormhole-block scenario the worms from node 3 to node 0 cross r(1) from
// its +x input (in(1)) to its −x output (out(2)), in one-flit buffers.
func TestRouterWaveform(t *testing.T) {
	s, ok := Lookup("torus-wormhole-block")
	require.True(t, ok)
	data, _ := traceScenario(t, s, 7, nil)
	f, err := vcd.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	values := func(name string) []uint64 {
		h := f.History(name)
		require.NotEmpty(t, h, "%s is not in the waveform or never set", name)
		var out []uint64
		for _, c := range h {
			v, err := strconv.ParseUint(c.Value, 2, 64)
			require.NoError(t, err, "%s = %q", name, c.Value)
			out = append(out, v)
		}
		return out
	}
	const in, out = "top.net.r(1).in(1).vc(0).", "top.net.r(1).out(2)."
	seen := map[uint64]bool{}
	for _, v := range values(in + "state") {
		require.LessOrEqual(t, v, uint64(2), "state is idle, routing or active")
		seen[v] = true
	}
	require.Len(t, seen, 3, "the VC goes idle → routing → active and back")
	require.Equal(t, uint64(1), maxOf(values(in+"flits")), "a one-flit buffer holds one flit at most, and does")
	for _, v := range values(in + "out") {
		require.Contains(t, []uint64{0, 2<<4 | 0}, v, "allocated output: port 2, VC 0 (or none)")
	}
	credits := values(out + "vc(0).credits")
	require.Contains(t, credits, uint64(0))
	require.Equal(t, uint64(1), maxOf(credits))

	// Every cycle the link is valid it carries a packet of node 3's (the
	// tag's high bits are the source).
	valid, pkt := f.History(out+"valid"), out+"pkt"
	require.NotEmpty(t, valid)
	ones := 0
	for _, c := range valid {
		if c.Value != "1" {
			continue
		}
		ones++
		v, ok := f.ValueAt(pkt, c.Time)
		require.True(t, ok)
		tag, err := strconv.ParseUint(v, 2, 32)
		require.NoError(t, err)
		require.Equal(t, uint64(3), tag>>20, "packet %x on r(1).out(2) is not node 3's", tag)
	}
	require.Positive(t, ones)
}

func maxOf(vs []uint64) (m uint64) {
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}
