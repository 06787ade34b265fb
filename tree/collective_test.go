package tree

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/rtl"
)

// treeSpecs lists the reductions the tree ALU carries.
func treeSpecs() []alu.Spec {
	var ss []alu.Spec
	for op := alu.Sum; op <= alu.Xor; op++ {
		for ty := alu.Int32; ty <= alu.Float64; ty++ {
			for _, m := range []alu.FloatMode{alu.TwoPhase, alu.Exact} {
				s := alu.Spec{Op: op, Type: ty, Mode: m}
				if _, err := s.Tree(0); err == nil && (m == alu.TwoPhase || s.Op == alu.Sum && s.Type == alu.Float64) {
					ss = append(ss, s)
				}
			}
		}
	}
	return ss
}

type run struct {
	net  *Net
	sim  *rtl.Sim
	coll *Collective
}

// build makes a tree of n compute nodes running one collective, on
// classes (all, reduce) if given.
func build(t require.TestingT, n int, io bool, p Params, kind Kind, spec alu.Spec, elems int, fill func(int, int) uint64, skew func(int) uint64, seed uint64, classes ...int) run {
	sim := rtl.NewSim(rtl.Options{Seed: seed, PeriodPS: 1000})
	s, err := NewShape(n, io)
	require.NoError(t, err)
	net, err := New(sim.Top(), "net", s, p)
	require.NoError(t, err)
	if len(classes) == 2 {
		require.NoError(t, net.UseClasses(classes[0], classes[1]))
	}
	c, err := NewCollective(net, kind, spec, elems, fill, skew)
	require.NoError(t, err)
	return run{net, sim, c}
}

// drive runs until the collective completes, checking credit conservation
// between every pair of cycles.
func (r run) drive(t require.TestingT, max uint64) {
	require.NoError(t, r.sim.Build())
	var cerr error
	r.sim.RunUntil(func() bool {
		if cerr == nil {
			cerr = r.net.CheckCredits()
		}
		return cerr != nil || r.coll.Done()
	}, max)
	require.NoError(t, cerr)
	require.NoError(t, r.coll.Err())
	require.Zero(t, r.net.Errors())
}

func drawFill(t *rapid.T, spec alu.Spec) func(int, int) uint64 {
	seed := rapid.Uint64().Draw(t, "data")
	// Exact tree sums hold finite values only (alu.TreeFixedFrac).
	special := rapid.Bool().Draw(t, "specials") && spec.Mode != alu.Exact
	return func(node, e int) uint64 {
		x := mix(seed ^ uint64(node)<<32 ^ uint64(e))
		if spec.Type == alu.Float64 {
			f := math.Ldexp(float64(int64(x>>11)-1<<52), int(x%60)-80)
			if special && x%97 == 0 {
				f = []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1)}[x%4]
			}
			return math.Float64bits(f)
		}
		return x
	}
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func drawParams(t *rapid.T) Params {
	return Params{
		Cycles:     uint32(rapid.IntRange(1, 80).Draw(t, "cycles")),
		Delay:      uint32(rapid.IntRange(1, 20).Draw(t, "delay")),
		BufPackets: rapid.IntRange(1, 3).Draw(t, "buf"),
		LinkDelay:  uint64(rapid.IntRange(1, 100).Draw(t, "link")),
	}
}

// TestCollectivesMatchFold runs random collectives on random trees with
// random arrival skews: every receiver's result equals the functional
// fold, no barrier releases before the last node entered, credits are
// conserved on every link and VC every cycle.
func TestCollectivesMatchFold(t *testing.T) {
	specs := treeSpecs()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 140).Draw(rt, "n")
		kind := Kind(rapid.IntRange(0, 3).Draw(rt, "kind"))
		spec := rapid.SampledFrom(specs).Draw(rt, "spec")
		elems := rapid.IntRange(1, 80).Draw(rt, "elems")
		maxSkew := rapid.SampledFrom([]int{0, 10, 3000}).Draw(rt, "maxskew")
		skews := rapid.SliceOfN(rapid.IntRange(0, maxSkew), n, n).Draw(rt, "skews")
		classes := rapid.Permutation([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}).Draw(rt, "classes")[:2]
		r := build(rt, n, rapid.Bool().Draw(rt, "io"), drawParams(rt), kind, spec, elems, drawFill(rt, spec),
			func(i int) uint64 { return uint64(skews[i]) }, 1, classes...)
		r.drive(rt, 2_000_000)
		require.Zero(rt, r.coll.Early())
		if kind == Barrier {
			last := 0
			for _, s := range skews {
				last = max(last, s)
			}
			require.GreaterOrEqual(rt, r.coll.Completion(), uint64(last))
		}
	})
}

// TestFloatSumOrderIndependent: the same float64 contributions summed
// two-phase or exactly under different arrival skews (so different
// combining orders in every router) give the same bits at every node, the
// exact sum the correctly rounded one, while naive IEEE additions of the
// same values in different orders do not agree.
func TestFloatSumOrderIndependent(t *testing.T) {
	for _, m := range []alu.FloatMode{alu.TwoPhase, alu.Exact} {
		floatSumOrderIndependent(t, alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: m})
	}
}

func floatSumOrderIndependent(t *testing.T, spec alu.Spec) {
	const n, elems = 33, 5
	fill := func(node, e int) uint64 {
		x := mix(uint64(node)<<8 ^ uint64(e))
		f := math.Ldexp(float64(x>>12), -52+int(x%40)) // magnitudes 1 .. 2^40
		if node%2 == 1 {
			f = -f
		}
		return math.Float64bits(f)
	}
	var first []uint64
	for skew := range uint64(5) {
		r := build(t, n, false, Params{Cycles: 20, Delay: 3, BufPackets: 2, LinkDelay: 2}, Allreduce, spec, elems, fill,
			func(i int) uint64 { return mix(skew<<20^uint64(i)) % 500 }, skew)
		got := make([][]uint64, n)
		r.coll.Observe = func(node int, res []uint64) { got[node] = append(got[node], res...) }
		r.drive(t, 1_000_000)
		for i := range n {
			if first == nil {
				first = got[i]
			}
			require.Equal(t, first, got[i], "skew %d node %d", skew, i)
		}
	}
	if spec.Mode == alu.Exact {
		for e := range elems {
			sum := new(big.Float).SetPrec(4096)
			for i := range n {
				sum.Add(sum, big.NewFloat(math.Float64frombits(fill(i, e))))
			}
			want, _ := sum.Float64() // nearest, ties to even
			require.Equal(t, math.Float64bits(want), first[e], "element %d: the correctly rounded sum", e)
		}
	}
	orders := map[uint64]bool{}
	for o := range uint64(20) {
		var s float64
		for i := range n {
			s += math.Float64frombits(fill(int((uint64(i)*(2*o+1)+o)%n), 0)) // a permutation of the nodes
		}
		orders[math.Float64bits(s)] = true
	}
	require.Greater(t, len(orders), 1, "naive IEEE additions gave the same bits in every order: the values show nothing")
}

// TestCollectivesWithBitErrors: random collectives on random trees whose
// router-to-router links flip bits at rates up to 1e-3 still give every
// receiver the functional fold, conserve credits on every link and VC
// every cycle (packets sent and not yet taken hold theirs), lose nothing,
// and resend every copy that failed its CRC.
func TestCollectivesWithBitErrors(t *testing.T) {
	specs := treeSpecs()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 40).Draw(rt, "n")
		kind := Kind(rapid.IntRange(0, 3).Draw(rt, "kind"))
		spec := rapid.SampledFrom(specs).Draw(rt, "spec")
		p := drawParams(rt)
		p.Retry = link.Retry{
			BER:     math.Pow(10, rapid.Float64Range(-6, -3).Draw(rt, "log10 ber")),
			Window:  rapid.IntRange(1, 8).Draw(rt, "window"),
			Timeout: uint64(rapid.IntRange(1, 6).Draw(rt, "timeout trips")) * (uint64(p.Cycles) + 2*p.LinkDelay),
		}
		r := build(rt, n, rapid.Bool().Draw(rt, "io"), p, kind, spec, rapid.IntRange(1, 40).Draw(rt, "elems"),
			drawFill(rt, spec), nil, 1)
		r.drive(rt, 20_000_000)
		st := r.net.LinkStats()
		require.Zero(rt, st.Lost, "%+v", st)
		require.GreaterOrEqual(rt, st.Retransmits, st.Rejected, "%+v", st)
	})
}

// TestAllreduceResendsOnTheTree: a 64-node allreduce of 16 KB at BER 1e-4
// (a fifth of the tree packets fail their CRC somewhere) is exact, and
// the links really rejected and resent copies.
func TestAllreduceResendsOnTheTree(t *testing.T) {
	spec := treeSpecs()[0]
	p := Params{Cycles: 52, Delay: 4, BufPackets: 2, LinkDelay: 5,
		Retry: link.Retry{BER: 1e-4, Window: 4, Timeout: 4 * (52 + 10)}}
	r := build(t, 64, true, p, Allreduce, spec, 2048, func(node, e int) uint64 { return mix(uint64(node)<<32 | uint64(e)) }, nil, 1)
	r.drive(t, 20_000_000)
	st := r.net.LinkStats()
	require.Zero(t, st.Lost)
	require.NotZero(t, st.Rejected, "%+v", st)
	require.GreaterOrEqual(t, st.Retransmits, st.Rejected, "%+v", st)
}
