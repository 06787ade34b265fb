// Package draw takes bounded random numbers from a PCG held in a block's
// own record: the numbers math/rand/v2's Rand.IntN gives on the same
// generator (its uint64n, which 32-bit machines reproduce too), without a
// call through the Source interface at every tie an arbiter breaks.
package draw

import (
	"math/bits"
	"math/rand/v2"
)

// IntN is rand.New(pcg).IntN(n), n > 0.
func IntN(pcg *rand.PCG, n int) int {
	un := uint64(n)
	if un&(un-1) == 0 { // a power of two: a mask
		return int(pcg.Uint64() & (un - 1))
	}
	// Lemire's multiply, rejecting the few draws that would bias it.
	hi, lo := bits.Mul64(pcg.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(pcg.Uint64(), un)
		}
	}
	return int(hi)
}
