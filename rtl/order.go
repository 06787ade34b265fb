package rtl

// SetEvalOrder lets a test permute the order in which each partition
// evaluates its awake components in every cycle: f reorders the slice it
// is given in place. Results and waveforms must not depend on the order
// (a block that reads another's state in the cycle reads what the other
// had before it: registers, lines, the same value whoever asks first), so
// a block's test can check that they do not. Call before Build.
func (s *Sim) SetEvalOrder(f func([]*Module)) {
	var ms []*Module
	s.order = func(ss []*sched) {
		ms = ms[:0]
		for _, c := range ss {
			ms = append(ms, c.mod)
		}
		f(ms)
		for i, m := range ms {
			ss[i] = m.s
		}
	}
}

// Shuffled is an order for SetEvalOrder: each cycle's components in a
// fresh permutation drawn from a stream seeded by seed, the same for the
// same seed.
func Shuffled(seed uint64) func([]*Module) {
	st := seed
	return func(ms []*Module) {
		for i := len(ms) - 1; i > 0; i-- {
			st = st*6364136223846793005 + 1442695040888963407
			j := int((st >> 33) % uint64(i+1))
			ms[i], ms[j] = ms[j], ms[i]
		}
	}
}
