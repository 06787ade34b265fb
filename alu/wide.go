package alu

import (
	"fmt"
	"math/bits"
)

// WideOp is an operation of the BlueGene/L tree router's integer ALU (the
// BG/L MPI paper §2: "an ALU in the network can combine incoming packets
// using bitwise and integer operations"): it works on unsigned operands of
// 16 to 2048 bits and knows nothing of signs or floats. Signed and float
// reductions reach it through the order-preserving encodings of Spec.Tree.
type WideOp uint8

const (
	WideOr  WideOp = iota // bitwise or
	WideAnd               // bitwise and
	WideXor               // bitwise exclusive or
	WideMax               // unsigned maximum
	WideAdd               // unsigned sum, modulo 2^bits (carries cross 64-bit words)
	numWideOps
)

var wideNames = [...]string{"or", "and", "xor", "umax", "uadd"}

func (o WideOp) String() string {
	if o < numWideOps {
		return wideNames[o]
	}
	return fmt.Sprintf("alu.WideOp(%d)", uint8(o))
}

// MaxWideBits is the widest operand of the tree ALU: one 256-byte payload.
const MaxWideBits = 2048

// CheckWidth reports whether the ALU takes operands of bits bits: 16 or 32
// (several lanes in a 64-bit word) or a multiple of 64 up to MaxWideBits.
func CheckWidth(bits int) error {
	if bits == 16 || bits == 32 || (bits >= 64 && bits <= MaxWideBits && bits%64 == 0) {
		return nil
	}
	return fmt.Errorf("alu: %d-bit operands; allowed: 16, 32 or a multiple of 64 up to %d", bits, MaxWideBits)
}

// Wide folds in into acc operand by operand: both are vectors of operands
// of width bits packed from bit 0 of word 0 upward (little-endian words),
// acc[k] = acc[k] op in[k]. A vector is whole words; with 16- and 32-bit
// operands a word holds 4 or 2 of them. Wide does not allocate.
func Wide(op WideOp, width int, acc, in []uint64) error {
	if err := CheckWidth(width); err != nil {
		return err
	}
	if len(acc) != len(in) || (width > 64 && len(acc)%(width/64) != 0) {
		return fmt.Errorf("alu: %v over %d-bit operands: vectors of %d and %d words", op, width, len(acc), len(in))
	}
	in = in[:len(acc)]
	switch op {
	case WideOr:
		for i := range acc {
			acc[i] |= in[i]
		}
	case WideAnd:
		for i := range acc {
			acc[i] &= in[i]
		}
	case WideXor:
		for i := range acc {
			acc[i] ^= in[i]
		}
	case WideMax:
		wideMax(width, acc, in)
	case WideAdd:
		wideAdd(width, acc, in)
	default:
		return fmt.Errorf("alu: unknown %v", op)
	}
	return nil
}

func wideAdd(width int, acc, in []uint64) {
	switch width {
	case 16, 32:
		// Lane-wise addition in one word: add without the lanes' top
		// bits, then put the top bits back by xor, so no carry crosses a
		// lane boundary.
		top := uint64(0x8000_8000_8000_8000)
		if width == 32 {
			top = 0x8000_0000_8000_0000
		}
		for i := range acc {
			a, b := acc[i], in[i]
			acc[i] = ((a &^ top) + (b &^ top)) ^ ((a ^ b) & top)
		}
	default:
		n := width / 64
		for k := 0; k < len(acc); k += n {
			var c uint64
			for j := k; j < k+n; j++ {
				acc[j], c = bits.Add64(acc[j], in[j], c)
			}
		}
	}
}

func wideMax(width int, acc, in []uint64) {
	switch width {
	case 16, 32:
		mask := uint64(1)<<width - 1
		for i := range acc {
			a, b := acc[i], in[i]
			var r uint64
			for s := 0; s < 64; s += width {
				x, y := a>>s&mask, b>>s&mask
				r |= max(x, y) << s
			}
			acc[i] = r
		}
	default:
		n := width / 64
		for k := 0; k < len(acc); k += n {
			// Compare from the most significant word down; copy in's
			// operand if it is larger.
			for j := k + n - 1; j >= k; j-- {
				if acc[j] != in[j] {
					if in[j] > acc[j] {
						copy(acc[k:k+n], in[k:k+n])
					}
					break
				}
			}
		}
	}
}
