package dsm

import (
	"fmt"
	"iter"
)

// Addr is a word address in the shared space: word a is bytes 8a..8a+7.
// Lines are LineWords consecutive words; a line's home is the node its
// line number interleaves to (line mod nodes).
type Addr = uint64

// Proc is what a program sees of its processor: the shared-memory
// references the paper's application layer issues (seed 001 §6), each
// timed by the processor, cache, directory and network underneath.
// Values are 64-bit words; a program keeps floats with math.Float64bits.
type Proc interface {
	// ID is this processor's number, 0..Procs()-1.
	ID() int
	Procs() int
	// Load returns the word at a; it blocks the processor on a miss.
	Load(a Addr) uint64
	// Store writes v at a. Under sc it blocks on a miss; under rc it
	// retires into a transaction buffer (blocking only when every entry
	// is taken).
	Store(a Addr, v uint64)
	// Swap atomically writes v at a and returns the word it held
	// (test-and-set). It takes the line exclusive and blocks until then.
	Swap(a Addr, v uint64) uint64
	// FetchAdd atomically adds d to the word at a and returns the old word.
	FetchAdd(a Addr, d uint64) uint64
	// Fence waits until every earlier store has performed (an acquire or
	// release under rc; under sc every store has already).
	Fence()
	// Compute spends instructions × dsm.cpi cycles of local work (the
	// paper's §6 estimate of computation between two references).
	Compute(instructions uint64)
}

// Program is an execution-driven DSM program: Setup lays its shared data
// out and fills the initial values, Run is every processor's code (the
// same function, branching on p.ID()), Verify checks the answer in the
// final memory.
type Program interface {
	Name() string
	Setup(s *Space, procs int) error
	Run(p Proc)
	Verify(mem func(Addr) uint64) error
}

// Space is the shared address space a program lays out before the run:
// line-aligned allocations and their initial values.
type Space struct {
	LineWords int
	Words     []uint64 // initial values; len is the space's size
}

// NewSpace is an empty space of lines of lineWords words.
func NewSpace(lineWords int) *Space { return &Space{LineWords: lineWords} }

// Alloc reserves words words starting on a fresh line, zeroed, and
// returns the first one's address.
func (s *Space) Alloc(words int) Addr {
	lw := s.LineWords
	a := (len(s.Words) + lw - 1) / lw * lw
	n := (a + words + lw - 1) / lw * lw
	s.Words = append(s.Words, make([]uint64, n-len(s.Words))...)
	return Addr(a)
}

// Set gives the word at a its initial value.
func (s *Space) Set(a Addr, v uint64) { s.Words[a] = v }

// Get is the word at a as the layout left it.
func (s *Space) Get(a Addr) uint64 { return s.Words[a] }

// Functional runs prog on procs processors against a plain memory with no
// timing: the functional model the timed runs are checked against. Every
// reference is one step; the processors take steps round robin, one each
// in turn, so locks and barriers behave as they would on a machine. It
// returns the final memory and the references made.
func Functional(prog Program, procs, lineWords int) ([]uint64, uint64, error) {
	s := NewSpace(lineWords)
	if err := prog.Setup(s, procs); err != nil {
		return nil, 0, err
	}
	mem := s.Words
	type step struct{}
	var refs uint64
	ps := make([]*funcProc, procs)
	nexts := make([]func() (step, bool), procs)
	stops := make([]func(), procs)
	for i := range ps {
		fp := &funcProc{id: i, n: procs, mem: mem, refs: &refs}
		ps[i] = fp
		nexts[i], stops[i] = iter.Pull(func(yield func(step) bool) {
			fp.yield = func() bool { return yield(step{}) }
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(stopped); !ok {
						panic(r)
					}
				}
			}()
			prog.Run(fp)
		})
	}
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	for live := procs; live > 0; {
		live = 0
		for i := range nexts {
			if nexts[i] == nil {
				continue
			}
			if _, ok := nexts[i](); !ok {
				nexts[i] = nil
				continue
			}
			live++
		}
	}
	if err := prog.Verify(func(a Addr) uint64 { return mem[a] }); err != nil {
		return mem, refs, fmt.Errorf("%s: %v", prog.Name(), err)
	}
	return mem, refs, nil
}

// funcProc is a processor of the functional model: each reference acts
// on the memory at once, then yields its turn.
type funcProc struct {
	id, n int
	mem   []uint64
	refs  *uint64
	yield func() bool
}

func (p *funcProc) ID() int    { return p.id }
func (p *funcProc) Procs() int { return p.n }
func (p *funcProc) turn() {
	*p.refs++
	if !p.yield() {
		panic(stopped{}) // the run ended (another processor's program panicked): unwind
	}
}
func (p *funcProc) Load(a Addr) uint64 {
	v := p.mem[a]
	p.turn()
	return v
}
func (p *funcProc) Store(a Addr, v uint64) { p.mem[a] = v; p.turn() }
func (p *funcProc) Swap(a Addr, v uint64) uint64 {
	old := p.mem[a]
	p.mem[a] = v
	p.turn()
	return old
}
func (p *funcProc) FetchAdd(a Addr, d uint64) uint64 {
	old := p.mem[a]
	p.mem[a] = old + d
	p.turn()
	return old
}
func (p *funcProc) Fence()                      {}
func (p *funcProc) Compute(instructions uint64) {}
