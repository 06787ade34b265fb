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
	var seen names
	fields := fieldChecker{sim: s, probs: &probs}
	var pl poller
	if !walkWhile(&s.top, func(m *Module) bool {
		if pl.stop() {
			return false
		}
		fields.check(m)
		seen.reset()
		check := func(name string, pc uintptr) {
			if !validName(name) {
				add(m.Path()+"."+name, pc, fmt.Sprintf("invalid name %q: use letters, digits, '_' and (i) indices", name))
			}
			if first, dup := seen.add(name, pc); dup {
				add(m.Path()+"."+name, pc, "duplicate name, first declared at "+where(first))
			}
		}
		for _, c := range m.children {
			check(c.name, c.pc)
		}
		for k := range m.numArrays() {
			a := m.array(k)
			for i := 0; i < int(a.n); i++ {
				check(Idx(a.site.name, i), a.site.pc)
			}
		}
		// Every register, probe, port and line end declares a signal.
		m.decls(func(sig *signal, p port, _ *decl, _ unsafe.Pointer) {
			check(sig.name, sig.pc)
			if p != nil {
				p.problems(add)
			}
		})
		return true
	}) {
		return ErrInterrupted
	}
	fields.finish()
	if len(probs) > 0 {
		return &ElabError{Problems: probs}
	}
	return nil
}

// names finds a module's duplicate names: a large design has a module per
// port, most with a few names, which a scan of a short list checks faster
// than a map's hashing (the 64×32×32 torus has millions of names); a
// module with many (the top of a large network) gets a map.
type names struct {
	list []nameAt
	m    map[string]uintptr
}

type nameAt struct {
	name string
	pc   uintptr
}

const namesScan = 16 // names a module may have before a map is used

func (n *names) reset() {
	clear(n.list)
	n.list = n.list[:0]
	n.m = nil
}

// add records name, declared at pc, or returns where it was first
// declared.
func (n *names) add(name string, pc uintptr) (first uintptr, dup bool) {
	if n.m == nil {
		for _, e := range n.list {
			if e.name == name {
				return e.pc, true
			}
		}
		if len(n.list) < namesScan {
			n.list = append(n.list, nameAt{name, pc})
			return 0, false
		}
		n.m = make(map[string]uintptr, 2*namesScan)
		for _, e := range n.list {
			n.m[e.name] = e.pc
		}
	}
	if first, dup := n.m[name]; dup {
		return first, true
	}
	n.m[name] = pc
	return 0, false
}
