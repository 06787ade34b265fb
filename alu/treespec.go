package alu

import (
	"fmt"
	"math"
)

// TreeLane is how one pass of a reduction rides the tree ALU: the ALU
// operation and the operand width. Operands are packed in the payload
// (Wide), so a 2048-bit packet payload holds MaxWideBits/Bits elements.
type TreeLane struct {
	Op   WideOp
	Bits int
}

// Tree maps pass p of s onto the tree ALU, which has only unsigned
// integer operations (the BG/L MPI paper §2). The endpoint encodings
// (TreeEncode, TreeDecode) are:
//
//   - sums of every integer type: WideAdd on 32- or 64-bit operands (two's
//     complement addition is unsigned addition modulo 2^bits);
//   - unsigned max: WideMax; unsigned min: WideMax of the complement;
//   - signed max: WideMax of the value with its sign bit flipped (offset
//     binary orders like the signed value); signed min: the complement of
//     that;
//   - float64 max: WideMax of the order-preserving key (negative: all bits
//     flipped; otherwise the sign bit set), so −0 orders below +0; min: the
//     complement of the key; every NaN encodes as all ones, the largest key,
//     and decodes as the canonical NaN, as Combine gives;
//   - float64 TwoPhase sum: pass 0 WideMax of the exponent keys as 16-bit
//     operands (a key is at most 2048), pass 1 WideAdd of the 128-bit
//     aligned mantissas (Encode's words);
//   - float64 Exact sum: one pass of WideAdd on 2048-bit fixed-point
//     operands, one element a packet (TreeFixedFrac says what 2048 bits
//     hold and what they do not);
//   - bitwise ops: as they are, on 32- or 64-bit operands; Barrier: a
//     16-bit WideOr with no elements.
//
// A Naive float sum needs a float adder: the tree refuses it.
func (s Spec) Tree(p int) (TreeLane, error) {
	if err := s.Validate(); err != nil {
		return TreeLane{}, err
	}
	if p < 0 || p >= s.Passes() {
		return TreeLane{}, fmt.Errorf("alu: %v has no pass %d", s, p)
	}
	w := 64
	if s.Type == Int32 {
		w = 32
	}
	switch {
	case s.Op == Barrier:
		return TreeLane{WideOr, 16}, nil
	case s.floatSum(Naive):
		return TreeLane{}, fmt.Errorf("alu: %v: the tree ALU has no float adder; allowed float sums: two-phase", s)
	case s.floatSum(Exact):
		return TreeLane{WideAdd, MaxWideBits}, nil // see TreeFixedFrac
	case s.floatSum(TwoPhase) && p == 0:
		return TreeLane{WideMax, 16}, nil // keys are at most 2048: 16-bit operands
	case s.floatSum(TwoPhase):
		return TreeLane{WideAdd, 128}, nil
	case s.Op == Sum:
		return TreeLane{WideAdd, w}, nil
	case s.Op == Min || s.Op == Max:
		return TreeLane{WideMax, w}, nil
	case s.Op == And:
		return TreeLane{WideAnd, w}, nil
	case s.Op == Or:
		return TreeLane{WideOr, w}, nil
	}
	return TreeLane{WideXor, w}, nil
}

// TreeWords is the payload words that n elements take in pass p (whole
// words: 32-bit operands go two to a word).
func (l TreeLane) TreeWords(n int) int { return (n*l.Bits + 63) / 64 }

// PerPacket is how many elements a payload of MaxWideBits holds (0 for a
// Barrier's lane, which carries none).
func (s Spec) PerPacket(p int) int {
	l, err := s.Tree(p)
	if err != nil || s.Op == Barrier {
		return 0
	}
	return MaxWideBits / l.Bits
}

// TreeEncode converts the elements src (payload words, one per element) to
// pass p's packed tree operands dst (TreeWords(len(src)) words; the rest of
// a word is zero). Pass 1 of a TwoPhase sum needs keys, the pass-0 result.
func (s Spec) TreeEncode(p int, dst, src, keys []uint64) error {
	l, err := s.Tree(p)
	if err != nil {
		return err
	}
	if s.Op == Barrier {
		clear(dst)
		return nil
	}
	if len(dst) != l.TreeWords(len(src)) {
		return fmt.Errorf("alu: %v pass %d: %d elements need %d tree words, not %d", s, p, len(src), l.TreeWords(len(src)), len(dst))
	}
	if s.floatSum(TwoPhase) && p == 1 {
		return s.Encode(p, dst, src, keys)
	}
	if s.floatSum(Exact) {
		for i, x := range src {
			if err := treeFixed(dst[i*TreeFixedWords:], math.Float64frombits(x)); err != nil {
				return err
			}
		}
		return nil
	}
	clear(dst)
	for i, x := range src {
		if s.floatSum(TwoPhase) {
			l.Put(dst, i, TwoPhaseKey(math.Float64frombits(x)))
		} else {
			l.Put(dst, i, s.treeKey(x))
		}
	}
	return nil
}

// TreeDecode converts the last pass's packed result wire to elements dst.
func (s Spec) TreeDecode(dst, wire, keys []uint64) error {
	l, err := s.Tree(s.Passes() - 1)
	if err != nil {
		return err
	}
	if s.Op == Barrier {
		return nil
	}
	if len(wire) < l.TreeWords(len(dst)) {
		return fmt.Errorf("alu: %v: %d tree words for %d elements; want %d", s, len(wire), len(dst), l.TreeWords(len(dst)))
	}
	if s.floatSum(TwoPhase) {
		return s.Decode(dst, wire[:2*len(dst)], keys)
	}
	if s.floatSum(Exact) {
		for i := range dst {
			dst[i] = math.Float64bits(fixedFloat(wire[i*TreeFixedWords:]))
		}
		return nil
	}
	for i := range dst {
		dst[i] = s.treeValue(l.Get(wire, i))
	}
	return nil
}

// Put ors x into operand i of the packed vector v (16-, 32- or 64-bit
// lanes; the lane must be zero).
func (l TreeLane) Put(v []uint64, i int, x uint64) {
	switch l.Bits {
	case 16, 32:
		k := 64 / l.Bits
		v[i/k] |= (x & (1<<l.Bits - 1)) << (l.Bits * (i % k))
	default:
		v[i] = x
	}
}

// Get returns operand i of the packed vector v (16-, 32- or 64-bit lanes).
func (l TreeLane) Get(v []uint64, i int) uint64 {
	switch l.Bits {
	case 16, 32:
		k := 64 / l.Bits
		return v[i/k] >> (l.Bits * (i % k)) & (1<<l.Bits - 1)
	}
	return v[i]
}

// treeKey is the source's encoding of element x (see Tree).
func (s Spec) treeKey(x uint64) uint64 {
	sign := uint64(1) << 63
	if s.Type == Int32 {
		sign = 1 << 31
		x &= 0xffff_ffff
	}
	var k uint64
	switch {
	case s.Op != Min && s.Op != Max:
		return x
	case s.Type == Float64 && isNaN(x):
		return math.MaxUint64 // wins both max and min
	case s.Type == Float64 && x&sign != 0:
		k = ^x
	case s.Type == Float64:
		k = x | sign
	case s.Type == Uint64:
		k = x
	default:
		k = x ^ sign
	}
	if s.Op == Min {
		k = ^k
	}
	if s.Type == Int32 {
		k &= 0xffff_ffff
	}
	return k
}

// treeValue inverts treeKey on a result.
func (s Spec) treeValue(k uint64) uint64 {
	sign := uint64(1) << 63
	if s.Type == Int32 {
		sign = 1 << 31
	}
	if s.Op == Min || s.Op == Max {
		if s.Type == Float64 && k == math.MaxUint64 {
			return nanBits
		}
		if s.Op == Min {
			k = ^k
			if s.Type == Int32 {
				k &= 0xffff_ffff
			}
		}
		switch {
		case s.Type == Float64 && k&sign != 0:
			k &^= sign
		case s.Type == Float64:
			k = ^k
		case s.Type != Uint64:
			k ^= sign
		}
	}
	if s.Type == Int32 {
		return sx32(k)
	}
	return k
}
