package msglayer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
)

// One message of each protocol between two nodes of a 4×4 torus with the
// default (BG/L, 700 MHz) parameters: each arrives complete, matched to
// its receive, and its latency is at least the software overheads on its
// path.
func TestEachProtocolDelivers(t *testing.T) {
	p := msglayer.DefaultParams()
	for _, c := range []struct {
		proto msglayer.Protocol
		bytes uint32
		acks  uint64
	}{
		{msglayer.Single, 200, 0},
		{msglayer.Single, 0, 0},
		{msglayer.Eager, 1000, 0},
		{msglayer.Midsize, 5000, 1},
		{msglayer.Rendezvous, 5000, 1},
		{msglayer.Rendezvous, 100, 1},
		{msglayer.Auto, 100_000, 1},
	} {
		t.Run(c.proto.String(), func(t *testing.T) {
			m := newMachine(t, []int{4, 4}, &p, 1)
			for _, e := range m.eps {
				e.Record = true
			}
			m.script(t, []op{
				{at: 0, node: 5, recv: true, req: msglayer.SendReq{Dst: 0, Tag: 7}},
				{at: 10, node: 0, req: msglayer.SendReq{Dst: 5, Tag: 7, Bytes: c.bytes, Proto: c.proto}},
			})
			m.drain(t, 1, 10_000_000)
			log := m.eps[5].Log
			require.Len(t, log, 1)
			d := log[0]
			require.Equal(t, c.bytes, d.Bytes)
			require.Equal(t, uint32(7), d.Tag)
			require.Equal(t, uint32(0), d.Src)
			require.False(t, d.Unexpected)
			n := uint64(p.Shape.Packets(c.bytes))
			require.Equal(t, c.acks, m.eps[0].AcksReceived)
			require.Equal(t, n+c.acks, m.total().PacketsReceived)
			// postsend, msgsend_adv per packet, dispatch of the last
			// packet, recvnew and recvdone at least
			floor := p.PostCycles + n*p.PacketCycles + p.DispatchCycles + p.MatchCycles + p.RecvDoneCycles
			require.GreaterOrEqual(t, d.Latency(), floor)
			require.Equal(t, uint64(1), m.eps[0].Sent)
			if c.proto == msglayer.Single {
				require.Equal(t, uint64(1), m.eps[5].FastPath)
			}
			require.Zero(t, m.eps[5].Open())
		})
	}
}

// A message presented before its receive is posted waits in the
// unexpected queue; the receive posted later takes it.
func TestUnexpectedThenPosted(t *testing.T) {
	p := msglayer.DefaultParams()
	m := newMachine(t, []int{2, 2}, &p, 1)
	m.eps[3].Record = true
	m.script(t, []op{
		{at: 0, node: 0, req: msglayer.SendReq{Dst: 3, Tag: 1, Bytes: 600}},
		{at: 1, node: 0, req: msglayer.SendReq{Dst: 3, Tag: 2, Bytes: 10}},
		{at: 200_000, node: 3, recv: true, req: msglayer.SendReq{Dst: 0, Tag: 2}},
		{at: 200_001, node: 3, recv: true, req: msglayer.SendReq{Dst: 0, Tag: 1}},
	})
	m.drain(t, 2, 1_000_000)
	log := m.eps[3].Log
	require.Len(t, log, 2)
	require.Equal(t, uint32(2), log[0].Tag)
	require.Equal(t, uint32(0), log[0].Recv)
	require.Equal(t, uint32(1), log[1].Tag)
	require.Equal(t, uint32(1), log[1].Recv)
	require.True(t, log[0].Unexpected && log[1].Unexpected)
	require.Equal(t, uint64(2), m.eps[3].Unexpected)
	require.Less(t, log[0].Presented, log[0].At)
	require.GreaterOrEqual(t, log[0].At, uint64(200_000+p.RecvDoneCycles))
}
