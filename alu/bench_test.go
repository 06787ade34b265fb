package alu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Benchmarks report ns/element (one element = one word of Combine, one
// float of Add, one accumulator of AddExact or Float64).

const benchN = 1024

func benchFloats(spread int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, benchN)
	for i := range xs {
		xs[i] = math.Ldexp(r.Float64()-0.5, r.IntN(2*spread+1)-spread)
	}
	return xs
}

func perElement(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/element")
}

func BenchmarkCombineInt64Sum(b *testing.B) {
	acc, in := make([]uint64, benchN), make([]uint64, benchN)
	for i := range in {
		in[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Combine(Sum, Int64, acc, in)
	}
	perElement(b, benchN)
}

func BenchmarkCombineInt32Min(b *testing.B) {
	acc, in := make([]uint64, benchN), make([]uint64, benchN)
	for i := range in {
		in[i] = sx32(uint64(i) * 0x9e3779b97f4a7c15)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Combine(Min, Int32, acc, in)
	}
	perElement(b, benchN)
}

func BenchmarkCombineFloat64Naive(b *testing.B) {
	xs := benchFloats(20)
	acc, in := make([]uint64, benchN), make([]uint64, benchN)
	for i, x := range xs {
		in[i] = math.Float64bits(x)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Combine(Sum, Float64, acc, in)
	}
	perElement(b, benchN)
}

func benchExactAdd(b *testing.B, spread int) {
	xs := benchFloats(spread)
	var x ExactSum
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range xs {
			x.Add(f)
		}
	}
	perElement(b, benchN)
}

// Values of both signs within 2^±20 (typical data) and over the whole
// exponent range (adversarial: borrows run across many limbs).
func BenchmarkExactAdd(b *testing.B)          { benchExactAdd(b, 20) }
func BenchmarkExactAddFullRange(b *testing.B) { benchExactAdd(b, 1000) }

func BenchmarkExactAddExact(b *testing.B) {
	var x, y ExactSum
	for _, f := range benchFloats(1000) {
		y.Add(f)
	}
	b.ReportAllocs()
	for b.Loop() {
		x.AddExact(&y)
	}
	perElement(b, 1)
}

func BenchmarkExactFloat64(b *testing.B) {
	sums := make([]ExactSum, 64)
	for i, f := range benchFloats(300)[:len(sums)] {
		sums[i].Add(f)
		sums[i].Add(-f / 3)
	}
	var sink float64
	b.ReportAllocs()
	for b.Loop() {
		for i := range sums {
			sink += sums[i].Float64()
		}
	}
	perElement(b, len(sums))
	_ = sink
}

// BenchmarkSpecCombineExact: the switch-side ALU on an Exact payload, per
// float element (35 words).
func BenchmarkSpecCombineExact(b *testing.B) {
	s := Spec{Sum, Float64, Exact}
	const n = 64
	acc, in := make([]uint64, n*ExactWords), make([]uint64, n*ExactWords)
	src := make([]uint64, n)
	for i, f := range benchFloats(20)[:n] {
		src[i] = math.Float64bits(f)
	}
	_ = s.Encode(0, in, src, nil)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Combine(0, acc, in)
	}
	perElement(b, n)
}

// BenchmarkTwoPhaseSum: both passes and the rounding on one node, per
// contribution.
func BenchmarkTwoPhaseSum(b *testing.B) {
	xs := benchFloats(20)
	var sink float64
	b.ReportAllocs()
	for b.Loop() {
		sink += TwoPhaseSum(xs)
	}
	perElement(b, benchN)
	_ = sink
}
