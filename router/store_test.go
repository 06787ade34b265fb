package router

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/packet"
)

// A record has one owner at a time: a slot whose record was passed on
// frees only the slot when its tail has left; one that kept its record
// frees both, and a payload reference goes with it. The pool hands out
// the last record freed first (still in the cache).
func TestStoreOwnership(t *testing.T) {
	var s store
	a := s.put(&packet.Packet{ID: 1, Payload: []uint64{7}}, 4, 0)
	recA := s.at(a).p
	require.Equal(t, uint64(1), recA.ID)
	require.Equal(t, uint64(recChunk), s.made)

	// A passed record: the next router adopts it, the sender's slot goes
	// without it.
	s.at(a).passed = true
	b := s.adopt(recA, 8, 1)
	require.NotEqual(t, a, b)
	require.Same(t, recA, s.at(b).p, "adopt copies no header")
	free := len(s.recs)
	s.retire(a, 10)
	s.reap(9)
	require.Len(t, s.recs, free, "a slot is not freed before its tail has left")
	s.reap(10)
	require.Len(t, s.recs, free, "a passed record is not the sender's to free")
	require.Equal(t, []uint64{7}, recA.Payload)

	// The last owner frees it, payload reference dropped, and the pool
	// hands it out next.
	s.retire(b, 20)
	s.reap(20)
	require.Len(t, s.recs, free+1)
	require.Nil(t, recA.Payload)
	c := s.put(&packet.Packet{ID: 3}, 2, 21)
	require.Same(t, recA, s.at(c).p, "the last record freed is taken first")
	require.Equal(t, uint64(3), recA.ID)
	require.Equal(t, uint64(recChunk), s.made, "no new chunk while records are free")
}
