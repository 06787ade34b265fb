package dsmprog

import (
	"math"
	"slices"
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
	"github.com/stretchr/testify/require"
)

func TestBarnesVerifies(t *testing.T) {
	for _, procs := range testProcs {
		for _, lw := range []int{4, 8} {
			// 256 bodies: Verify checks every one against the direct sum.
			_, _, err := dsm.Functional(NewBarnes(256, 3), procs, lw)
			require.NoError(t, err, "%d processors, %d-word lines", procs, lw)
		}
	}
	// Above BarnesCheckAll: a sample against the direct sum.
	b := NewBarnes(700, 4)
	b.Steps = 3
	require.Len(t, b.checked(), BarnesSample)
	_, _, err := dsm.Functional(b, 6, 8)
	require.NoError(t, err)
	// Tiny systems, and more processors than bodies.
	for _, n := range []int{2, 3, 9} {
		_, _, err := dsm.Functional(NewBarnes(n, 5), 16, 4)
		require.NoError(t, err, "%d bodies", n)
	}
}

// The answer does not depend on the processor count or the line size:
// the octree of a point set is unique, the centres of mass are summed in
// octant order and each walk is one processor's, so every body's
// acceleration, velocity and position come out bit for bit the same.
func TestBarnesIndependentOfProcessors(t *testing.T) {
	run := func(procs, lw int) []uint64 {
		b := NewBarnes(300, 8)
		b.Steps = 3
		mem, _, err := dsm.Functional(b, procs, lw)
		require.NoError(t, err)
		var out []uint64
		for i := range b.N {
			out = append(out, mem[b.body(i):b.body(i)+nodeWords]...)
		}
		return out
	}
	want := run(1, 8)
	for _, c := range [][2]int{{2, 8}, {6, 4}, {16, 8}, {5, 1}} {
		require.Equal(t, want, run(c[0], c[1]), "%d processors, %d-word lines", c[0], c[1])
	}
}

// Costzones moves the zones after the first step. The rows published in
// step s hold the cost of each zone's walks in step s: with three steps,
// the rows come from step 1, whose zones were cut from step 0's costs, so
// they come out even, where step 0's equal blocks of bodies do not.
func TestBarnesCostzonesBalance(t *testing.T) {
	const procs = 8
	zoneCosts := func(steps int) []float64 {
		b := NewBarnes(1000, 2)
		b.Steps = steps
		mem, _, err := dsm.Functional(b, procs, 8)
		require.NoError(t, err)
		costs := make([]float64, procs)
		for q := range procs {
			costs[q] = float64(mem[b.bounds+uint64(q)*b.bStride+7])
		}
		return costs
	}
	imbalance := func(c []float64) float64 {
		var sum float64
		for _, x := range c {
			sum += x
		}
		return slices.Max(c) * procs / sum
	}
	blocks, zones := zoneCosts(2), zoneCosts(3)
	t.Logf("max/mean cost: equal blocks %.3f, costzones %.3f", imbalance(blocks), imbalance(zones))
	require.Greater(t, imbalance(blocks), 1.15, "%v", blocks)
	require.Less(t, imbalance(zones), 1.03, "%v", zones)
}

func TestBarnesRefusesBadParameters(t *testing.T) {
	for _, b := range []*Barnes{
		{N: 1, Steps: 1, Theta: 1},
		{N: BarnesMaxBodies + 1, Steps: 1, Theta: 1},
		{N: 10, Steps: 0, Theta: 1},
		{N: 10, Steps: 1, Theta: 0},
	} {
		require.Error(t, b.Setup(dsm.NewSpace(8), 4))
	}
	require.ErrorContains(t, NewBarnes(10, 1).Setup(dsm.NewSpace(8), 0), "processors")
}

// Verify catches: an acceleration off by 1%, a tree with a cell too many,
// a build without locks (bodies lost in races), centres of mass that
// count one octant's mass at half.
func TestBarnesVerifyCatchesMistakes(t *testing.T) {
	b := NewBarnes(200, 6)
	mem, _, err := dsm.Functional(b, 4, 8)
	require.NoError(t, err)
	read := func(a dsm.Addr) uint64 { return mem[a] }
	a := b.body(77) + bAcc + 1
	good := mem[a]
	mem[a] = math.Float64bits(math.Float64frombits(good) * 1.01)
	require.ErrorContains(t, b.Verify(read), "serial Barnes–Hut")
	mem[a] = good
	mem[b.pool]++
	require.ErrorContains(t, b.Verify(read), "cells")
	mem[b.pool]--
	require.NoError(t, b.Verify(read))

	for _, bug := range []string{"nolock", "com"} {
		b := NewBarnes(200, 6)
		b.bug = bug
		_, _, err := dsm.Functional(b, 16, 8)
		require.Error(t, err, bug)
		t.Logf("%s: %v", bug, err)
	}
}

// The Barnes–Hut approximation at Theta 1 against the direct sum, over
// draws of several sizes: every body's error within Tol of its force
// scale, with the margin barnesTol documents, and the median relative
// error within barnesMedianTol. (The figures in barnesTol's comment come
// from this loop run over 200 draws of 2..512 bodies.)
func TestBarnesErrorMargin(t *testing.T) {
	worst, worstMed := 0.0, 0.0
	for _, n := range []int{2, 8, 64, 256, 512} {
		for seed := uint64(1); seed <= 8; seed++ {
			pos, _ := plummer(n, seed)
			mass := make([]float64, n)
			for i := range mass {
				mass[i] = 1 / float64(n)
			}
			tr := newBHTree(pos, mass)
			var rel []float64
			for i := range n {
				g, w := tr.force(i, 1, 0.05), directAcc(pos, mass, i, 0.05)
				e := g.sub(w)
				worst = max(worst, math.Sqrt(e.dot(e))/forceScale(pos, mass, i, 0.05))
				rel = append(rel, math.Sqrt(e.dot(e)/w.dot(w)))
			}
			if n >= barnesMedianMin {
				slices.Sort(rel)
				worstMed = max(worstMed, rel[n/2])
			}
		}
	}
	t.Logf("worst error/S_i %.3f (bound %g), worst median error/|a_i| %.3f (bound %g)", worst, barnesTol, worstMed, barnesMedianTol)
	require.Less(t, worst, barnesTol)
	require.Less(t, worstMed, barnesMedianTol)
}

func TestPlummerDeterministicAndCentred(t *testing.T) {
	p1, v1 := plummer(500, 9)
	p2, v2 := plummer(500, 9)
	require.Equal(t, p1, p2)
	require.Equal(t, v1, v2)
	p3, _ := plummer(500, 10)
	require.NotEqual(t, p1, p3)
	var cm, cv vec
	for i := range p1 {
		for d := range 3 {
			cm[d] += p1[i][d]
			cv[d] += v1[i][d]
		}
	}
	for d := range 3 {
		require.InDelta(t, 0, cm[d]/500, 1e-12)
		require.InDelta(t, 0, cv[d]/500, 1e-12)
	}
	// Morton order: consecutive bodies are far nearer each other than
	// scattered pairs (medians: the outskirts are sparse).
	var near, far []float64
	for i := 1; i < len(p1); i++ {
		d := p1[i].sub(p1[i-1])
		near = append(near, math.Sqrt(d.dot(d)))
		e := p1[i].sub(p1[(i*7919)%len(p1)])
		far = append(far, math.Sqrt(e.dot(e)))
	}
	slices.Sort(near)
	slices.Sort(far)
	require.Less(t, near[len(near)/2], far[len(far)/2]/3)
}
