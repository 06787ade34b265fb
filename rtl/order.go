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
