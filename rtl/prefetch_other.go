//go:build !amd64

package rtl

import "unsafe"

func prefetchRecord(p unsafe.Pointer) {}

// PrefetchLine does nothing where no prefetch instruction is wired up.
func PrefetchLine(p unsafe.Pointer) {}

// PrefetchLines does nothing where no prefetch instruction is wired up.
func PrefetchLines(p unsafe.Pointer, n int) {}
