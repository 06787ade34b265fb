package fattree

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// uniformNet is a fat-tree with a source and a sink per node, uniform
// traffic at load, births stopping at stop.
func uniformNet(t testing.TB, ports, nodes, xp int, load float64, stop uint64) (*rtl.Sim, *Net, []*traffic.Source, []*traffic.Sink) {
	// The paper's timing at 4 ns cycles: 256 B at 10 Gb/s ≈ 52 cycles,
	// d = 5, S = 23.
	const cyc = 52
	sim := rtl.NewSim(rtl.Options{Seed: 11})
	net, err := New(sim.Top(), Params{K: ports, Nodes: nodes, Switch: swParams(xp, 23), LinkDelay: 5})
	if err != nil {
		t.Fatalf("%v", err)
	}
	var srcs []*traffic.Source
	var sinks []*traffic.Sink
	for i := 0; i < nodes; i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(xp))
		src.Proc = traffic.Bernoulli{Rate: load / cyc}
		src.Pat = traffic.Uniform{N: nodes}
		src.Bytes, src.Cycles, src.StopAt = 256, cyc, stop
		src.Win = traffic.Window{Start: stop / 4, End: stop}
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win = src.Win
		net.ConnectNode(i, src.Tx, snk.Rx)
		srcs, sinks = append(srcs, src), append(sinks, snk)
	}
	return sim, net, srcs, sinks
}

func drained(sim *rtl.Sim, stop uint64, srcs []*traffic.Source, sinks []*traffic.Sink) func() bool {
	return func() bool {
		if sim.Now() <= stop {
			return false
		}
		var born, got uint64
		for _, s := range srcs {
			born += s.Born
		}
		for _, s := range sinks {
			got += s.Received
		}
		return got >= born
	}
}

// Both 256-node fat-trees of the issue build, carry uniform traffic at load
// 0.5 with credits conserved, and drain.
func TestFatTree256(t *testing.T) {
	for _, ports := range []int{8, 32} {
		t.Run(fmt.Sprint(ports, "-port"), func(t *testing.T) {
			const stop = 4_000
			sim, net, srcs, sinks := uniformNet(t, ports, 256, 2, 0.5, stop)
			t.Logf("%d-ary %d-tree: %d levels of %d switches", net.Arity(), net.Levels(), net.Levels(), net.PerLevel())
			h := &tb.Harness{Sim: sim, Done: drained(sim, stop, srcs, sinks), Check: net.Err,
				Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error { return net.CheckCredits(nil) }}}}
			tb.Run(t, h, 200_000)
		})
	}
}

// A trace glob picks one switch by name.
func TestTraceOneLeaf(t *testing.T) {
	sim, _, _, _ := uniformNet(t, 8, 64, 2, 0.3, 500)
	if err := sim.Build(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := sim.NewTraceWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Trace(w, "top.leaf(3).*"); err != nil {
		t.Fatal(err)
	}
	sigs := sim.TracedSignals()
	if len(sigs) == 0 {
		t.Fatal("top.leaf(3).* traces nothing")
	}
	for _, s := range sigs {
		if !strings.HasPrefix(s.Path, "top.leaf(3).") {
			t.Fatalf("top.leaf(3).* traces %s", s.Path)
		}
	}
	sim.Run(2_000)
	if err := sim.EndTrace(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d signals, %d bytes of VCD", len(sigs), buf.Len())
}

// BenchmarkFatTree256: uniform load 0.5 on the 256-node fat-trees (8-port:
// 4-ary 4-tree; 32-port: 16-ary 2-tree), 4-packet crosspoints; reports
// simulated cycles and delivered packets per wall-second (no NIC yet).
func BenchmarkFatTree256(b *testing.B) {
	for _, ports := range []int{8, 32} {
		b.Run(fmt.Sprint(ports, "-port"), func(b *testing.B) {
			for b.Loop() {
				const stop = 50_000
				sim, _, srcs, sinks := uniformNet(b, ports, 256, 4, 0.5, stop)
				if err := sim.Build(); err != nil {
					b.Fatal(err)
				}
				var m0 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				if !sim.RunUntil(drained(sim, stop, srcs, sinks), 1_000_000) {
					b.Fatal("did not drain")
				}
				wall := time.Since(start).Seconds()
				var got uint64
				for _, s := range sinks {
					got += s.Received
				}
				b.ReportMetric(float64(sim.Now())/wall, "cycles/s")
				b.ReportMetric(float64(got)/wall, "pkts/s")
			}
		})
	}
}
