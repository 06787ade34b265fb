package alu

import (
	"fmt"
	"math"
	"math/bits"
)

// Spec is one reduction as the network carries it: operator, element type
// and, for float64 sums, the float mode. It gives a combine unit everything
// it needs without knowing the modes:
//
//   - Passes: tree passes (2 for a TwoPhase float sum, else 1);
//   - Words(p): payload words per element in pass p (0 for Barrier,
//     ExactWords for an Exact float sum, 1 then 2 for TwoPhase, else 1);
//   - Encode at the source: elements (payload words, one per element, see the
//     package comment) to pass-p wire words;
//   - Identity and Combine in the switch: the ALU on wire words;
//   - Decode at the destination: last-pass wire words back to elements.
//
// The pass-one result of a TwoPhase sum (the maximum keys, one word per
// element) must reach every source before pass two (an allreduce); Encode
// and Decode of pass two take it as keys.
type Spec struct {
	Op   Op
	Type Type
	Mode FloatMode // used only when Op is Sum and Type is Float64
}

func (s Spec) String() string {
	if s.Op == Sum && s.Type == Float64 {
		return fmt.Sprintf("%v/%v/%v", s.Op, s.Type, s.Mode)
	}
	return fmt.Sprintf("%v/%v", s.Op, s.Type)
}

// Validate reports an operator, type or mode that does not exist, or a
// bitwise operator on Float64, in one line.
func (s Spec) Validate() error {
	if err := check(s.Op, s.Type); err != nil {
		return err
	}
	if s.Mode >= numModes {
		return fmt.Errorf("alu: unknown %v", s.Mode)
	}
	return nil
}

func (s Spec) floatSum(m FloatMode) bool {
	return s.Op == Sum && s.Type == Float64 && s.Mode == m
}

// Passes returns the number of tree passes the reduction takes.
func (s Spec) Passes() int {
	if s.floatSum(TwoPhase) {
		return 2
	}
	return 1
}

// Words returns the payload words per element in pass p (0 for an invalid
// pass).
func (s Spec) Words(p int) int {
	switch {
	case p < 0 || p >= s.Passes():
		return 0
	case s.Op == Barrier:
		return 0
	case s.floatSum(Exact):
		return ExactWords
	case s.floatSum(TwoPhase) && p == 1:
		return 2
	}
	return 1
}

// shape checks a pass number and that v holds whole elements of it, and
// returns the words per element.
func (s Spec) shape(p int, what string, v []uint64) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if p < 0 || p >= s.Passes() {
		return 0, fmt.Errorf("alu: %v: pass %d; allowed 0..%d", s, p, s.Passes()-1)
	}
	w := s.Words(p)
	if w == 0 {
		if len(v) != 0 {
			return 0, fmt.Errorf("alu: %v: %s of %d words; a barrier has no payload", s, what, len(v))
		}
		return 0, nil
	}
	if len(v)%w != 0 {
		return 0, fmt.Errorf("alu: %v pass %d: %s of %d words is not a whole number of %d-word elements", s, p, what, len(v), w)
	}
	return w, nil
}

// Identity fills the pass-p wire vector dst with the identity element (so a
// combine unit's state starts as the empty reduction).
func (s Spec) Identity(p int, dst []uint64) error {
	w, err := s.shape(p, "identity vector", dst)
	switch {
	case err != nil:
		return err
	case w > 1 || s.floatSum(TwoPhase): // Exact and TwoPhase: all-zero words
		clear(dst)
		return nil
	}
	id := Identity(s.Op, s.Type)
	for i := range dst {
		dst[i] = id
	}
	return nil
}

// Encode converts the source's elements src (one payload word each) to the
// pass-p wire words dst (len(src)·Words(p) words). Pass two of a TwoPhase sum
// needs keys, the pass-one result (one word per element); other passes
// ignore it.
func (s Spec) Encode(p int, dst, src, keys []uint64) error {
	w, err := s.shape(p, "wire vector", dst)
	if err != nil {
		return err
	}
	if len(dst) != w*len(src) && w != 0 {
		return fmt.Errorf("alu: %v pass %d: %d elements need %d wire words, not %d", s, p, len(src), w*len(src), len(dst))
	}
	switch {
	case w == 0:
	case s.floatSum(Exact):
		for i, x := range src {
			e := exactAt(dst, i)
			e.Reset()
			e.Add(math.Float64frombits(x))
		}
	case s.floatSum(TwoPhase) && p == 0:
		for i, x := range src {
			dst[i] = TwoPhaseKey(math.Float64frombits(x))
		}
	case s.floatSum(TwoPhase):
		if len(keys) != len(src) {
			return fmt.Errorf("alu: %v pass 1: %d keys for %d elements", s, len(keys), len(src))
		}
		for i, x := range src {
			if TwoPhaseKey(math.Float64frombits(x)) > keys[i] || keys[i] > keySpecial {
				return fmt.Errorf("alu: %v pass 1: element %d: key %d is not the maximum of pass one", s, i, keys[i])
			}
			dst[2*i], dst[2*i+1] = TwoPhaseAlign(math.Float64frombits(x), keys[i])
		}
	case s.Type == Int32:
		for i, x := range src {
			dst[i] = sx32(x)
		}
	default:
		copy(dst, src)
	}
	return nil
}

// Combine folds the pass-p wire vector in into acc: the switch's ALU. Integer
// and Naive float words go to the package Combine; Exact elements add as
// ExactSums; TwoPhase keys combine by Max over Uint64 and aligned mantissas
// by 128-bit two's-complement addition.
func (s Spec) Combine(p int, acc, in []uint64) error {
	if len(acc) != len(in) {
		return fmt.Errorf("alu: %v pass %d: vectors of %d and %d words", s, p, len(acc), len(in))
	}
	if _, err := s.shape(p, "vector", acc); err != nil {
		return err
	}
	switch {
	case s.Op == Barrier:
		return nil
	case s.floatSum(Exact):
		return combineExact(acc, in)
	case s.floatSum(TwoPhase) && p == 0:
		return Combine(Max, Uint64, acc, in)
	case s.floatSum(TwoPhase):
		in = in[:len(acc)]
		for i := 0; i+1 < len(acc); i += 2 {
			var c uint64
			acc[i], c = bits.Add64(acc[i], in[i], 0)
			acc[i+1], _ = bits.Add64(acc[i+1], in[i+1], c)
		}
		return nil
	}
	return Combine(s.Op, s.Type, acc, in)
}

// Decode converts the last pass's wire vector (the reduction's result) to
// elements dst, one payload word each. A TwoPhase sum needs keys, the
// pass-one result.
func (s Spec) Decode(dst, wire, keys []uint64) error {
	last := s.Passes() - 1
	w, err := s.shape(last, "wire vector", wire)
	if err != nil {
		return err
	}
	if w == 0 {
		return nil
	}
	if len(wire) != w*len(dst) {
		return fmt.Errorf("alu: %v: %d wire words for %d elements; want %d", s, len(wire), len(dst), w*len(dst))
	}
	switch {
	case s.floatSum(Exact):
		for i := range dst {
			dst[i] = math.Float64bits(exactAt(wire, i).Float64())
		}
	case s.floatSum(TwoPhase):
		if len(keys) != len(dst) {
			return fmt.Errorf("alu: %v: %d keys for %d elements", s, len(keys), len(dst))
		}
		for i := range dst {
			dst[i] = math.Float64bits(TwoPhaseRound(keys[i], wire[2*i], wire[2*i+1]))
		}
	default:
		copy(dst, wire)
	}
	return nil
}
