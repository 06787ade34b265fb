package msglayer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
	"github.com/hwcoll/hwcoll/stats"
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
			var lat stats.Latency
			m.eps[5].Lat = &lat
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
			require.Equal(t, uint64(1), lat.N())
			require.Equal(t, d.Latency(), lat.Max())
			require.Equal(t, d.Latency(), m.eps[5].LatencySum)
			require.Equal(t, d.Latency(), m.eps[5].LatencyMax)
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

// sendOne sends one message of bytes from node 0 to the far corner of a
// 4×4×4 BG/L torus with the default (700 MHz, Table 1) parameters and
// returns the sender's log, the number of its data packets that went
// before the ack arrived, and the delivery.
func sendOne(t *testing.T, p msglayer.Params, proto msglayer.Protocol, bytes uint32) ([]msglayer.SendEvent, int, msglayer.Delivery) {
	t.Helper()
	m := newMachine(t, []int{4, 4, 4}, &p, 1)
	const dst = 42 // (2, 2, 2): 6 hops
	m.eps[0].Record, m.eps[dst].Record = true, true
	m.script(t, []op{
		{at: 0, node: dst, recv: true, req: msglayer.SendReq{Dst: 0}},
		{at: 0, node: 0, req: msglayer.SendReq{Dst: dst, Bytes: bytes, Proto: proto}},
	})
	m.drain(t, 1, 10_000_000)
	log := m.eps[0].SendLog
	var ack uint64
	for _, ev := range log {
		if ev.Incoming {
			ack = ev.At
		}
	}
	require.NotZero(t, ack, "no ack")
	before := 0
	for _, ev := range log {
		if !ev.Incoming && ev.At <= ack {
			before++
		}
	}
	require.Len(t, m.eps[dst].Log, 1)
	return log, before, m.eps[dst].Log[0]
}

// Rendezvous: the first packet alone, then, after its ack, the rest.
func TestRendezvousWaitsForTheAck(t *testing.T) {
	log, before, d := sendOne(t, msglayer.DefaultParams(), msglayer.Rendezvous, 2560)
	require.Equal(t, 1, before)
	require.Equal(t, uint16(0), log[0].Seq)
	require.Equal(t, msglayer.Lead, log[0].Kind)
	require.True(t, log[1].Incoming, "the ack comes before packet 1 goes")
	require.Len(t, log, 11)
	require.Equal(t, uint32(2560), d.Bytes)
}

// Mid-size: the first K packets carry the matching information and go
// without waiting. With K smaller than the round trip the sender stops
// after K until the ack; with K sized by LeadsFor it never stops, and the
// message arrives sooner than by rendezvous.
func TestMidsizeStopsOnlyWhenItsLeadsAreSpent(t *testing.T) {
	p := msglayer.DefaultParams()
	p.Leads = 2
	log, before, short := sendOne(t, p, msglayer.Midsize, 2560)
	require.Equal(t, 2, before, "K = 2: two packets, then the wait for the ack")
	for i, ev := range log[:2] {
		require.Equal(t, msglayer.Lead, ev.Kind, "packet %d", i)
	}
	require.True(t, log[2].Incoming)
	require.Equal(t, msglayer.Data, log[3].Kind)

	p.Leads = 8
	_, before, long := sendOne(t, p, msglayer.Midsize, 2560)
	require.Greater(t, before, 2, "K = 8 outlasts the round trip: the sender did not stop")
	require.LessOrEqual(t, before, 8)
	_, _, rdv := sendOne(t, p, msglayer.Rendezvous, 2560)
	t.Logf("2560 B over 6 hops: rendezvous %d cycles, mid-size K=2 %d, K=8 %d (%d packets before the ack)",
		rdv.Latency(), short.Latency(), long.Latency(), before)
	require.Less(t, long.Latency(), short.Latency())
	require.Less(t, short.Latency(), rdv.Latency())
}

// With Params.HighPriorityLead packet 0 of every message, and only it,
// goes with SL = 1 (the high-priority VC once routing maps it there).
func TestHighPriorityLead(t *testing.T) {
	for _, hp := range []bool{false, true} {
		p := msglayer.DefaultParams()
		p.HighPriorityLead = hp
		log, _, _ := sendOne(t, p, msglayer.Midsize, 2000)
		n := 0
		for _, ev := range log {
			if ev.Incoming {
				continue
			}
			n++
			want := uint8(0)
			if hp && ev.Seq == 0 {
				want = 1
			}
			require.Equal(t, want, ev.SL, "high priority %v, packet %d", hp, ev.Seq)
		}
		require.Equal(t, 8, n)
	}
}
