package dsm

import (
	"fmt"
	"math"
	"sync"

	"github.com/hwcoll/hwcoll/rtl"
)

// Machine is a DSM machine's nodes (seed 001 §5, Fig. 3): at every node a
// processor with its cache and a controller with the home's directory and
// memory and the network interface, whose links the caller connects to a
// router network's node ports (Links).
type Machine struct {
	P     Params
	Prog  Program
	CPUs  []*Processor
	NCs   []*Controller
	Lines uint64 // lines in the shared space

	port     NodePort
	pool     *pool
	watch    uint64 // the line whose states the probes show
	cpiMilli uint64
	mu       sync.Mutex
	err      error
	skipInv  bool // a mutation for the tests: the next invalidation is not sent
}

// New builds the machine under parent with prog laid out in its shared
// space; port says how the network interfaces attach to the routers;
// watch is the line the probes show (its directory entry at its home,
// its state in every cache).
func New(parent *rtl.Module, p Params, prog Program, port NodePort, watch uint64) (*Machine, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s := NewSpace(p.LineWords)
	if err := prog.Setup(s, p.Nodes); err != nil {
		return nil, fmt.Errorf("%s: %v", prog.Name(), err)
	}
	m := &Machine{P: p, Prog: prog, port: port, pool: newPool(p.LineWords), watch: watch,
		cpiMilli: uint64(math.Round(p.CPI * 1000))}
	lines := (len(s.Words) + p.LineWords - 1) / p.LineWords
	m.Lines = uint64(lines)
	per := (lines + p.Nodes - 1) / p.Nodes
	mod := parent
	for i := 0; i < p.Nodes; i++ {
		m.CPUs = append(m.CPUs, newProcessor(mod, i, m, prog))
		m.NCs = append(m.NCs, newController(mod, i, m, per))
	}
	for l := 0; l < lines; l++ {
		d := &m.NCs[l%p.Nodes].dir
		copy(d.data(l/p.Nodes), s.Words[l*p.LineWords:min(len(s.Words), (l+1)*p.LineWords)])
	}
	for i := range m.CPUs {
		cpu, nc := m.CPUs[i], m.NCs[i]
		rtl.ConnectLine(&cpu.ToNC, &nc.FromCPU, 1)
		rtl.ConnectLine(&nc.ToCPU, &cpu.FromNC, 1)
	}
	return m, nil
}

// home is the node a line interleaves to; index is its entry there.
func (m *Machine) home(line uint64) int32 { return int32(line % uint64(m.P.Nodes)) }
func (m *Machine) index(line uint64) int  { return int(line / uint64(m.P.Nodes)) }

// fail records the first protocol error (a message no state expects).
func (m *Machine) fail(f string, a ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = fmt.Errorf(f, a...)
	}
}

// Err is the first protocol error, or nil.
func (m *Machine) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Done reports whether every processor's program has ended.
func (m *Machine) Done() bool {
	for _, p := range m.CPUs {
		if !p.done {
			return false
		}
	}
	return true
}

// Completion is the cycle the last program ended.
func (m *Machine) Completion() uint64 {
	var c uint64
	for _, p := range m.CPUs {
		c = max(c, p.DoneAt)
	}
	return c
}

// Stop ends the programs' coroutines (a run that stopped early).
func (m *Machine) Stop() {
	for _, p := range m.CPUs {
		p.halt()
	}
}

// Word is the current value of the word at a: the modified copy in a
// cache if there is one, else the home's memory (between cycles).
func (m *Machine) Word(a Addr) uint64 {
	lw := uint64(m.P.LineWords)
	line := a / lw
	for _, p := range m.CPUs {
		if i := p.cache.find(line); i >= 0 && p.cache.state[i] == Modified {
			return p.cache.data[i*int(lw)+int(a%lw)]
		}
	}
	for _, p := range m.CPUs { // a writeback the home has not taken yet
		if k := p.tb.findWB(line); k >= 0 {
			return p.tb.wbs[k].data[a%lw]
		}
	}
	nc := m.NCs[m.home(line)]
	return nc.dir.data(m.index(line))[a%lw]
}

// Verify checks the program's answer in the final memory.
func (m *Machine) Verify() error { return m.Prog.Verify(m.Word) }

// Counts are a run's totals.
type Counts struct {
	References, Loads, Stores, Misses, Upgrades, Writebacks uint64
	Messages                                                [numTypes]uint64
	Handled                                                 uint64
}

// Counts adds up the nodes' counters.
func (m *Machine) Counts() Counts {
	var c Counts
	for _, p := range m.CPUs {
		c.References += p.Refs
		c.Loads += p.Loads
		c.Stores += p.Stores
		c.Misses += p.Misses
		c.Upgrades += p.Upgrades
		c.Writebacks += p.Writebacks
	}
	for _, n := range m.NCs {
		for t := range n.Sent {
			c.Messages[t] += n.Sent[t]
		}
		c.Handled += n.Handled
	}
	return c
}
