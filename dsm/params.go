package dsm

import (
	"fmt"

	"github.com/hwcoll/hwcoll/internal/param"
)

// Directory is the home's directory organisation.
type Directory uint8

const (
	// FullMap keeps a presence bit per node for every line.
	FullMap Directory = iota
	// LimitedBroadcast keeps Pointers sharer pointers (Dir_i B): past
	// them the entry is marked broadcast and an invalidation goes to
	// every node.
	LimitedBroadcast
	// LimitedNoBroadcast keeps Pointers sharer pointers (Dir_i NB): a
	// new sharer past them takes the place of one the home invalidates.
	LimitedNoBroadcast
)

// Directories names the organisations (dsm.directory).
var Directories = []string{"full-map", "limited-broadcast", "limited-no-broadcast"}

func (d Directory) String() string { return Directories[d] }

// ParseDirectory is the organisation of a dsm.directory name.
func ParseDirectory(s string) (Directory, error) {
	for i, n := range Directories {
		if n == s {
			return Directory(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a directory; allowed: full-map | limited-broadcast | limited-no-broadcast", s)
}

// Consistency is the processors' memory consistency model.
type Consistency uint8

const (
	// SC blocks the processor on every miss: references perform in
	// program order.
	SC Consistency = iota
	// RC retires stores into the transaction buffers and blocks on load
	// misses; Fence (an acquire or release) waits for the stores.
	RC
)

func (c Consistency) String() string { return [...]string{"sc", "rc"}[c] }

// ParseConsistency is the model of a dsm.consistency name.
func ParseConsistency(s string) (Consistency, error) {
	switch s {
	case "sc":
		return SC, nil
	case "rc":
		return RC, nil
	}
	return 0, fmt.Errorf("%q is not a consistency model; allowed: sc | rc", s)
}

// Params are a DSM machine's: the nodes' caches, directories, controllers
// and network interfaces (seed 001 §5.1, Fig. 3).
type Params struct {
	Nodes       int
	LineWords   int // words (8 bytes) per line
	CacheLines  int // lines per cache
	Ways        int
	TBufs       int // transaction buffers per node: outstanding misses
	Directory   Directory
	Pointers    int // limited directories' pointers per entry
	Consistency Consistency
	Classes     int     // virtual networks: 2 (requests, replies) or 1
	CPI         float64 // cycles per instruction of Compute
	HitCycles   uint64  // a cache hit
	// HandlerCycles is a controller handler's occupancy; MemoryCycles is
	// added to the handlers that read or write the home's memory.
	HandlerCycles, MemoryCycles uint64
	// Queue is the packets a network interface's output queue of each
	// class holds before a handler that sends on it must wait.
	Queue int
	// RunAhead is how far (cycles) a processor runs hits and computation
	// ahead of the clock before it yields (0: yields at every reference).
	RunAhead uint64
	// PacketCycles is the cycles a message of so many bytes holds a link.
	PacketCycles func(bytes uint32) uint32
	// HeaderBytes is a message's header; a data message adds the line.
	HeaderBytes uint32
	// Check records every reference for the consistency checks and keeps
	// the coherence counters the invariant checks read (tests).
	Check bool
}

// DefaultParams are the defaults of the dsm.* keys for nodes nodes.
func DefaultParams(nodes int) Params {
	return Params{Nodes: nodes, LineWords: 8, CacheLines: 2048, Ways: 4, TBufs: 8, Directory: FullMap,
		Pointers: 4, Consistency: SC, Classes: 2, CPI: 1, HitCycles: 1, HandlerCycles: 4, MemoryCycles: 20,
		Queue: 4, RunAhead: 16, HeaderBytes: 16, PacketCycles: func(b uint32) uint32 { return (b + 3) / 4 }}
}

// check reports the first parameter out of range (a *param.Error naming
// the field; the experiment layer names its key).
func (p *Params) check() error {
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	switch {
	case p.Nodes < 1 || p.Nodes > 1<<15:
		return param.Errorf("dsm.Params.Nodes", "%d nodes; allowed: 1 to 32768", p.Nodes)
	case !pow2(p.LineWords) || p.LineWords > 64:
		return param.Errorf("dsm.Params.LineWords", "%d-byte lines; allowed: a power of two from 8 to 512", 8*p.LineWords)
	case p.Ways < 1 || p.CacheLines%p.Ways != 0 || !pow2(p.CacheLines/p.Ways):
		return param.Errorf("dsm.Params.CacheLines", "%d lines of %d ways ({dsm.Params.Ways}); allowed: ways dividing the lines into a power-of-two number of sets", p.CacheLines, p.Ways)
	case p.TBufs < 1 || p.TBufs > 64:
		return param.Errorf("dsm.Params.TBufs", "%d; allowed: 1 to 64", p.TBufs)
	case p.Directory != FullMap && (p.Pointers < 1 || p.Pointers > 64):
		return param.Errorf("dsm.Params.Pointers", "%d; allowed: 1 to 64", p.Pointers)
	case p.Classes != 1 && p.Classes != 2:
		return param.Errorf("dsm.Params.Classes", "%d; allowed: 2 (requests and replies apart) or 1", p.Classes)
	case p.Queue < 1:
		return param.Errorf("dsm.Params.Queue", "%d; allowed: at least 1", p.Queue)
	case !(p.CPI > 0 && p.CPI <= 1000):
		return param.Errorf("dsm.Params.CPI", "%g; allowed: more than 0, at most 1000", p.CPI)
	}
	return nil
}
