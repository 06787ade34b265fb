package dsm

import (
	"cmp"
	"fmt"
	"slices"
)

// CheckCoherence checks, between cycles, the invariants of every line
// some cache holds: one writer or many readers, and the home's directory
// covering every copy (a shared copy is among the sharers or the sharer a
// Dir_i NB home is invalidating; a modified one is the owner's).
func (m *Machine) CheckCoherence() error {
	type holders struct{ s, m int32 }
	seen := map[uint64]*holders{}
	for n, p := range m.CPUs {
		c := &p.cache
		for i, tag := range c.tag {
			if tag == 0 || c.state[i] == Pending || c.state[i] == Invalid {
				continue
			}
			line := tag - 1
			h := seen[line]
			if h == nil {
				h = &holders{}
				seen[line] = h
			}
			if c.state[i] == Modified {
				h.m++
			} else {
				h.s++
			}
			if err := m.covers(line, int32(n), c.state[i]); err != nil {
				return err
			}
		}
	}
	for line, h := range seen {
		if h.m > 1 || h.m == 1 && h.s > 0 {
			return fmt.Errorf("line %d: %d modified and %d shared copies", line, h.m, h.s)
		}
	}
	return nil
}

// covers checks that line's home knows node n holds it in state s.
func (m *Machine) covers(line uint64, n int32, s LineState) error {
	nc := m.NCs[m.home(line)]
	d, i := &nc.dir, m.index(line)
	if s == Modified {
		if d.state[i] != Exclusive || d.owner[i] != n {
			return fmt.Errorf("line %d: node %d holds it modified; its home has state %d, owner %d", line, n, d.state[i], d.owner[i])
		}
		return nil
	}
	if d.has(i, n) {
		return nil
	}
	if t := nc.txnOf(i); t != nil && t.evicting == n {
		return nil
	}
	if d.state[i] == Exclusive && d.owner[i] == n {
		return nil // an upgrade answered: the AckX is on its way
	}
	return fmt.Errorf("line %d: node %d holds a shared copy its home's directory does not list", line, n)
}

// Quiet reports whether no transaction is open anywhere: every buffer,
// queue and home entry empty (what a run waits for after the programs).
func (m *Machine) Quiet() bool {
	for _, p := range m.CPUs {
		if p.tb.n > 0 || len(p.tb.wbs) > 0 || p.out.Len() > 0 {
			return false
		}
	}
	for _, c := range m.NCs {
		if c.in[0].Len()+c.in[1].Len()+c.local.Len()+c.out[0].Len()+c.out[1].Len()+c.toCPU.Len() > 0 || len(c.staged) > 0 {
			return false
		}
		if len(c.dir.txns) != len(c.dir.freeTxn) {
			return false
		}
	}
	return true
}

// Order is the references of a run with Params.Check in the order they
// performed: by cycle, then processor, then program order.
func (m *Machine) Order() []Ref {
	var all []Ref
	for _, p := range m.CPUs {
		all = append(all, p.Log...)
	}
	slices.SortStableFunc(all, func(a, b Ref) int {
		return cmp.Or(cmp.Compare(a.Cycle, b.Cycle), cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Seq, b.Seq))
	})
	return all
}

// CheckConsistency replays the performed references on a functional
// memory holding the initial space: every load must return the last store
// to its address in that order. Under sc the order must also keep every
// processor's program order (the execution is sequentially consistent);
// under rc a load served by the processor's own retired store is checked
// against that processor's last store to the address instead.
func (m *Machine) CheckConsistency(initial []uint64) error {
	mem := slices.Clone(initial)
	order := m.Order()
	last := make([]uint64, len(m.CPUs))
	if err := m.checkForwarded(initial); err != nil {
		return err
	}
	for _, r := range order {
		if r.Kind == RefRetired {
			continue // performs later
		}
		if m.P.Consistency == SC {
			if r.Seq <= last[r.Proc] {
				return fmt.Errorf("processor %d: reference %d performed after %d (program order broken)", r.Proc, r.Seq, last[r.Proc])
			}
			last[r.Proc] = r.Seq
		}
		switch r.Kind {
		case RefLoad:
			if r.Fwd {
				continue // checked in program order (checkForwarded)
			}
			if want := mem[r.Addr]; r.Val != want {
				return fmt.Errorf("cycle %d: processor %d loaded %#x from word %d; the last store left %#x", r.Cycle, r.Proc, r.Val, r.Addr, mem[r.Addr])
			}
		case RefStore:
			mem[r.Addr] = r.Val
		case RefAtomic:
			if r.Old != mem[r.Addr] {
				return fmt.Errorf("cycle %d: processor %d's atomic read %#x from word %d; the last store left %#x", r.Cycle, r.Proc, r.Old, r.Addr, mem[r.Addr])
			}
			mem[r.Addr] = r.Val
		}
	}
	return nil
}

// checkForwarded checks every load a processor's own retired store served
// (rc) against that processor's last store to the word in program order.
func (m *Machine) checkForwarded(initial []uint64) error {
	for _, p := range m.CPUs {
		log := slices.Clone(p.Log)
		slices.SortStableFunc(log, func(a, b Ref) int { return cmp.Compare(a.Seq, b.Seq) })
		mine := map[Addr]uint64{}
		for _, r := range log {
			switch {
			case r.Kind == RefStore && r.Fwd: // retired before, logged then
			case r.Kind != RefLoad:
				mine[r.Addr] = r.Val
			case r.Fwd:
				if v, ok := mine[r.Addr]; !ok || v != r.Val {
					return fmt.Errorf("processor %d: reference %d forwarded %#x from word %d; its last store there was %#x", p.node, r.Seq, r.Val, r.Addr, v)
				}
			}
		}
	}
	return nil
}
