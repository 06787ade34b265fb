package scenario

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/vcd"
)

// The root's waveform in tree-allreduce shows the ALU at work: every time
// it starts combining (alu_state 2) with opcode uadd, the result word is
// the sum of the operand words of its three sources (client, both
// children); it waits for late sources (state 1); the class route register
// of class 0 names the three sources as targets too (the root turns the
// result around); VC buffers and credits move within their bounds.
func TestTreeWaveform(t *testing.T) {
	s, ok := Lookup("tree-allreduce")
	require.True(t, ok)
	data, _ := traceScenario(t, s, 7, nil)
	f, err := vcd.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	const r = "top.net.r(0)."
	num := func(name string, at uint64) uint64 {
		v, ok := f.ValueAt(name, at)
		require.True(t, ok, "%s at %d", name, at)
		x, err := strconv.ParseUint(v, 2, 64)
		require.NoError(t, err, "%s = %q", name, v)
		return x
	}
	states, combines := map[string]bool{}, 0
	for _, c := range f.History(r + "alu_state") {
		states[c.Value] = true
		if c.Value != "10" {
			continue
		}
		combines++
		require.Equal(t, uint64(5), num(r+"alu_op", c.Time), "opcode uadd")
		sum := num(r+"alu_in(0).a", c.Time) + num(r+"alu_in(2).a", c.Time) + num(r+"alu_in(3).a", c.Time)
		require.Equal(t, sum, num(r+"alu_out", c.Time), "combine at %d", c.Time)
	}
	require.Equal(t, 3, combines, "one combine per packet of the message")
	require.True(t, states["1"], "the ALU waits for a late source")
	require.Equal(t, uint64(0b1101<<4|0b1101), num(r+"class(0).route", 100), "class 0: client and both children, sources and targets")
	require.Equal(t, uint64(0), num(r+"class(5).route", 100), "unused classes are empty")
	var occ, credits []uint64
	for _, c := range f.History(r + "in(2).vc(0).occ") {
		x, _ := strconv.ParseUint(c.Value, 2, 64)
		occ = append(occ, x)
	}
	for _, c := range f.History(r + "out(2).tx.credit.avail(0)") {
		x, _ := strconv.ParseUint(c.Value, 2, 64)
		credits = append(credits, x)
	}
	require.NotEmpty(t, occ)
	require.LessOrEqual(t, maxOf(occ), uint64(2), "two packets a VC")
	require.Positive(t, maxOf(occ))
	require.Contains(t, credits, uint64(2))
	require.Less(t, credits[len(credits)/2], uint64(2), "credits go down while results flow")
}
