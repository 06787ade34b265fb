package main

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkDemo times `hwcoll demo`, the main job `make run` starts on a
// fresh machine: its speed is measured here, not asserted in a timed test
// (TestDemoWritesTracesAndSummary checks what it writes).
func BenchmarkDemo(b *testing.B) {
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "demo")
		start := time.Now()
		r := runApp("demo", "--out", out)
		wall += time.Since(start)
		if r.code != 0 {
			b.Fatalf("demo: exit %d\n%s", r.code, r.stderr)
		}
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/demo")
}
