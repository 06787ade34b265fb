package experiment

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/internal/osmem"
	"github.com/hwcoll/hwcoll/rtl"
)

// benchSwitch runs a single switch at a load for b.N measurement windows of
// 20,000 cycles (after one warm-up) and reports the simulator's speed.
func benchSwitch(b *testing.B, ports int, org string, load float64) {
	cfg := config.Default()
	if err := cfg.Set(fmt.Sprintf("network.ports=%d", ports)); err != nil {
		b.Fatal(err)
	}
	cfg.Network.Organization = org
	cfg.Traffic.Load = load
	cfg.Run.WarmupCycles = 5000
	cfg.Run.MeasureCycles = 20000 * int64(b.N)
	cfg.Run.MaxCycles = 1 << 40
	n, err := Build(Switch, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer n.Sim.Close()
	b.ReportAllocs()
	b.ResetTimer()
	r := n.Run()
	b.StopTimer()
	sec := b.Elapsed().Seconds()
	var delivered uint64
	for _, s := range n.Sinks {
		delivered += s.Received
	}
	b.ReportMetric(float64(r.Cycles)/sec, "cycles/s")
	b.ReportMetric(float64(delivered)/sec, "packets/s")
	b.ReportMetric(float64(2*delivered)/sec, "packet-hops/s")
	b.ReportMetric(float64(r.KernelEvals)/float64(delivered), "evals/packet")
}

func BenchmarkSwitch32Load09(b *testing.B) {
	for _, org := range []string{"oq-xp", "iq-fifo", "voq"} {
		b.Run(org, func(b *testing.B) {
			if _, err := Build(Switch, func() config.Config { c := config.Default(); c.Network.Organization = org; return c }()); err != nil {
				b.Skipf("%s: %v", org, err)
			}
			benchSwitch(b, 32, org, 0.9)
		})
	}
}

// An idle 32-port switch: no traffic at all, the cost of simulated time.
func BenchmarkIdleSwitch32(b *testing.B) {
	cfg := config.Default()
	if err := cfg.Set("network.ports=32"); err != nil {
		b.Fatal(err)
	}
	cfg.Network.Inputs = 1
	cfg.Traffic.Load = 1e-9
	n, err := Build(Switch, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n.Sim.Run(uint64(b.N) * 1_000_000)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/cycle")
	b.ReportMetric(float64(n.Sim.Stats().Evals)/float64(b.N), "evals/Mcycle")
}

// BenchmarkCollective runs one reduce per iteration on an 8- or 32-port
// switch with 1 or 5 combine units (the tree) for messages of 64 B to
// 16 KiB, and reports the completion time and the combine throughput
// (reduction packets folded per wall-second).
func BenchmarkCollective(b *testing.B) {
	for _, ports := range []int{8, 32} {
		for _, units := range []int{1, 5} {
			for _, size := range []int{64, 256, 1024, 4096, 16384} {
				b.Run(fmt.Sprintf("ports=%d/units=%d/bytes=%d", ports, units, size), func(b *testing.B) {
					cfg := config.Default()
					for _, s := range []string{"traffic.pattern=reduce", fmt.Sprintf("network.ports=%d", ports),
						fmt.Sprintf("network.combine_units=%d", units), fmt.Sprintf("traffic.message_bytes=%d", size)} {
						if err := cfg.Set(s); err != nil {
							b.Fatal(err)
						}
					}
					var folded uint64
					var r Result
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						b.StopTimer() // building the netlist and the reference fold is not the unit's work
						n, err := Build(Collective, cfg)
						if err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						r = n.Run()
						b.StopTimer()
						for _, u := range n.Sw.Units() {
							folded += u.Absorbed()
						}
						n.Sim.Close()
						if r.Error != "" {
							b.Fatal(r.Error)
						}
						b.StartTimer()
					}
					b.ReportMetric(float64(r.CompletionCycles), "completion-cycles")
					b.ReportMetric(float64(r.CompletionCycles)*float64(periodPS(cfg))/1000, "completion-ns")
					b.ReportMetric(float64(folded)/b.Elapsed().Seconds(), "reduction-packets/s")
				})
			}
		}
	}
}

// periodPS is the clock period in picoseconds.
func periodPS(cfg config.Config) uint64 { return cfg.Timing().PeriodPS }

// BenchmarkIBMeshAllSource runs the IBA-multicast paper's heaviest
// workload, every node of the 16×16 InfiniBand mesh multicasting 1 KiB to
// every other node (1 VL), by hardware multicast and by unicast copies,
// and reports the wall time of one run (build excluded), packet-hops
// (switch-to-switch and switch-to-host copies) per second and the heap
// per node built (router, host, forwarding tables, the messages).
func BenchmarkIBMeshAllSource(b *testing.B) {
	for _, how := range []string{"hardware", "software"} {
		b.Run(how, func(b *testing.B) {
			var wall, hops, heap float64
			for range b.N {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				cfg := config.Default()
				for _, kv := range []string{"network.topology=ibmesh", "network.dims=16,16", "traffic.pattern=multicast",
					"traffic.sources=0", "traffic.group_percent=100", "traffic.message_bytes=1024", "router.vc_buffer_flits=16",
					"traffic.multicast=" + how, "traffic.software=sequential", "run.max_cycles=100000000"} {
					if err := cfg.Set(kv); err != nil {
						b.Fatal(err)
					}
				}
				n, err := buildIB(cfg, cfg.Timing())
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap = float64(m1.HeapAlloc-m0.HeapAlloc) / 256
				r := n.Run()
				n.Sim.Close()
				if r.Error != "" {
					b.Fatal(r.Error)
				}
				wall += r.WallSeconds
				hops += r.FlitHopsPerS * r.WallSeconds
			}
			b.ReportMetric(wall/float64(b.N), "run-s")
			b.ReportMetric(hops/wall, "packet-hops/s")
			b.ReportMetric(heap, "heap-B/node")
		})
	}
}

// BenchmarkProgramTables runs the WORMulSim paper's Table 1 and 2
// workloads (configs/programs.yaml: an 8×8 mesh, wormhole, 1300 ns
// overheads): one-to-all and all-to-one with 4 to 1024-byte messages, and
// multiple multicast from 1 to 64 sources to 32 destinations with 4-byte
// messages. One op is one whole run, built and run to completion; it
// reports the simulated completion cycles beside the wall time (the paper:
// 0.17–43 s a run on a 99 MHz workstation).
func BenchmarkProgramTables(b *testing.B) {
	cfg0, err := config.Load("../configs/programs.yaml")
	require.NoError(b, err)
	type run struct {
		name string
		sets []string
	}
	var runs []run
	for _, prog := range []string{"one-to-all", "all-to-one"} {
		for _, bytes := range []int{4, 64, 256, 1024} {
			runs = append(runs, run{fmt.Sprintf("table1/%s/bytes=%d", prog, bytes), []string{"traffic.program=" + prog, fmt.Sprintf("traffic.message_bytes=%d", bytes)}})
		}
	}
	for _, s := range []int{1, 16, 32, 64} {
		runs = append(runs, run{fmt.Sprintf("table2/sources=%d", s), []string{"traffic.program=multi-multicast", "traffic.message_bytes=4", "traffic.fanout=32", fmt.Sprintf("traffic.sources=%d", s)}})
	}
	for _, c := range runs {
		b.Run(c.name, func(b *testing.B) {
			cfg := cfg0
			for _, s := range c.sets {
				require.NoError(b, cfg.Set(s))
			}
			var r Result
			for i := 0; i < b.N; i++ {
				var err error
				r, err = Run(cfg, Options{})
				require.NoError(b, err)
				require.Empty(b, r.Error)
			}
			b.ReportMetric(float64(r.CompletionCycles), "sim-cycles")
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/run")
		})
	}
}

// BenchmarkBGLTorus64x32x32 is configs/bgl-torus.yaml as it stands: the
// whole 65,536-node BG/L torus at uniform load 0.05 for 10^5 cycles
// (20,000 warm-up + 80,000 measured, then the drain), built and run as
// hwcoll run does. Goals (docs/performance.md): the 10^5 cycles in
// under 60 s, peak RSS under 2 GiB, the build under 5 s. One op is one
// whole run (about a minute).
func BenchmarkBGLTorus64x32x32(b *testing.B) {
	cfg, err := config.Load("../configs/bgl-torus.yaml")
	require.NoError(b, err)
	const nodes = 64 * 32 * 32
	var build, run, cycles, hops, heap, peak float64
	for b.Loop() {
		runtime.GC()
		require.NoError(b, osmem.ResetPeakRSS())
		start := time.Now()
		r, err := Run(cfg, Options{Started: func(*rtl.Sim) {
			build += time.Since(start).Seconds()
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			heap = max(heap, float64(m.HeapAlloc)/nodes)
		}})
		require.NoError(b, err)
		require.Empty(b, r.Error)
		require.True(b, r.Stable)
		run += r.WallSeconds
		cycles += float64(r.Cycles)
		hops += r.FlitHopsPerS * r.WallSeconds
		rss, err := osmem.PeakRSS()
		require.NoError(b, err)
		peak = max(peak, float64(rss))
	}
	b.ReportMetric(build/float64(b.N), "build-s")
	b.ReportMetric(run/float64(b.N), "run-s")
	b.ReportMetric(cycles/run, "cycles/s")
	b.ReportMetric(hops/run, "packet-hops/s")
	b.ReportMetric(run*1e9/hops, "ns/packet-hop")
	b.ReportMetric(heap, "heap-B/node")
	b.ReportMetric(peak/(1<<20), "peak-rss-MB")
}

// bglTorus is configs/bgl-torus.yaml with sets applied.
func bglTorus(b *testing.B, sets ...string) config.Config {
	cfg, err := config.Load("../configs/bgl-torus.yaml")
	require.NoError(b, err)
	for _, s := range sets {
		require.NoError(b, cfg.Set(s))
	}
	return cfg
}

// BenchmarkBGLTorusAlltoallInOrder8x32x32 is the first 150,000 cycles of
// the all-to-all in node order on 8×32×32 (configs/figures.yaml
// bgl-torus-alltoall-inorder-8x32x32: 32-byte messages, every node
// sending to node+1, node+2, … in turn), cut at run.max_cycles: after the
// first 60,000 cycles the sends pile onto the same links, throughput
// falls and the routers hold full VCs of one-flit packets and many
// waiting heads, a regime the uniform benchmarks never reach (about a
// minute an op). ns/packet-hop is the run's wall time per packet-hop.
func BenchmarkBGLTorusAlltoallInOrder8x32x32(b *testing.B) {
	cfg := bglTorus(b, "network.dims=8,32,32", "traffic.pattern=program", "traffic.program=alltoall",
		"traffic.message_bytes=32", "run.workers=1", "run.max_cycles=150000")
	var run, hops float64
	var r Result
	var err error
	for b.Loop() {
		runtime.GC()
		r, err = Run(cfg, Options{})
		require.NoError(b, err)
		run += r.WallSeconds
		hops += r.FlitHopsPerS * r.WallSeconds
	}
	b.ReportMetric(run/float64(b.N), "run-s")
	b.ReportMetric(run*1e9/hops, "ns/packet-hop")
	b.ReportMetric(float64(r.PacketsDelivered), "delivered")
	b.ReportMetric(float64(r.KernelEvals), "evals")
}

// BenchmarkBGLTorusBroadcast8x32x32 is the speed goal of the torus
// collectives: a 1 MiB broadcast in 3 colours of pipelined deposit-bit
// lines through node ports of six lanes on an 8×32×32 torus (8,192
// nodes, 33.5 M packet deliveries), run as hwcoll run runs it (default
// run.workers). run-s is the run alone, build-s the build; ns/delivery is
// the run's wall time per packet delivered to a node. The goal: run-s +
// build-s under 60 on this machine when it is quiet.
func BenchmarkBGLTorusBroadcast8x32x32(b *testing.B) {
	cfg := bglTorus(b, "network.dims=8,32,32", "traffic.pattern=broadcast", "traffic.multicast=hardware",
		"traffic.message_bytes=1048576", "traffic.colors=3", "router.injection_fifos=6")
	var build, run, delivered float64
	var r Result
	var err error
	for b.Loop() {
		runtime.GC()
		start := time.Now()
		r, err = Run(cfg, Options{Started: func(*rtl.Sim) { build += time.Since(start).Seconds() }})
		require.NoError(b, err)
		require.True(b, r.Stable, r.Error)
		run += r.WallSeconds
		delivered += float64(r.PacketsDelivered)
	}
	b.ReportMetric(build/float64(b.N), "build-s")
	b.ReportMetric(run/float64(b.N), "run-s")
	b.ReportMetric(run*1e9/delivered, "ns/delivery")
	b.ReportMetric(float64(r.CompletionCycles), "sim-cycles")
}

// BenchmarkBGLTorusBroadcastLanes is configs/bgl-torus.yaml's broadcast
// in deposit-bit lines on the midplane (8×8×8, 64 KiB) through a node
// port of one lane and of six (router.injection_fifos), in 1, 3 and 6
// colours: the simulator's cost per packet-hop and the heap per node
// with the lanes' links and port records (one op is one whole run,
// built and run as hwcoll run does).
func BenchmarkBGLTorusBroadcastLanes(b *testing.B) {
	cfg0, err := config.Load("../configs/bgl-torus.yaml")
	require.NoError(b, err)
	const nodes = 8 * 8 * 8
	for _, c := range []struct{ lanes, colours int }{{1, 1}, {1, 6}, {6, 1}, {6, 3}, {6, 6}} {
		b.Run(fmt.Sprintf("lanes=%d/colors=%d", c.lanes, c.colours), func(b *testing.B) {
			cfg := cfg0
			for _, s := range []string{"network.dims=8,8,8", "traffic.pattern=broadcast", "traffic.multicast=hardware",
				"traffic.message_bytes=65536", "run.workers=1", fmt.Sprint("traffic.colors=", c.colours),
				fmt.Sprint("router.injection_fifos=", c.lanes)} {
				require.NoError(b, cfg.Set(s))
			}
			var run, hops, heap float64
			var r Result
			for b.Loop() {
				runtime.GC()
				var m0 runtime.MemStats
				runtime.ReadMemStats(&m0)
				r, err = Run(cfg, Options{Started: func(*rtl.Sim) {
					runtime.GC()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					heap = max(heap, float64(m.HeapAlloc-min(m.HeapAlloc, m0.HeapAlloc))/nodes)
				}})
				require.NoError(b, err)
				require.True(b, r.Stable, r.Error)
				run += r.WallSeconds
				hops += r.FlitHopsPerS * r.WallSeconds
			}
			b.ReportMetric(float64(r.CompletionCycles), "sim-cycles")
			b.ReportMetric(run*1e9/hops, "ns/packet-hop")
			b.ReportMetric(heap, "heap-B/node")
		})
	}
}
