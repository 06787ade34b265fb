package main

import (
	"strings"
	"testing"
)

// FuzzRunArgs runs `hwcoll run` in-process on fuzzed argument vectors
// (arguments split at spaces) in a scratch directory, with a small memory
// limit and cycle budget appended so that every run is short: whatever
// the arguments, the command exits 0, 1, 2 or 3, never panics, and a bad
// input (2) is one line on stderr.
func FuzzRunArgs(f *testing.F) {
	for _, s := range []string{
		"", "--json", "--set network.ports=4", "--set network.topology=torus --set network.dims=3,3",
		"--set network.topology=bgltree --set traffic.pattern=barrier --set network.nodes=9",
		"--set network.topology=ibmesh --set network.dims=3,2 --set traffic.pattern=multicast",
		"--vcd x.vcd --trace top.*", "--pcap p.pcap", "--pcap-links x", "--set", "--set =", "--config nofile.yaml",
		"--set traffic.load=2", "--trace", "--json --json", "extra", "--set network.topology=fattree --set network.nodes=16",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		t.Chdir(t.TempDir())
		args := []string{"run"}
		for _, a := range strings.Fields(s) {
			if strings.ContainsAny(a, `/\`) || strings.Contains(a, "..") {
				a = "x" // stay in the scratch directory
			}
			args = append(args, a)
		}
		args = append(args, "--set", "run.memory_limit=64", "--set", "run.warmup_cycles=0",
			"--set", "run.measure_cycles=200", "--set", "run.max_cycles=2000", "--set", "run.watchdog_cycles=1000")
		r := runApp(args...)
		if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
			t.Fatalf("%q: panic: %s", s, r.stderr)
		}
		switch r.code {
		case 0, 1, 3:
		case 2:
			line := strings.TrimSuffix(r.stderr, "\n")
			if line == "" || strings.Contains(line, "\n") || !strings.HasPrefix(line, "hwcoll: ") {
				t.Fatalf("%q: bad input is not one line: %q", s, r.stderr)
			}
		default:
			t.Fatalf("%q: exit %d: %s", s, r.code, r.stderr)
		}
	})
}
