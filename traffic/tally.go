package traffic

import "sync/atomic"

// Tally is a count that sinks evaluated on several goroutines
// (run.workers) add to: the measured copies a run has received, so that a
// drain check, made every cycle, reads one counter rather than every sink
// of a large network.
type Tally struct{ n atomic.Uint64 }

// Add adds n.
func (t *Tally) Add(n uint64) { t.n.Add(n) }

// Load returns the count; between cycles it is exact.
func (t *Tally) Load() uint64 { return t.n.Load() }
