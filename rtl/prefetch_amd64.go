package rtl

import "unsafe"

// prefetchRecord asks the cache for the first four lines at p without
// waiting for them (PREFETCHT0 retires before its data arrives; a plain
// load would hold the reorder buffer as long as the miss).
//
//go:noescape
func prefetchRecord(p unsafe.Pointer)

// PrefetchLine asks the cache for the line holding p without waiting for
// it. It changes nothing a program can observe.
//
//go:noescape
func PrefetchLine(p unsafe.Pointer)

// PrefetchLines asks for the n lines from the one holding p (n ≤ 0:
// none), in one call: a record's tail of several lines.
//
//go:noescape
func PrefetchLines(p unsafe.Pointer, n int)
