package experiment

// SetPrefetch forces the kernel's prefetching on (1) or off (−1) in the
// networks built from here on, or leaves it to their size (0).
func SetPrefetch(v int) { forcePrefetch = v }
