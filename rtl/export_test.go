package rtl

// SetEvalOrder lets tests permute the order in which awake components are
// evaluated each cycle; results must not depend on it.
func (s *Sim) SetEvalOrder(f func([]*Module)) { s.order = f }

// SamePartition reports whether two modules are evaluated by one partition.
func SamePartition(a, b *Module) bool { return a.part == b.part }
