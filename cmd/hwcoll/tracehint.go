package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
)

// traceSelectsNothing is the usage line of a --trace that selected no
// signal of the network of cfg. The run that found out has closed its
// simulator, so the network is built again, on this path only, for signal
// names that exist in it.
func traceSelectsNothing(cfg config.Config, trace string) error {
	hint := parenHint(trace)
	if t, err := experiment.TopologyOf(cfg); err == nil {
		if n, err := t.Build(cfg, cfg.Timing()); err == nil {
			sim := n.Simulator()
			hint += examplesHint(sim)
			sim.Close()
		}
	}
	return usagef("--trace %q selects no signal of this %s network%s", trace, cfg.Network.Topology, hint)
}

// traceHint is what follows "--trace X selects no signal" for sim, which
// traces nothing now and has not run.
func traceHint(sim *rtl.Sim, trace string) string {
	return parenHint(trace) + examplesHint(sim)
}

// parenHint points at a parenthesis of the --trace list without its
// partner (names always pair them); "" when they pair.
func parenHint(trace string) string {
	var open []int
	for i, c := range trace {
		switch c {
		case '(':
			open = append(open, i)
		case ')':
			if len(open) == 0 {
				return fmt.Sprintf("; the \")\" at character %d closes no \"(\"", i+1)
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("; the \"(\" at character %d is never closed", open[0]+1)
	}
	return ""
}

// examplesHint names a few signals of sim and a module path that selects
// a whole block; "" when sim has none.
func examplesHint(sim *rtl.Sim) string {
	mod, ex := signalExamples(sim, 3)
	if len(ex) == 0 {
		return ""
	}
	return fmt.Sprintf("; its signals look like %s (a module's path such as %s selects everything under it; '*' matches dots too)", strings.Join(ex, ", "), mod)
}

// signalExamples traces, into nothing, one block of sim near the top of its
// tree (the first module two levels down: a router of a torus, an input of
// a switch) and returns its path and up to n of its signals with different
// names. Tracing one block is cheap however large the network.
func signalExamples(sim *rtl.Sim, n int) (string, []string) {
	chain := []*rtl.Module{sim.Top()}
	for m := sim.Top(); len(chain) < 3; {
		kids := m.Children()
		if len(kids) == 0 {
			break
		}
		m = kids[0]
		chain = append(chain, m)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		path := chain[i].Path()
		sigs := tracedBy(sim, path)
		if len(sigs) == 0 {
			continue
		}
		var out []string
		seen := map[string]bool{}
		for _, s := range sigs {
			leaf := s[strings.LastIndexByte(s, '.')+1:]
			if !seen[leaf] {
				seen[leaf] = true
				out = append(out, s)
			}
			if len(out) == n {
				break
			}
		}
		return path, out
	}
	return "", nil
}

// tracedBy is the paths of the signals glob selects in sim, traced into
// nothing and untraced again.
func tracedBy(sim *rtl.Sim, glob string) []string {
	w, err := sim.NewTraceWriter(io.Discard)
	if err != nil {
		return nil
	}
	if err := sim.Trace(w, glob); err != nil {
		return nil
	}
	var out []string
	for _, s := range sim.TracedSignals() {
		out = append(out, s.Path)
	}
	sim.EndTrace()
	return out
}
