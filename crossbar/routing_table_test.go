package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/packet"
)

// A table's unicast entries answer as a map of destinations would, whatever
// the order and overlap of the ranges set and whichever form the table
// takes (runs, a byte per destination past maxRuns, port sets past 255
// distinct ones).
func TestUnicastEntriesAreAMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dests := rapid.Uint32Range(1, 600).Draw(rt, "dests")
		sets := rapid.IntRange(1, 300).Draw(rt, "sets") // > 255 takes the wide form
		tb := NewTable(8)
		model := map[uint32]uint64{}
		for i, n := 0, rapid.IntRange(0, 200).Draw(rt, "writes"); i < n; i++ {
			lo := rapid.Uint32Range(0, dests).Draw(rt, "lo")
			hi := rapid.Uint32Range(lo, min(dests, lo+rapid.Uint32Range(0, dests).Draw(rt, "len"))).Draw(rt, "hi")
			mask := uint64(rapid.IntRange(0, sets-1).Draw(rt, "set")) // 0: no route
			if rapid.IntRange(0, 9).Draw(rt, "high") == 0 {
				mask <<= 20 // past the 16 bits the first line's copy of the runs keeps
			}
			if rapid.Bool().Draw(rt, "one") && lo < dests {
				tb.SetUnicast(lo, mask)
				model[lo] = mask
			} else {
				tb.SetUnicastRange(lo, hi, mask)
				for d := lo; d < hi; d++ {
					model[d] = mask
				}
			}
			if tb.ucRuns != nil {
				require.LessOrEqual(rt, len(tb.ucRuns), maxRuns)
				for j := 1; j < len(tb.ucRuns); j++ {
					require.Less(rt, tb.ucRuns[j-1].end, tb.ucRuns[j].end, "runs in order")
					require.NotEqual(rt, tb.ucRuns[j-1].set, tb.ucRuns[j].set, "adjacent runs merged")
				}
			}
			fits := tb.ucRuns != nil && len(tb.ucRuns) <= nearRuns
			for _, r := range tb.ucRuns {
				fits = fits && tb.ucSet[r.set] <= 0xffff
			}
			require.Equal(rt, fits, tb.near, "the runs are in the first line (near) exactly when there are at most %d and their sets fit 16 bits", nearRuns)
		}
		for d := uint32(0); d <= dests+1; d++ {
			require.Equal(rt, model[d], tb.unicast(d), "destination %d", d)
		}
		require.Zero(rt, tb.unicast(^uint32(0)), "the last destination a packet can name")
	})
}

// A table of a few blocks stays runs, and looks up through Lookup: the
// error of a destination without a route names it.
func TestUnicastBlocksStayRuns(t *testing.T) {
	tb := NewTable(8)
	const up = 0xf0
	tb.SetUnicastRange(0, 1<<16, up)
	for d := range 4 {
		tb.SetUnicastRange(uint32(4096+d*1024), uint32(4096+(d+1)*1024), 1<<d)
	}
	require.Len(t, tb.ucRuns, 6)
	require.Nil(t, tb.ucIdx)
	require.True(t, tb.near, "six runs of sets within 16 bits are kept in the table's first line")
	for dst, want := range map[uint32]uint64{0: up, 4095: up, 4096: 1, 5119: 1, 5120: 2, 8191: 8, 8192: up, 1<<16 - 1: up} {
		m, err := tb.Lookup(&packet.Packet{Op: packet.Unicast, Dst: dst}, 0)
		require.NoError(t, err)
		require.Equal(t, want, m, "destination %d", dst)
	}
	_, err := tb.Lookup(&packet.Packet{Op: packet.Unicast, Dst: 1 << 16}, 0)
	require.EqualError(t, err, "no route to node 65536")
}

// The forms a table takes as its entries grow: runs, then a byte per
// destination past maxRuns runs, then port sets past 255 distinct ones,
// each answering for every entry set before.
func TestUnicastForms(t *testing.T) {
	tb := NewTable(64)
	mask := func(d uint32) uint64 { return uint64(d%300 + 1) }
	check := func(n uint32) {
		for d := range n {
			require.Equal(t, mask(d), tb.unicast(d), "destination %d", d)
		}
		require.Zero(t, tb.unicast(n))
	}
	for d := range uint32(maxRuns) {
		tb.SetUnicast(d, mask(d))
	}
	require.Equal(t, maxRuns, tb.UnicastRuns())
	check(maxRuns)
	tb.SetUnicast(maxRuns, mask(maxRuns))
	require.Zero(t, tb.UnicastRuns())
	require.NotNil(t, tb.ucIdx)
	check(maxRuns + 1)
	for d := uint32(maxRuns + 1); d < 300; d++ {
		tb.SetUnicast(d, mask(d))
	}
	require.Nil(t, tb.ucIdx)
	require.NotNil(t, tb.ucWide)
	check(300)
}
