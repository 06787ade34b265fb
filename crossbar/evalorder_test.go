package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// The crossbar's blocks do not depend on the order in which a cycle's
// components are evaluated (rtl.Sim.SetEvalOrder): two switches in a row,
// the first's outputs 2 and 3 the adaptive candidates for every
// destination (their published credits read by its inputs in the cycle,
// before or after the output takes its own) and the second's inputs
// behind links of 2 and 13 cycles, deliver every packet at the same
// cycle in three shuffled orders as in the default one. The second
// switch returns its credits as its outputs send (Schedule on the credit
// line, per-link; released early, min-free), which puts them on the line
// in the middle of a cycle, before or after the first switch's input
// looks at it and its output takes them; on one worker and on two.
func TestEvalOrderChangesNothing(t *testing.T) {
	for _, mode := range []credit.Mode{credit.PerLink, credit.MinFree} {
		for _, workers := range []int{1, 2} {
			ref, _ := twoSwitches(t, mode, workers, 0)
			n := 0
			for _, l := range ref {
				n += len(l)
			}
			require.Greater(t, n, 2000, "%s, %d workers", mode, workers)
			for _, shuffle := range []uint64{1, 2, 3} {
				got, _ := twoSwitches(t, mode, workers, shuffle)
				require.Equal(t, ref, got, "%s, %d workers, order %d: deliveries differ from the default order's", mode, workers, shuffle)
			}
		}
	}
}

// twoSwitches runs four sources through switch a (adaptive outputs 2 and
// 3) and switch b to four sinks until every packet born is delivered, and
// returns the sinks' logs and the Sim's evaluations; shuffle, if not 0,
// seeds a shuffle of each cycle's evaluation order.
func twoSwitches(t *testing.T, mode credit.Mode, workers int, shuffle uint64) ([][]traffic.Delivery, uint64) {
	const buf, cyc, stop = 3, 8, 12_000
	sim := rtl.NewSim(rtl.Options{Seed: 5})
	if workers > 1 {
		sim.SetParallel(workers)
		sim.SetParallelThreshold(1)
	}
	if shuffle != 0 {
		sim.SetEvalOrder(rtl.Shuffled(shuffle))
	}
	p := Params{Ports: 4, XPPackets: buf, SwitchDelay: 3, CreditMode: mode, FanoutSplitting: true}
	pa := p
	pa.AdaptiveCredits, pa.AdaptiveInputs = 1<<2|1<<3, 1<<4-1
	a, err := New(sim.Top(), "a", pa)
	require.NoError(t, err)
	b, err := New(sim.Top(), "b", p)
	require.NoError(t, err)
	link.Connect(a.Out(2), b.In(0), 2)
	link.Connect(a.Out(3), b.In(1), 13)
	var srcs []*traffic.Source
	var sinks []*traffic.Sink
	for i := 0; i < 4; i++ {
		a.Table.SetUnicast(uint32(i), 1<<2|1<<3)
		b.Table.SetUnicast(uint32(i), 1<<uint(i))
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, buf)
		src.Pat, src.Bytes, src.Cycles, src.StopAt = traffic.Uniform{N: 4}, 64, cyc, stop
		src.Proc = traffic.Bernoulli{Rate: 0.45 / cyc}
		link.Connect(src.Tx, a.In(i), 2)
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Record = true
		link.Connect(b.Out(i), snk.Rx, 1+uint64(i))
		srcs, sinks = append(srcs, src), append(sinks, snk)
		if i >= 2 {
			continue
		}
		// b's inputs 2 and 3 and a's outputs 0 and 1 are idle.
		idleSrc := traffic.NewSource(sim.Top(), rtl.Idx("idle_src", i), uint32(i), credit.PerLink, 1, buf)
		idleSrc.Pat, idleSrc.Bytes, idleSrc.Cycles, idleSrc.StopAt = traffic.Uniform{N: 4}, 64, cyc, 0
		idleSrc.Proc = traffic.Bernoulli{Rate: 0}
		link.Connect(idleSrc.Tx, b.In(2+i), 2)
		idleSnk := traffic.NewSink(sim.Top(), rtl.Idx("idle_dst", i), uint32(i))
		link.Connect(a.Out(i), idleSnk.Rx, 2)
	}
	h := &tb.Harness{Sim: sim,
		Done: func() bool {
			var born, got uint64
			for i := range srcs {
				born += srcs[i].Born
				got += sinks[i].Received
			}
			return sim.Now() > stop && got == born
		},
		Monitors: []tb.Monitor{{Name: "switch errors", Check: func() error {
			if err := a.Err(); err != nil {
				return err
			}
			return b.Err()
		}}},
	}
	tb.Run(t, h, 1_000_000)
	var logs [][]traffic.Delivery
	for _, s := range sinks {
		logs = append(logs, s.Log)
	}
	evals := sim.Stats().Evals
	sim.Close()
	return logs, evals
}
