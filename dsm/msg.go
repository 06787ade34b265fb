package dsm

import (
	"fmt"
	"sync"
)

// MsgType is a coherence message's type (seed 001 §5.2: the node
// controller's dispatch tables are keyed by the line's state and this).
type MsgType uint8

// Requests (virtual network 0) and replies (virtual network 1). A cache
// sends GetS, GetX, Upgrade and PutM to the line's home; the home sends
// Inv, Recall (downgrade to shared) and RecallX (invalidate) to caches.
// Every other type is a reply. A reply never waits for the network to
// take another message (its handler's output has a slot reserved in the
// transaction), so the reply network always drains and requests, which
// wait only for reply slots, cannot deadlock each other.
const (
	GetS       MsgType = iota // read miss
	GetX                      // write miss, no copy held
	Upgrade                   // write to a shared copy
	PutM                      // writeback of a modified line (with data)
	Inv                       // home → sharer: invalidate
	Recall                    // home → owner: send the data, keep a shared copy
	RecallX                   // home → owner: send the data, invalidate
	Data                      // home → requester: a shared copy
	DataX                     // home → requester: an exclusive copy
	AckX                      // home → upgrader: exclusive, keep your data
	InvAck                    // sharer → home
	RecallData                // owner → home: the line's data
	WbAck                     // home → evicting owner
	Unblock                   // requester → home: the transaction ended
	numTypes
)

var typeNames = [numTypes]string{"GetS", "GetX", "Upgrade", "PutM", "Inv", "Recall", "RecallX",
	"Data", "DataX", "AckX", "InvAck", "RecallData", "WbAck", "Unblock"}

func (t MsgType) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("MsgType(%d)", uint8(t))
}

// TypeNames lists every message type's name, in type order (the JSON's
// messages_by_type keys).
func TypeNames() []string { return typeNames[:] }

// Class is the virtual network a type travels on: 0 requests, 1 replies.
func (t MsgType) Class() int {
	if t <= RecallX {
		return 0
	}
	return 1
}

// HasData reports whether a message of type t carries the line.
func (t MsgType) HasData() bool {
	return t == PutM || t == Data || t == DataX || t == RecallData
}

// Msg is a coherence message between a cache, its node controller and
// the homes. Data, when the type carries the line, is a buffer of the
// machine's pool owned by whoever holds the message: the receiver copies
// it and gives it back (pool.put).
type Msg struct {
	Type     MsgType
	Src, Dst int32  // nodes
	Req      int32  // the requester a home transaction serves
	Line     uint64 // line number (address / line words)
	Data     []uint64
}

// pool recycles buffers of message words: a message's payload is
// allocated once per buffer, not per message. Any goroutine may take or
// give one (partitions evaluate in parallel); which buffer a message gets
// changes no value, as every word is written before it is sent.
type pool struct {
	words int
	mu    sync.Mutex
	free  [][]uint64
}

// newPool makes buffers of lw data words and two header words (a
// packet's payload: the line, then the requester); a message's Data is
// the first lw, and put recovers the whole buffer from its capacity.
func newPool(lw int) *pool { return &pool{words: lw + 2} }

func (b *pool) get() []uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.free); n > 0 {
		s := b.free[n-1]
		b.free = b.free[:n-1]
		return s[:b.words-2]
	}
	return make([]uint64, b.words-2, b.words)
}

func (b *pool) put(s []uint64) {
	if s == nil {
		return
	}
	b.mu.Lock()
	b.free = append(b.free, s[:cap(s)])
	b.mu.Unlock()
}
