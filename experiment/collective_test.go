package experiment_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

var collectives = []string{"reduce", "allreduce", "barrier", "broadcast"}

// Every collective pattern runs to completion on one switch, with both
// credit modes, integer and exact float reductions; the results match the
// functional model (Result.Error would say otherwise) and completion_ns is
// completion_cycles at the clock period.
func TestCollectivePatterns(t *testing.T) {
	for _, pat := range collectives {
		for _, extra := range [][]string{
			{"network.ports=4"},
			{"network.ports=16", "network.credit_mode=per-crosspoint", "combine.type=float64", "traffic.message_bytes=2000"},
			{"network.ports=8", "network.inputs=5", "combine.op=max", "combine.type=int32", "combine.elements_per_cycle=4", "packet.bytes=64"},
			{"network.ports=12", "network.combine_units=4", "combine.type=float64", "network.credit_mode=per-crosspoint"},
			{"network.ports=7", "network.inputs=6", "network.combine_units=8", "combine.op=xor", "combine.type=uint64"},
			{"network.ports=10", "network.combine_units=3", "combine.type=float64", "combine.float_mode=two-phase", "traffic.message_bytes=700", "packet.bytes=128"},
			{"network.ports=5", "combine.type=float64", "combine.float_mode=two-phase", "network.credit_mode=per-crosspoint"},
		} {
			if pat != "reduce" && pat != "allreduce" { // no arithmetic to set
				extra = slices.DeleteFunc(slices.Clone(extra), func(s string) bool {
					return strings.HasPrefix(s, "combine.") && !strings.HasPrefix(s, "combine.elements_per_cycle")
				})
			}
			name := fmt.Sprint(pat, extra)
			cfg := configWith(t, append([]string{"traffic.pattern=" + pat}, extra...)...)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(t, err, name)
			require.Empty(t, r.Error, name)
			require.True(t, r.Stable, name)
			require.Positive(t, r.CompletionCycles, name)
			require.InDelta(t, float64(r.CompletionCycles)*4, r.CompletionNS, 1e-9, name) // 250 MHz
		}
	}
}

// Time skipping off, always-eval and parallel evaluation give the same
// collective result and the same waveform (the combine unit's sleep claims
// are exact).
func TestCollectiveKernelModesAgree(t *testing.T) {
	for i, pat := range append(collectives, "allreduce") {
		cfg := configWith(t, "traffic.pattern="+pat, "network.ports=6", "traffic.message_bytes=1000", "packet.bytes=128", "combine.elements_per_cycle=3")
		if i == len(collectives) {
			cfg = configWith(t, "traffic.pattern="+pat, "network.ports=9", "network.combine_units=3", "traffic.message_bytes=1000", "packet.bytes=128")
		}
		kernelModesAgree(t, pat, cfg)
	}
}

// The two passes of a two-phase float sum (the member's NIC reacting to the
// pass-0 result) keep the kernel modes in agreement too.
func TestCollectiveTwoPhaseKernelModesAgree(t *testing.T) {
	for _, set := range [][]string{
		{"traffic.pattern=reduce", "network.ports=6"},
		{"traffic.pattern=allreduce", "network.ports=6", "network.credit_mode=per-crosspoint"},
		{"traffic.pattern=reduce", "network.ports=9", "network.combine_units=3"},
		{"traffic.pattern=allreduce", "network.ports=9", "network.combine_units=4"},
	} {
		cfg := configWith(t, append([]string{"combine.type=float64", "combine.float_mode=two-phase", "traffic.message_bytes=1000",
			"packet.bytes=128", "combine.elements_per_cycle=3"}, set...)...)
		kernelModesAgree(t, fmt.Sprint(set), cfg)
	}
}

func kernelModesAgree(t *testing.T, pat string, cfg config.Config) {
	t.Helper()
	{
		res, traces := map[string]experiment.Result{}, map[string]string{}
		for name, setup := range map[string]func(*rtl.Sim){
			"reference":   func(*rtl.Sim) {},
			"no skipping": func(s *rtl.Sim) { s.SetSkipping(false) },
			"always eval": func(s *rtl.Sim) { s.SetAlwaysEval(true) },
			"parallel":    func(s *rtl.Sim) { s.SetParallel(2); s.SetParallelThreshold(1) },
		} {
			n, err := experiment.Unbuilt(experiment.Collective, cfg)
			require.NoError(t, err)
			setup(n.Sim)
			require.NoError(t, n.Sim.Build())
			var buf bytes.Buffer
			require.NoError(t, n.Trace(&buf, ""))
			r := n.Run()
			require.NoError(t, n.Sim.EndTrace())
			n.Sim.Close()
			require.Empty(t, r.Error, "%s %s", pat, name)
			res[name], traces[name] = wallFree(r, true), buf.String()
		}
		for name := range res {
			require.Equal(t, res["reference"], res[name], "%s: %s changed the result", pat, name)
			require.Equal(t, traces["reference"], traces[name], "%s: %s changed the VCD", pat, name)
		}
		if pat == "reduce" {
			f, err := vcd.Parse(bytes.NewReader([]byte(traces["reference"])))
			require.NoError(t, err)
			require.NotEmpty(t, f.History("top.sw.combine(0).alu_busy"))
		}
	}
}

// A faster ALU or a smaller message completes a reduction sooner.
func TestCollectiveCompletionScales(t *testing.T) {
	run := func(sets ...string) uint64 {
		cfg := configWith(t, append([]string{"traffic.pattern=reduce", "network.ports=8"}, sets...)...)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r.CompletionCycles
	}
	slow, fast := run("traffic.message_bytes=8192"), run("traffic.message_bytes=8192", "combine.elements_per_cycle=32")
	require.Less(t, fast, slow)
	require.Less(t, run("traffic.message_bytes=64"), run("traffic.message_bytes=4096"))
}

// A large reduction on a 32-port switch completes sooner with 5 combine
// units (the hierarchical tree: four leaves of 8 ports, one root) than with
// one, which stalls on every packet (the OQ-router paper §3.2, Fig. 16).
func TestCollectiveTreeBeatsSingleUnit(t *testing.T) {
	run := func(units string) experiment.Result {
		cfg := configWith(t, "traffic.pattern=reduce", "network.ports=32", "traffic.message_bytes=8192", "network.combine_units="+units)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r
	}
	one, five := run("1"), run("5")
	t.Logf("32 ports, 8 KiB reduce: 1 unit %d cycles, 5 units %d cycles", one.CompletionCycles, five.CompletionCycles)
	require.Less(t, five.CompletionCycles*2, one.CompletionCycles)
}

// twoPhaseRun builds and runs a two-phase float sum with the contributions
// of fill; member i starts after start(i) cycles and answers every pass-0
// result start(i) cycles late, so start sets the arrival orders of both
// passes at the combine units.
func twoPhaseRun(t require.TestingT, cfg config.Config, fill func(node, s int, el []uint64), start func(i int) uint64) *experiment.CollectiveNet {
	n, err := experiment.Unbuilt(experiment.CollectiveData(fill), cfg)
	require.NoError(t, err)
	for i, m := range n.Members {
		m.ReactDelay = start(i)
		m.At = make([]uint64, len(m.Pkts))
		for j := range m.At {
			m.At[j] = start(i)
		}
	}
	require.NoError(t, n.Sim.Build())
	r := n.Run()
	n.Sim.Close()
	require.Empty(t, r.Error)
	require.True(t, r.Stable)
	return n
}

// receivers of the run's result: the root of a reduce, every input of an
// allreduce.
func receivers(cfg config.Config) []int {
	if cfg.Traffic.Pattern == config.PatternReduce {
		return []int{0}
	}
	r := make([]int, cfg.Network.Inputs)
	for i := range r {
		r[i] = i
	}
	return r
}

// twoPhaseWant is the functional model per packet: alu.TwoPhaseSum of the
// members' contributions, element by element.
func twoPhaseWant(n *experiment.CollectiveNet, nodes int) [][]uint64 {
	var want [][]uint64
	for node := 0; node < nodes; node++ {
		for s, el := range n.Contribution(node) {
			if s == len(want) {
				want = append(want, make([]uint64, len(el)))
			}
		}
	}
	for s := range want {
		for e := range want[s] {
			var xs []float64
			for node := 0; node < nodes; node++ {
				if c := n.Contribution(node); c != nil {
					xs = append(xs, math.Float64frombits(c[s][e]))
				}
			}
			want[s][e] = math.Float64bits(alu.TwoPhaseSum(xs))
		}
	}
	return want
}

// Two-phase reduce and allreduce on random switches (2–16 ports, 1–5
// combine units) with adversarial contributions (exponents far apart,
// zeros of both signs, cancelling pairs) give every receiver
// alu.TwoPhaseSum of the contributions, bit for bit, whatever order the
// members' packets reach the units in (members in port order and reversed,
// in both passes).
func TestCollectiveTwoPhaseMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ports := rapid.IntRange(2, 16).Draw(rt, "ports")
		units := rapid.IntRange(1, min(5, ports+1)).Draw(rt, "units")
		pat := rapid.SampledFrom([]string{"reduce", "allreduce"}).Draw(rt, "pattern")
		inputs := rapid.IntRange(2, ports).Draw(rt, "inputs")
		msg := rapid.IntRange(8, 1200).Draw(rt, "message_bytes")
		pkt := rapid.SampledFrom([]string{"64", "256", "2048"}).Draw(rt, "packet_bytes")
		cm := rapid.SampledFrom([]string{"min-free", "per-link", "per-crosspoint"}).Draw(rt, "credit_mode")
		seed := rapid.Uint64().Draw(rt, "data_seed")
		gap := uint64(rapid.IntRange(1, 40).Draw(rt, "gap"))
		cfg := configWith(rt, "traffic.pattern="+pat, fmt.Sprint("network.ports=", ports), fmt.Sprint("network.inputs=", inputs),
			fmt.Sprint("network.combine_units=", units), fmt.Sprint("traffic.message_bytes=", msg), "packet.bytes="+pkt,
			"network.credit_mode="+cm, "combine.type=float64", "combine.float_mode=two-phase")
		fill := func(node, s int, el []uint64) {
			r := rand.New(rand.NewPCG(seed, uint64(node)<<20|uint64(s)))
			for i := range el {
				var x float64
				switch r.IntN(8) {
				case 0:
					x = 0
				case 1:
					x = math.Copysign(0, -1)
				case 2: // cancels node−1's element when it drew the same
					x = -math.Ldexp(1, r.IntN(4))
				case 3:
					x = math.Ldexp(1, r.IntN(4))
				default:
					x = r.NormFloat64() * math.Ldexp(1, r.IntN(400)-200)
				}
				el[i] = math.Float64bits(x)
			}
		}
		fwd := twoPhaseRun(rt, cfg, fill, func(i int) uint64 { return uint64(i) * gap })
		rev := twoPhaseRun(rt, cfg, fill, func(i int) uint64 { return uint64(ports-1-i) * gap })
		want := twoPhaseWant(fwd, inputs)
		for _, o := range receivers(cfg) {
			require.Equal(rt, want, fwd.Results(o), "port %d", o)
			require.Equal(rt, want, rev.Results(o), "port %d, reversed arrivals", o)
		}
		for _, u := range fwd.Sw.Units() {
			require.Zero(rt, u.Live())
		}
	})
}

// Two-phase loses what lies below the alignment unit (alu.TwoPhaseGuard
// bits under the ulp of the largest contribution): 1, 2^-53 and 2^-100
// from three members sum to 1 (1 + 2^-53 is a tie, to even), while the
// exact mode rounds 1 + 2^-53 + 2^-100 up to 1 + 2^-52.
func TestCollectiveTwoPhaseLoses(t *testing.T) {
	xs := []float64{1, math.Ldexp(1, -53), math.Ldexp(1, -100)}
	for _, set := range [][]string{
		{"traffic.pattern=allreduce", "network.ports=3"},
		{"traffic.pattern=reduce", "network.ports=4"}, // root 0, members 1..3
		{"traffic.pattern=reduce", "network.ports=4", "network.combine_units=3"},
	} {
		reduce := set[0] == "traffic.pattern=reduce"
		fill := func(node, s int, el []uint64) {
			if reduce {
				node--
			}
			el[0] = math.Float64bits(xs[node])
		}
		got := map[string]float64{}
		for _, mode := range []string{"two-phase", "exact"} {
			cfg := configWith(t, append([]string{"combine.type=float64", "combine.float_mode=" + mode, "traffic.message_bytes=8"}, set...)...)
			n := twoPhaseRun(t, cfg, fill, func(int) uint64 { return 0 })
			for _, o := range receivers(cfg) {
				got[mode] = math.Float64frombits(n.Results(o)[0][0])
				require.Equal(t, got[mode], math.Float64frombits(n.Results(0)[0][0]))
			}
		}
		require.Equal(t, 1.0, got["two-phase"], set)
		require.Equal(t, 1+math.Ldexp(1, -52), got["exact"], set)
		require.Equal(t, alu.TwoPhaseSum(xs), got["two-phase"])
	}
}

// Two-phase costs two passes and three words per element on the links
// against exact's one pass (charged 8 bytes per element): the figures of a
// 4 KiB allreduce on 8 and 32 ports, one combine unit.
func TestCollectiveTwoPhaseCost(t *testing.T) {
	for _, ports := range []string{"8", "32"} {
		cycles := map[string]uint64{}
		for _, mode := range []string{"two-phase", "exact"} {
			cfg := configWith(t, "traffic.pattern=allreduce", "network.ports="+ports, "traffic.message_bytes=4096",
				"combine.type=float64", "combine.float_mode="+mode)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(t, err)
			require.Empty(t, r.Error)
			cycles[mode] = r.CompletionCycles
		}
		t.Logf("%s ports, 4 KiB allreduce: two-phase %d cycles, exact %d cycles", ports, cycles["two-phase"], cycles["exact"])
		require.Greater(t, cycles["two-phase"], cycles["exact"])
	}
}
