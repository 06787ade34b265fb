// Package heapcensus says where a network's heap goes, for the tests that
// keep a budget of bytes per node (packages fattree and torus): the in-use
// bytes of the heap profile grouped by the package of the innermost hwcoll
// function that allocated them, the kernel's records by kind.
package heapcensus

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// Measure runs build (which builds a network of nodes nodes, warms it up
// and returns it) with every allocation sampled, and returns the heap it
// left per node and where it is, by package.
func Measure(nodes int, build func() any) (perNode float64, where string) {
	before, restore := start()
	defer restore()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	net := build()
	runtime.GC()
	runtime.GC() // the profile is as of the last completed cycle
	runtime.ReadMemStats(&m1)
	where = report(before, take(), nodes)
	runtime.KeepAlive(net)
	return float64(m1.HeapAlloc-m0.HeapAlloc) / float64(nodes), where
}

// census is in-use heap bytes by package.
type census map[string]int64

// start samples every allocation from now on and returns the census as it
// is and a function that restores the sampling rate. Call it before the
// network is built.
func start() (census, func()) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	runtime.GC()
	return take(), func() { runtime.MemProfileRate = old }
}

// take returns the census as of the last completed garbage collection
// (run two first for an up-to-date one).
func take() census {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	out := census{}
	for _, r := range recs {
		out[allocPackage(r.Stack())] += r.InUseBytes()
	}
	return out
}

// report lists, largest first, what each package holds in after beyond
// before, per node, leaving out rows under 64 bytes per node.
func report(before, after census, nodes int) string {
	type row struct {
		pkg   string
		bytes int64
	}
	var rows []row
	for p, b := range after {
		if d := b - before[p]; d > 0 {
			rows = append(rows, row{p, d})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.pkg, b.pkg)) })
	var sb strings.Builder
	for _, r := range rows {
		if r.bytes/int64(nodes) >= 64 {
			fmt.Fprintf(&sb, "\n  %-14s %7.0f B/node", r.pkg, float64(r.bytes)/float64(nodes))
		}
	}
	return sb.String()
}

func allocPackage(stack []uintptr) string {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		if i := strings.Index(f.Function, "hwcoll/hwcoll/"); i >= 0 {
			name := f.Function[i+len("hwcoll/hwcoll/"):]
			pkg := name
			if j := strings.IndexAny(name, "."); j >= 0 {
				pkg = name[:j]
			}
			if pkg == "rtl" { // the kernel's records, by kind
				for _, k := range []string{"Module", "Signal", "line", "Line", "timer", "Array", "Reg", "Probe"} {
					if strings.Contains(name, k) {
						return "rtl " + strings.ToLower(k)
					}
				}
			}
			return pkg
		}
		if !more {
			return "other"
		}
	}
}
