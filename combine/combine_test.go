package combine_test

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
)

// plan is a drawn test: the switch, the collectives and every member's
// send times, so the same run can be built twice (lazy and always-eval).
type plan struct {
	cfg   netCfg
	colls []*coll
	start map[[2]int]uint64 // (collective, member) -> first send cycle
	gap   map[[2]int]uint64
}

var intOps = []alu.Op{alu.Sum, alu.Min, alu.Max, alu.And, alu.Or, alu.Xor}
var intTypes = []alu.Type{alu.Int32, alu.Int64, alu.Uint64}

func drawPlan(t *rapid.T, spec alu.Spec, kinds []string, elem func(t *rapid.T, label string) uint64) *plan {
	k := rapid.IntRange(2, 16).Draw(t, "ports")
	mode := credit.PerLink
	if rapid.Bool().Draw(t, "per_xp") {
		mode = credit.PerCrosspoint
	}
	c := netCfg{
		ports: k, xp: rapid.IntRange(1, 4).Draw(t, "xp"), rate: rapid.IntRange(1, 8).Draw(t, "rate"),
		delay: uint64(rapid.IntRange(1, 3).Draw(t, "delay")), swDel: uint64(rapid.IntRange(1, 3).Draw(t, "sw_delay")),
		spec: spec, mode: mode, units: rapid.IntRange(1, min(6, k+1)).Draw(t, "units"),
	}
	pl := &plan{cfg: c, start: map[[2]int]uint64{}, gap: map[[2]int]uint64{}}
	nc := rapid.IntRange(1, 4).Draw(t, "collectives")
	for ci := 0; ci < nc; ci++ {
		kind := rapid.SampledFrom(kinds).Draw(t, "kind")
		cl := &coll{kind: kind, addr: uint32(100 + ci), root: -1, data: map[int][][]uint64{},
			packets: rapid.IntRange(1, 3).Draw(t, "packets")}
		perm := rapid.Permutation(seq(k)).Draw(t, "ports_perm")
		switch kind {
		case "reduce":
			cl.root = perm[0]
			cl.members = perm[1 : 1+rapid.IntRange(1, k-1).Draw(t, "members")]
		case "broadcast":
			cl.members = perm[:rapid.IntRange(2, k).Draw(t, "members")]
		default:
			cl.members = perm[:rapid.IntRange(1, k).Draw(t, "members")]
		}
		for s := 0; s < cl.packets; s++ {
			n := rapid.IntRange(1, 6).Draw(t, "elements")
			for _, p := range cl.members {
				el := make([]uint64, n)
				for i := range el {
					el[i] = elem(t, "elem")
				}
				cl.data[p] = append(cl.data[p], el)
			}
		}
		for _, p := range cl.members {
			pl.start[[2]int{ci, p}] = uint64(rapid.IntRange(0, 60).Draw(t, "start"))
			pl.gap[[2]int{ci, p}] = uint64(rapid.IntRange(0, 20).Draw(t, "gap"))
		}
		pl.colls = append(pl.colls, cl)
	}
	return pl
}

func seq(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// buildPlan elaborates the plan's switch and scripts; it returns the net and
// the number of packets the sinks must receive.
func buildPlan(pl *plan, always bool) (*net, int, error) {
	c := pl.cfg
	c.always = always
	n, err := build(c)
	if err != nil {
		return nil, 0, err
	}
	want := 0
	for ci, cl := range pl.colls {
		n.program(cl)
		src := cl.members
		if cl.kind == "broadcast" {
			src = cl.members[:1]
		}
		for _, p := range src {
			if err := n.schedule(cl, c.spec, p, pl.start[[2]int{ci, p}], pl.gap[[2]int{ci, p}]); err != nil {
				return nil, 0, err
			}
		}
		want += cl.packets * len(n.receivers(cl))
	}
	return n, want, nil
}

// check verifies every collective's deliveries against the functional model.
func check(t require.TestingT, n *net, pl *plan) {
	require.Zero(t, n.live(), "state entries leaked")
	require.NoError(t, n.sw.Err())
	for _, cl := range pl.colls {
		// Barrier: the latest head sent per sequence number.
		last := map[uint16]uint64{}
		for _, p := range cl.members {
			for _, pk := range n.members[p].pk {
				if pk.Dst == cl.addr && pk.Sent >= last[pk.Seq] {
					last[pk.Seq] = pk.Sent
				}
			}
		}
		for _, o := range n.receivers(cl) {
			d := n.deliveries(o, cl.addr)
			require.Len(t, d, cl.packets, "%s %d at port %d", cl.kind, cl.addr, o)
			for s, g := range d {
				require.EqualValues(t, s, g.P.Seq, "%s %d at port %d", cl.kind, cl.addr, o)
				switch cl.kind {
				case "reduce":
					require.Equal(t, packet.Reduce, g.P.Op)
				case "broadcast":
					require.Equal(t, packet.Broadcast, g.P.Op)
					continue
				default:
					require.Equal(t, packet.Broadcast, g.P.Op, "%s result", cl.kind)
				}
				if cl.kind == "barrier" {
					require.Nil(t, g.P.Payload)
					require.Greater(t, g.At, last[g.P.Seq], "barrier %d released at port %d before the last arrival", cl.addr, o)
					continue
				}
				want, err := expect(cl, pl.cfg.spec, s)
				require.NoError(t, err)
				out := make([]uint64, len(want))
				require.NoError(t, pl.cfg.spec.Decode(out, g.P.Payload, nil))
				require.Equal(t, want, out, "%s %d packet %d at port %d", cl.kind, cl.addr, s, o)
			}
		}
	}
}

// TestCollectivesRandom: random switch sizes, member sets, arrival orders and
// delays, integer ops, several collectives (reduce, allreduce, barrier,
// broadcast) in flight at once with different addresses: every result equals
// the functional model's fold, barriers never release early, no state entry
// leaks, credits are conserved on every link every cycle, and the run is
// identical with every component evaluated every cycle (the unit's sleep
// claims are exact).
func TestCollectivesRandom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := alu.Spec{Op: rapid.SampledFrom(intOps).Draw(t, "op"), Type: rapid.SampledFrom(intTypes).Draw(t, "type")}
		pl := drawPlan(t, spec, []string{"reduce", "allreduce", "barrier", "broadcast"}, func(t *rapid.T, l string) uint64 {
			return rapid.Uint64().Draw(t, l)
		})
		var runs [2][][]got
		for i, always := range []bool{false, true} {
			n, want, err := buildPlan(pl, always)
			require.NoError(t, err)
			require.NoError(t, n.run(want, 100000))
			check(t, n, pl)
			for _, s := range n.sinks {
				runs[i] = append(runs[i], s.got)
			}
		}
		require.Equal(t, runs[0], runs[1], "lazy and always-eval runs differ")
	})
}

// floatElem draws adversarial float64s: huge and tiny magnitudes, exact
// cancellations, subnormals.
func floatElem(t *rapid.T, l string) uint64 {
	switch rapid.IntRange(0, 4).Draw(t, l+"_kind") {
	case 0:
		return math.Float64bits(rapid.Float64Range(-1e308, 1e308).Draw(t, l))
	case 1:
		return math.Float64bits(rapid.Float64Range(-1e-300, 1e-300).Draw(t, l))
	case 2:
		return math.Float64bits(float64(rapid.IntRange(-1000, 1000).Draw(t, l)) * 0.1)
	case 3:
		return math.Float64bits(math.Ldexp(1, rapid.IntRange(-1074, 1023).Draw(t, l)))
	}
	return math.Float64bits(rapid.Float64().Draw(t, l))
}

// TestExactFloatOrderIndependent: an exact-mode float64 reduce/allreduce
// gives the exactly rounded sum (alu.ExactSum over all contributions) and
// the same bits whatever the arrival order (two runs, different send times).
func TestExactFloatOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Exact}
		pl := drawPlan(t, spec, []string{"reduce", "allreduce"}, floatElem)
		n, want, err := buildPlan(pl, false)
		require.NoError(t, err)
		require.NoError(t, n.run(want, 200000))
		check(t, n, pl)
		// Exactly rounded sums, independent of the model's fold.
		for _, cl := range pl.colls {
			o := n.receivers(cl)[0]
			for s, g := range n.deliveries(o, cl.addr) {
				out := make([]uint64, len(cl.data[cl.members[0]][s]))
				require.NoError(t, spec.Decode(out, g.P.Payload, nil))
				for i := range out {
					var x alu.ExactSum
					for _, p := range cl.members {
						x.Add(math.Float64frombits(cl.data[p][s][i]))
					}
					require.Equal(t, math.Float64bits(x.Float64()), out[i], "element %d", i)
				}
			}
		}
		// Reversed arrival order: every member's start time mirrored.
		first := map[uint32][]got{}
		for _, cl := range pl.colls {
			first[cl.addr] = n.deliveries(n.receivers(cl)[0], cl.addr)
		}
		for key, v := range pl.start {
			pl.start[key] = 60 - v
		}
		n2, want2, err := buildPlan(pl, false)
		require.NoError(t, err)
		require.NoError(t, n2.run(want2, 200000))
		for _, cl := range pl.colls {
			d := n2.deliveries(n2.receivers(cl)[0], cl.addr)
			require.Len(t, d, len(first[cl.addr]))
			for s := range d {
				require.Equal(t, first[cl.addr][s].P.Payload, d[s].P.Payload, "collective %d packet %d depends on arrival order", cl.addr, s)
			}
		}
	})
}

// TestNaiveFloatDependsOnOrder: the naive float sum of {1e16, 1, 1} at a
// root differs with the arrival order (the problem Exact solves).
func TestNaiveFloatDependsOnOrder(t *testing.T) {
	spec := alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Naive}
	res := map[float64]bool{}
	for _, order := range [][3]uint64{{0, 40, 80}, {80, 0, 40}} {
		cl := &coll{kind: "reduce", addr: 7, members: []int{0, 1, 2}, root: 3, packets: 1, data: map[int][][]uint64{
			0: {{math.Float64bits(1e16)}}, 1: {{math.Float64bits(1)}}, 2: {{math.Float64bits(1)}}}}
		n, err := build(netCfg{ports: 4, xp: 2, rate: 1, delay: 1, swDel: 1, spec: spec})
		require.NoError(t, err)
		n.program(cl)
		for i, p := range cl.members {
			require.NoError(t, n.schedule(cl, spec, p, order[i], 0))
		}
		require.NoError(t, n.run(1, 10000))
		d := n.deliveries(3, 7)
		require.Len(t, d, 1)
		res[math.Float64frombits(d[0].P.Payload[0])] = true
	}
	require.Len(t, res, 2, "naive sums: %v", res)
}

// TestALUStall: a packet of n elements holds the unit ceil(n/rate) cycles,
// so with every member's packet at the unit at once, the result leaves
// (k−1)·ceil(n/rate) cycles after the ALU starts; doubling the rate halves
// the combining time.
func TestALUStall(t *testing.T) {
	spec := alu.Spec{Op: alu.Sum, Type: alu.Int64}
	done := map[int]uint64{}
	for _, rate := range []int{1, 2, 64} {
		cl := &coll{kind: "reduce", addr: 1, root: 0, members: []int{1, 2, 3, 4, 5, 6, 7}, packets: 1, data: map[int][][]uint64{}}
		for _, p := range cl.members {
			cl.data[p] = [][]uint64{make([]uint64, 64)}
		}
		n, err := build(netCfg{ports: 8, xp: 2, rate: rate, delay: 1, swDel: 1, spec: spec})
		require.NoError(t, err)
		n.program(cl)
		for _, p := range cl.members {
			require.NoError(t, n.schedule(cl, spec, p, 0, 0))
		}
		require.NoError(t, n.run(1, 100000))
		done[rate] = n.deliveries(0, 1)[0].At
	}
	// 7 packets of 64 elements: the ALU part is 7·64, 7·32, 7·1 cycles.
	require.Greater(t, done[1], done[2])
	require.Greater(t, done[2], done[64])
	require.InDelta(t, float64(7*32), float64(done[1]-done[2]), 8, fmt.Sprint(done))
}

// TestParamsErrorsNameKeys: bad unit parameters are refused naming the
// field (the experiment layer names the config key).
func TestParamsErrorsNameKeys(t *testing.T) {
	_, err := build(netCfg{ports: 4, xp: 2, rate: 0, delay: 1, swDel: 1, spec: alu.Spec{Op: alu.Sum, Type: alu.Int64}})
	require.ErrorContains(t, err, "combine.Params.ElementsPerCycle: 0 is out of range")
	_, err = build(netCfg{ports: 4, xp: 2, rate: 1, delay: 1, swDel: 1, spec: alu.Spec{Op: alu.Xor, Type: alu.Float64}})
	require.ErrorContains(t, err, "combine.Params.Spec: ")
	// Two-phase float sums take two passes, which the unit does.
	_, err = build(netCfg{ports: 4, xp: 2, rate: 1, delay: 1, swDel: 1, spec: alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.TwoPhase}})
	require.NoError(t, err)
}

// TestTreeBeatsSingleUnit (the OQ-router paper §3.2, Fig. 16): a large reduction on a
// 32-port switch completes sooner with the hierarchical tree of 5 combine
// units (four leaves of 8 ports and a root) than with one unit, which folds
// all 31 contributions itself and stalls on each. Each leaf folds its
// block's packets, the root one partial per leaf.
func TestTreeBeatsSingleUnit(t *testing.T) {
	spec := alu.Spec{Op: alu.Sum, Type: alu.Int64}
	const packets, elems = 4, 64
	done := map[int]uint64{}
	for _, units := range []int{1, 5} {
		cl := &coll{kind: "reduce", addr: 9, root: 0, packets: packets, data: map[int][][]uint64{}}
		for p := 1; p < 32; p++ {
			cl.members = append(cl.members, p)
			for s := 0; s < packets; s++ {
				el := make([]uint64, elems)
				for i := range el {
					el[i] = uint64(p*1000 + s*100 + i)
				}
				cl.data[p] = append(cl.data[p], el)
			}
		}
		n, err := build(netCfg{ports: 32, xp: 4, rate: 1, delay: 1, swDel: 1, spec: spec, units: units})
		require.NoError(t, err)
		n.program(cl)
		for _, p := range cl.members {
			require.NoError(t, n.schedule(cl, spec, p, 0, 0))
		}
		require.NoError(t, n.run(packets, 1_000_000))
		check(t, n, &plan{cfg: netCfg{spec: spec}, colls: []*coll{cl}})
		d := n.deliveries(0, 9)
		done[units] = d[len(d)-1].At
		if units == 5 {
			for j, u := range n.units[:4] {
				want := 8 * packets // ports 8j..8j+7, port 0 (the root) not sending
				if j == 0 {
					want = 7 * packets
				}
				require.EqualValues(t, want, u.Absorbed(), "leaf %d", j)
			}
			require.EqualValues(t, 4*packets, n.units[4].Absorbed(), "root")
		}
	}
	t.Logf("completion: 1 unit %d cycles, 5 units %d cycles", done[1], done[5])
	require.Less(t, done[5]*2, done[1], "5 combine units should at least halve the completion time")
}

// TestTwoPhasePasses: a two-phase float sum at the unit level on random
// switches (1–5 units). Pass 0 (one key word per element, Max) completes
// into a Broadcast to every port of the entry — the root of a reduce too —
// carrying the maximum keys; pass-1 packets (the members' mantissas aligned
// to those keys, sent here with keys the script knows, interleaved with
// pass 0) fold in state of their own and go to the root (reduce) or to
// every member (allreduce), decoding to alu.TwoPhaseSum; no entry leaks,
// lazy and always-eval kernels agree.
func TestTwoPhasePasses(t *testing.T) {
	spec := alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.TwoPhase}
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(2, 16).Draw(rt, "ports")
		units := rapid.IntRange(1, min(5, k+1)).Draw(rt, "units")
		kind := rapid.SampledFrom([]string{"reduce", "allreduce"}).Draw(rt, "kind")
		perm := rapid.Permutation(seq(k)).Draw(rt, "perm")
		cl := &coll{kind: kind, addr: 7, root: -1, data: map[int][][]uint64{}, packets: rapid.IntRange(1, 3).Draw(rt, "packets")}
		if kind == "reduce" {
			cl.root, cl.members = perm[0], perm[1:1+rapid.IntRange(1, k-1).Draw(rt, "members")]
		} else {
			cl.members = perm[:rapid.IntRange(1, k).Draw(rt, "members")]
		}
		sizes := make([]int, cl.packets)
		for s := range sizes {
			sizes[s] = rapid.IntRange(1, 6).Draw(rt, "elements")
		}
		for _, p := range cl.members {
			for _, n := range sizes {
				el := make([]uint64, n)
				for i := range el {
					el[i] = floatElem(rt, "elem")
				}
				cl.data[p] = append(cl.data[p], el)
			}
		}
		// The model: keys (pass-0 result) and sums per packet.
		keys := make([][]uint64, cl.packets)
		want := make([][]uint64, cl.packets)
		for s, n := range sizes {
			keys[s], want[s] = make([]uint64, n), make([]uint64, n)
			for i := 0; i < n; i++ {
				var xs []float64
				for _, p := range cl.members {
					x := math.Float64frombits(cl.data[p][s][i])
					keys[s][i] = max(keys[s][i], alu.TwoPhaseKey(x))
					xs = append(xs, x)
				}
				want[s][i] = math.Float64bits(alu.TwoPhaseSum(xs))
			}
		}
		var dump [2][]string
		for ai, always := range []bool{false, true} {
			n, err := build(netCfg{ports: k, xp: 2, rate: 2, delay: 1, swDel: 1, spec: spec, units: units, always: always})
			require.NoError(rt, err)
			n.program(cl)
			for _, p := range cl.members {
				require.NoError(rt, n.schedule(cl, spec, p, uint64(p), 3))
				m := n.members[p]
				for s := range sizes {
					pk := packet.Packet{ID: packet.MakeID(uint32(p), uint64(len(m.pk))), Src: uint32(p), Dst: cl.addr, Seq: uint16(s), Op: packet.Reduce, Pass: 1}
					pk.Payload = make([]uint64, 2*sizes[s])
					require.NoError(rt, spec.Encode(1, pk.Payload, cl.data[p][s], keys[s]))
					pk.Bytes, pk.Cycles = uint32(8*len(pk.Payload)), uint32(max(1, len(pk.Payload)/8))
					m.pk = append(m.pk, pk)
					m.at = append(m.at, uint64(s))
				}
			}
			entry, _ := n.sw.Table.Collective(cl.addr)
			ext := entry & (1<<uint(k) - 1)
			results := len(n.receivers(cl)) * cl.packets
			require.NoError(rt, n.run(results+bits.OnesCount64(ext)*cl.packets, 100000))
			require.Zero(rt, n.live())
			for o := 0; o < k; o++ {
				var p0, p1 int
				for _, g := range n.deliveries(o, cl.addr) {
					s := int(g.P.Seq)
					dump[ai] = append(dump[ai], fmt.Sprint(o, g.P.Pass, s, g.At, g.P.Payload))
					switch g.P.Pass {
					case 0:
						p0++
						require.Equal(rt, packet.Broadcast, g.P.Op)
						require.Equal(rt, keys[s], g.P.Payload, "port %d packet %d: pass-0 keys", o, s)
					case 1:
						p1++
						out := make([]uint64, sizes[s])
						require.NoError(rt, spec.Decode(out, g.P.Payload, keys[s]))
						require.Equal(rt, want[s], out, "port %d packet %d", o, s)
					}
				}
				if ext&(1<<uint(o)) != 0 {
					require.Equal(rt, cl.packets, p0, "port %d: pass-0 results", o)
				}
				if slices.Contains(n.receivers(cl), o) {
					require.Equal(rt, cl.packets, p1, "port %d: results", o)
				} else {
					require.Zero(rt, p1)
				}
			}
		}
		require.Equal(rt, dump[0], dump[1], "always-eval changed the deliveries")
	})
}
