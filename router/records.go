package router

import (
	"math"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// A packet record moves with its packet from router to router, so it is
// freed into the pool of the partition that holds it last, whichever
// made it: the pools follow the packets, as the slots do. Where traffic
// flows one way across the partitions of a split Sim (a hot spot), the
// receiving partition's pool would grow, and the heap, for as long as
// the run, while the sending one made new records without end: an 8×8
// torus on two workers made a record for one packet in twenty. So a
// partition's pool keeps at most spillAt free records; beyond that it
// hands the spillBatch it freed first (the coldest) to the other
// partitions (recExchange), which take them before they make new ones.
// A Sim of one partition frees what it takes: its pool never spills.
const (
	spillBatch = 2 * recChunk
	spillAt    = 4 * recChunk
)

// recExchange is where the partitions of a Sim leave the free records
// they spill.
var recExchange = rtl.NewExchange[*packet.Packet]()

// bound is s, readied on its partition's first use (by module m).
func (s *store) bound(m *rtl.Module) *store {
	if s.spillAt == 0 {
		s.spillAt = math.MaxInt
		if m.Split() {
			s.mod, s.spillAt = m, spillAt
		}
	}
	return s
}

// refill fills the empty pool, with records other partitions spilled if
// there are some, else with a chunk of new ones, and takes one.
//
//go:noinline
func (s *store) refill() *packet.Packet {
	if s.mod != nil {
		s.recs = recExchange.Take(s.mod, s.recs, spillBatch)
	}
	if len(s.recs) == 0 {
		chunk := make([]packet.Packet, recChunk)
		s.made += recChunk
		for i := range chunk {
			s.recs = append(s.recs, &chunk[recChunk-1-i])
		}
	}
	return s.newRec()
}

// spill hands the spillBatch oldest free records to the other
// partitions.
func (s *store) spill() {
	recExchange.Put(s.mod, s.recs[:spillBatch])
	n := copy(s.recs, s.recs[spillBatch:])
	clear(s.recs[n:])
	s.recs = s.recs[:n]
}
