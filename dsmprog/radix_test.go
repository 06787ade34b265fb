package dsmprog

import (
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestRadixSorts(t *testing.T) {
	for _, procs := range testProcs {
		for _, lw := range []int{4, 8} {
			r := NewRadix(5000, 7)
			_, refs, err := dsm.Functional(r, procs, lw)
			require.NoError(t, err, "%d processors, %d-word lines", procs, lw)
			// 3 references a key a pass, plus histograms, prefix and barriers.
			require.GreaterOrEqual(t, refs, uint64(3*r.passes()*5000))
			// The input array was not sorted to begin with.
			in := r.keys()
			sorted := true
			for i := 1; i < len(in); i++ {
				sorted = sorted && in[i-1] <= in[i]
			}
			require.False(t, sorted)
			require.Equal(t, r.a, r.Result())
		}
	}
}

// More processors than digits, or than keys; odd passes end in the
// second array.
func TestRadixShapes(t *testing.T) {
	for _, c := range []struct{ n, bits, keyBits, procs int }{
		{100, 2, 8, 16},  // 4 digits, 16 processors: most own no digit
		{5, 8, 32, 16},   // fewer keys than processors
		{1, 8, 32, 3},    // one key
		{3000, 5, 16, 6}, // 4 passes of 5 bits (the last of 1)
		{3000, 8, 24, 4}, // 3 passes: the result is in the second array
		{2000, 11, 33, 2},
		{500, 13, 64, 4}, // 5 passes of 13-bit digits
	} {
		r := &Radix{N: c.n, Bits: c.bits, KeyBits: c.keyBits, Seed: 3}
		_, _, err := dsm.Functional(r, c.procs, 4)
		require.NoError(t, err, "%+v", c)
	}
}

func TestRadixProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &Radix{
			N:       rapid.IntRange(1, 600).Draw(t, "keys"),
			Bits:    rapid.IntRange(1, 10).Draw(t, "bits"),
			KeyBits: rapid.IntRange(1, 40).Draw(t, "keyBits"),
			Seed:    rapid.Uint64().Draw(t, "seed"),
		}
		_, _, err := dsm.Functional(r, rapid.IntRange(1, 20).Draw(t, "procs"), rapid.IntRange(1, 8).Draw(t, "lineWords"))
		require.NoError(t, err)
	})
}

func TestRadixRefusesBadParameters(t *testing.T) {
	for _, r := range []*Radix{
		{N: 0, Bits: 8, KeyBits: 32},
		{N: 10, Bits: 0, KeyBits: 32},
		{N: 10, Bits: 17, KeyBits: 32},
		{N: 10, Bits: 8, KeyBits: 65},
	} {
		require.Error(t, r.Setup(dsm.NewSpace(8), 4))
	}
	require.ErrorContains(t, NewRadix(10, 1).Setup(dsm.NewSpace(8), 0), "processors")
}

// A wrong prefix sum (one digit's ranks off by one) must fail Verify, and
// so must a sorted array with one key changed (the multiset check) or two
// keys swapped (the order check).
func TestRadixVerifyCatchesMistakes(t *testing.T) {
	r := NewRadix(3000, 11)
	r.badPrefix = true
	_, _, err := dsm.Functional(r, 4, 8)
	require.Error(t, err)

	r = NewRadix(3000, 11)
	mem, _, err := dsm.Functional(r, 4, 8)
	require.NoError(t, err)
	read := func(a dsm.Addr) uint64 { return mem[a] }
	out := r.Result()
	mem[out+100]++
	require.ErrorContains(t, r.Verify(read), "not")
	mem[out+100]--
	mem[out+5], mem[out+2000] = mem[out+2000], mem[out+5]
	require.ErrorContains(t, r.Verify(read), "not sorted")
	mem[out+5], mem[out+2000] = mem[out+2000], mem[out+5]
	require.NoError(t, r.Verify(read))
}
