package rtl

// SetEvalOrder lets tests permute the order in which awake components are
// evaluated each cycle; results must not depend on it.
func (s *Sim) SetEvalOrder(f func([]*Module)) { s.order = f }
