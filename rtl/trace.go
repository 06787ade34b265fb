package rtl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/hwcoll/hwcoll/vcd"
)

type tracer struct {
	w      *vcd.Writer
	period uint64 // clock period in timescale units
	sigs   []*signal
}

// TracedSignal describes one signal in the trace, for save files and tests.
type TracedSignal struct {
	Path   string // dotted name as it appears in the VCD, e.g. top.link.credits
	Module string // path of the owning module
	Width  int
	Kind   vcd.Kind
	Enum   *vcd.Enum // names of its values (Named), nil for numbers
}

// Timescale picks the coarsest VCD unit in which the clock period and its
// half are whole numbers, and returns the period in that unit.
func Timescale(periodPS uint64) (string, uint64) {
	switch {
	case periodPS%2000 == 0:
		return "1ns", periodPS / 1000
	case periodPS%2 == 0:
		return "1ps", periodPS
	default:
		return "1fs", periodPS * 1000
	}
}

// NewTraceWriter makes a VCD writer with the Sim's timescale.
func (s *Sim) NewTraceWriter(out interface{ Write([]byte) (int, error) }) (*vcd.Writer, error) {
	ts, _ := Timescale(s.periodPS)
	return vcd.NewWriter(out, vcd.Options{Timescale: ts, Version: "hwcoll"})
}

// Trace records every signal selected by globs (comma-separated, SplitGlobs;
// '*' matches any run of characters including '.', '?' one character;
// indices by coordinates, r(3,4,5) for r(3)(4)(5); a pattern that
// matches a module selects everything under it; empty selects everything)
// into w, starting now. Call it after Build and before the first cycle.
func (s *Sim) Trace(w *vcd.Writer, globs string) error {
	if !s.mustBuild() {
		return ErrInterrupted
	}
	if s.now != 0 {
		return errors.New("rtl: Trace must start at cycle 0")
	}
	if s.tracer != nil {
		return errors.New("rtl: already tracing")
	}
	pats := splitGlobs(globs)
	_, period := Timescale(s.periodPS)
	t := &tracer{w: w, period: period}
	w.Scope("top")
	w.Clock("clk", period)
	s.declare(&s.top, t, pats, matchAny(pats, "top"), true)
	w.Upscope()
	for _, sig := range t.sigs {
		sig.dump(w)
	}
	if err := w.Begin(); err != nil {
		return err
	}
	s.tracer = t
	s.traceEpoch++
	return nil
}

// TraceEpoch changes whenever tracing starts or ends: a component that
// caches which of its probes are traced (to skip untraced ones without
// reading them) refreshes the cache when it changes.
func (s *Sim) TraceEpoch() uint64 { return s.traceEpoch }

func (s *Sim) declare(m *Module, t *tracer, pats []string, selected, isTop bool) {
	if !isTop {
		t.w.Scope(m.name)
	}
	mp := ""
	m.decls(func(sig *signal, _ port, d *decl, obj unsafe.Pointer) {
		if sig.noTrace || sig.enc == encNone { // no waveform form; components add a probe
			return
		}
		if !selected {
			if mp == "" {
				mp = m.Path()
			}
			if !matchAny(pats, mp+"."+sig.name) {
				return
			}
		}
		if d != nil {
			sig = m.record(d, obj) // the class's declaration: a record of m's own
		}
		k, wd := sig.vcdKind()
		sig.vid = int32(t.w.Var(k, wd, sig.name))
		sig.tid = int32(len(t.sigs))
		sig.setTraced(true)
		t.sigs = append(t.sigs, sig)
	})
	// Children and arrays in the order they were declared.
	k, na := 0, m.numArrays()
	for j := 0; j <= len(m.children); j++ {
		for ; k < na && m.array(k).pos() == j; k++ {
			s.declareArray(m.array(k), t, pats, selected)
		}
		if j == len(m.children) {
			break
		}
		c := m.kid(j)
		sel := selected || matchAny(pats, c.Path())
		if sel || subtreeMayMatch(c, pats) {
			s.declare(c, t, pats, sel, false)
		}
	}
	if !isTop {
		t.w.Upscope()
	}
}

func (s *Sim) declareArray(a *Array, t *tracer, pats []string, selected bool) {
	for i := 0; i < int(a.n); i++ {
		sel, any := selected, selected
		if !selected {
			sel, any = a.mayMatch(pats, i)
		}
		if any {
			s.declare(a.scope(i), t, pats, sel, false)
		}
	}
}

// subtreeMayMatch avoids empty scopes for modules with nothing selected.
func subtreeMayMatch(m *Module, pats []string) bool {
	found := false
	mp := m.Path()
	m.decls(func(sig *signal, _ port, _ *decl, _ unsafe.Pointer) {
		if !found && !sig.noTrace && sig.enc != encNone && matchAny(pats, mp+"."+sig.name) {
			found = true
		}
	})
	if found {
		return true
	}
	for k := range m.numArrays() {
		a := m.array(k)
		for i := 0; i < int(a.n); i++ {
			if _, any := a.mayMatch(pats, i); any {
				return true
			}
		}
	}
	for j := range m.children {
		if c := m.kid(j); matchAny(pats, c.Path()) || subtreeMayMatch(c, pats) {
			return true
		}
	}
	return false
}

// TracedSignals lists what Trace declared, in declaration order.
func (s *Sim) TracedSignals() []TracedSignal {
	if s.tracer == nil {
		return nil
	}
	out := make([]TracedSignal, 0, len(s.tracer.sigs))
	for _, sig := range s.tracer.sigs {
		k, w := sig.vcdKind()
		out = append(out, TracedSignal{Path: vcdPath(sig), Module: vcdModPath(sig.owner), Width: w, Kind: k, Enum: sig.enum})
	}
	return out
}

func vcdPath(sig *signal) string { return vcdModPath(sig.owner) + "." + sig.name }

func vcdModPath(m *Module) string {
	p := m.Parent()
	if p == nil {
		return "top"
	}
	return vcdModPath(p) + "." + m.name
}

// EndTrace writes the trailing clock edges up to the current cycle and
// flushes. The caller closes the file.
func (s *Sim) EndTrace() error {
	if s.tracer == nil {
		return nil
	}
	t := s.tracer
	s.tracer = nil
	s.traceEpoch++
	for _, sig := range t.sigs {
		sig.tid = -1
		sig.setTraced(false)
	}
	return t.w.Close(s.now * t.period)
}

// dump writes the changes committed in the cycle that just ended; they are
// the values seen from the clock edge that starts cycle s.now.
func (t *tracer) dump(s *Sim) {
	if len(s.changed) == 0 {
		return
	}
	ch := s.changed
	slices.SortFunc(ch, func(a, b *signal) int { return int(a.tid - b.tid) })
	t.w.At(s.now * t.period)
	for _, sig := range ch {
		sig.dump(t.w)
	}
}

func splitGlobs(g string) []string { return SplitGlobs(g) }

// SplitGlobs splits a comma-separated list of patterns. A comma inside
// parentheses is not a separator: it separates the indices of one
// element, so r(3,4,5) is r(3)(4)(5), the name Idx gives a router at
// coordinates (3, 4, 5), and r(*,0,0) picks a line of them.
func SplitGlobs(g string) []string {
	var out []string
	add := func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ',' && depth == 0:
			add(b.String())
			b.Reset()
			continue
		case c == ',':
			b.WriteString(")(")
			continue
		}
		b.WriteByte(g[i])
	}
	add(b.String())
	return out
}

func matchAny(pats []string, path string) bool {
	if len(pats) == 0 {
		return true
	}
	for _, p := range pats {
		if Glob(p, path) {
			return true
		}
	}
	return false
}

// Glob matches path against pattern: '*' is any run of characters (dots
// included), '?' is one character, everything else is literal.
func Glob(pattern, path string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for px < len(pattern) || nx < len(path) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(path) {
					px++
					nx++
					continue
				}
			default:
				if nx < len(path) && path[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(path) {
			starNx++
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// ValidateGlobs reports a pattern that cannot match any signal name.
func ValidateGlobs(g string) error {
	for _, p := range splitGlobs(g) {
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !(validName(string(c)) || c == '.' || c == '*' || c == '?') {
				return fmt.Errorf("bad character %q in trace pattern %q; allowed: letters, digits, _ ( ) . * ?", c, p)
			}
		}
	}
	return nil
}
