package rtl

import (
	"fmt"
	"strings"
	"unsafe"
)

// Problem is one elaboration error: the hierarchical path it concerns, the
// source line that declared it, and what is wrong.
type Problem struct {
	Path  string
	Where string
	Msg   string
}

func (p Problem) String() string { return p.Path + ": " + p.Msg + " (" + p.Where + ")" }

// ElabError lists every problem found by Build.
type ElabError struct{ Problems []Problem }

func (e *ElabError) Error() string {
	if len(e.Problems) == 1 {
		return "elaboration: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "elaboration: %d problems: ", len(e.Problems))
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

func (s *Sim) elaborate() error {
	var probs []Problem
	add := func(path string, pc uintptr, msg string) {
		probs = append(probs, Problem{Path: path, Where: where(pc), Msg: msg})
	}
	// One map for the modules, cleared in between (clear keeps its
	// buckets): a large design has a module per port. Clearing costs what
	// the map can hold, so one that a module with many children (the top
	// of a large network) has grown is dropped instead.
	seen := map[string]uintptr{}
	walk(&s.top, func(m *Module) {
		if len(seen) > 64 {
			seen = map[string]uintptr{}
		} else {
			clear(seen)
		}
		check := func(name string, pc uintptr) {
			if !validName(name) {
				add(m.Path()+"."+name, pc, fmt.Sprintf("invalid name %q: use letters, digits, '_' and (i) indices", name))
			}
			if first, dup := seen[name]; dup {
				add(m.Path()+"."+name, pc, "duplicate name, first declared at "+where(first))
				return
			}
			seen[name] = pc
		}
		for _, c := range m.children {
			check(c.name, c.pc)
		}
		for _, a := range m.arrayList() {
			for i := 0; i < int(a.n); i++ {
				check(Idx(a.name, i), a.pc)
			}
		}
		// Every register, probe, port and line end declares a signal.
		m.decls(func(sig *signal, p port, _ *decl, _ unsafe.Pointer) {
			check(sig.name, sig.pc)
			if p != nil {
				p.problems(add)
			}
		})
	})
	if len(probs) > 0 {
		return &ElabError{Problems: probs}
	}
	return nil
}
