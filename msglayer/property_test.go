package msglayer_test

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/msglayer"
)

// workload is a drawn machine and host script.
type workload struct {
	dims []int
	p    msglayer.Params
	ops  []op
	msgs int
	seed uint64
}

// drawWorkload draws a torus partition (1..3 dimensions of 2..4), cheap
// enough overheads that the network is loaded (so bgl's adaptive routes
// reorder packets), and messages of random sizes, protocols, tags and
// endpoints, each with a receive posted at its destination at a random
// cycle, before or after the send.
func drawWorkload(t *rapid.T) workload {
	n := rapid.IntRange(1, 3).Draw(t, "n")
	dims := make([]int, n)
	nodes := 1
	for d := range dims {
		dims[d] = rapid.IntRange(2, 4).Draw(t, "k")
		nodes *= dims[d]
	}
	p := msglayer.DefaultParams()
	p.Shape.ChunkCycles = uint32(rapid.IntRange(1, 3).Draw(t, "chunk_cycles"))
	cost := func(name string) uint64 { return uint64(rapid.IntRange(0, 12).Draw(t, name)) }
	p.PostCycles, p.PacketCycles, p.SendDoneCycles = cost("post"), cost("packet"), cost("senddone")
	p.DispatchCycles, p.MatchCycles, p.RecvDoneCycles = cost("dispatch"), cost("match"), cost("recvdone")
	p.Leads = rapid.IntRange(1, 5).Draw(t, "leads")
	p.HighPriorityLead = rapid.Bool().Draw(t, "high_priority_lead")
	w := workload{dims: dims, p: p, seed: rapid.Uint64().Draw(t, "seed")}
	w.msgs = rapid.IntRange(1, 80).Draw(t, "messages")
	span := uint64(rapid.IntRange(1, 3000).Draw(t, "span"))
	for i := 0; i < w.msgs; i++ {
		src := rapid.IntRange(0, nodes-1).Draw(t, "src")
		dst := rapid.IntRange(0, nodes-1).Draw(t, "dst")
		b := uint32(rapid.IntRange(0, 3000).Draw(t, "bytes"))
		protos := []msglayer.Protocol{msglayer.Auto, msglayer.Eager, msglayer.Midsize, msglayer.Rendezvous}
		if p.Shape.Packets(b) == 1 {
			protos = append(protos, msglayer.Single)
		}
		req := msglayer.SendReq{Dst: uint32(dst), Tag: uint32(rapid.IntRange(0, 3).Draw(t, "tag")), Bytes: b,
			Proto: rapid.SampledFrom(protos).Draw(t, "proto")}
		at := uint64(rapid.Uint64Range(0, span).Draw(t, "send_at"))
		w.ops = append(w.ops, op{at: at, node: src, req: req, id: i})
		rat := uint64(rapid.Uint64Range(0, span+span/2).Draw(t, "recv_at"))
		w.ops = append(w.ops, op{at: rat, node: dst, recv: true, req: msglayer.SendReq{Dst: uint32(src), Tag: req.Tag}, id: i})
	}
	slices.SortStableFunc(w.ops, func(a, b op) int { return cmp.Compare(a.at, b.at) })
	return w
}

// reordered counts, over every run of the property, the packets that
// arrived out of order and those buffered before their message's matching
// information: the property must have exercised both.
var reordered, bufferedEarly, heldForOrder uint64

// TestPropertyMessages: on random BG/L torus partitions, every message is
// delivered exactly once, complete, to the receive MPI's rules give it
// (the k-th receive posted at a node for (source, tag) takes the k-th
// message that source sent with that tag), presented in increasing
// message id per source; a rendezvous message sends no packet beyond its
// first before its ack arrived, a mid-size one at most K; and every
// endpoint ends empty. Across the runs packets did arrive out of order.
func TestPropertyMessages(t *testing.T) {
	reordered, bufferedEarly, heldForOrder = 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) { checkWorkload(rt, drawWorkload(rt)) })
	t.Logf("over all runs: %d packets out of order, %d buffered before their matching information, %d messages held for order",
		reordered, bufferedEarly, heldForOrder)
	require.Positive(t, reordered, "no packet arrived out of order: the property did not exercise reordering")
	require.Positive(t, bufferedEarly, "no packet arrived before its message's matching information")
	require.Positive(t, heldForOrder, "no message overtook an earlier one of its source")
}

// sent is a message of the functional model.
type sent struct {
	id    int
	msg   uint32 // its id on the connection
	bytes uint32
	proto msglayer.Protocol
}

// run runs w and returns the machine and the ids Send and Recv returned.
func run(t tb, w workload, always bool) (*machine, []uint32) {
	t.Helper()
	m := newMachineEval(t, w.dims, &w.p, w.seed, always)
	for _, e := range m.eps {
		e.Record = true
	}
	ids := m.script(t, w.ops)
	m.drain(t, uint64(w.msgs), 5_000_000)
	return m, ids
}

// TestPropertyActivity: the endpoint's sleep claims are exact. Evaluating
// every component every cycle, and never skipping idle cycles, gives the
// same deliveries at the same cycles and the same send logs.
func TestPropertyActivity(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := drawWorkload(rt)
		lazy, _ := run(rt, w, false)
		eager, _ := run(rt, w, true)
		for i := range lazy.eps {
			require.Equal(rt, eager.eps[i].Log, lazy.eps[i].Log, "node %d: deliveries differ when always evaluated", i)
			require.Equal(rt, eager.eps[i].SendLog, lazy.eps[i].SendLog, "node %d: send logs differ when always evaluated", i)
		}
	})
}

func checkWorkload(t tb, w workload) {
	t.Helper()
	m, ids := run(t, w, false)

	// The functional model: per (dst, src, tag), messages in send order
	// and receives in posting order pair up.
	type key struct{ dst, src, tag uint32 }
	sends := map[key][]sent{}
	recvs := map[key][]uint32{}
	byMsg := map[[3]uint32]sent{} // (src, dst, msg)
	for k, o := range w.ops {
		if o.recv {
			kk := key{uint32(o.node), o.req.Dst, o.req.Tag}
			recvs[kk] = append(recvs[kk], ids[k])
			continue
		}
		kk := key{o.req.Dst, uint32(o.node), o.req.Tag}
		proto := o.req.Proto
		if proto == msglayer.Auto {
			proto = w.p.Choose(o.req.Bytes)
		}
		s := sent{id: o.id, msg: ids[k], bytes: o.req.Bytes, proto: proto}
		sends[kk] = append(sends[kk], s)
		byMsg[[3]uint32{uint32(o.node), o.req.Dst, ids[k]}] = s
	}
	want := map[[3]uint32]uint32{} // (src, dst, msg) → receive id
	for kk, ss := range sends {
		rr := recvs[kk]
		require.Len(t, rr, len(ss))
		for i, s := range ss {
			want[[3]uint32{kk.src, kk.dst, s.msg}] = rr[i]
		}
	}
	got := map[[3]uint32]bool{}
	for dst, e := range m.eps {
		for _, d := range e.Log {
			k := [3]uint32{d.Src, uint32(dst), d.Msg}
			require.False(t, got[k], "message %v delivered twice", k)
			got[k] = true
			s, ok := byMsg[k]
			require.True(t, ok, "message %v was never sent", k)
			require.Equal(t, s.bytes, d.Bytes, "message %v: bytes", k)
			require.Equal(t, s.proto, d.Proto, "message %v: protocol", k)
			require.Equal(t, want[k], d.Recv, "message %v matched the wrong receive", k)
			require.LessOrEqual(t, d.Presented, d.At)
			require.GreaterOrEqual(t, d.Presented, d.Posted)
		}
		// presented to MPI in increasing message id per source
		log := slices.Clone(e.Log)
		slices.SortFunc(log, func(a, b msglayer.Delivery) int { return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Msg, b.Msg)) })
		for i := 1; i < len(log); i++ {
			if log[i].Src == log[i-1].Src {
				require.LessOrEqual(t, log[i-1].Presented, log[i].Presented, "node %d presented message %d of %d before %d", dst, log[i].Msg, log[i].Src, log[i-1].Msg)
			}
		}
		require.Zero(t, e.Open(), "node %d keeps messages in reassembly", dst)
	}
	require.Len(t, got, w.msgs)
	checkAckDiscipline(t, m, w.p.Leads, byMsg)
	c := m.total()
	require.Equal(t, uint64(w.msgs), c.Sent)
	require.Equal(t, c.AcksSent, c.AcksReceived)
	require.Equal(t, c.PacketsSent, c.PacketsReceived)
	reordered += c.OutOfOrder
	bufferedEarly += c.BufferedBeforeMatch
	heldForOrder += c.HeldForOrder
}

// checkAckDiscipline checks every sender's log: a rendezvous message sends
// one packet before its ack arrived, a mid-size one at most K (both carry
// the ack: the message's packets after its ack come later).
func checkAckDiscipline(t tb, m *machine, k int, byMsg map[[3]uint32]sent) {
	t.Helper()
	for src, e := range m.eps {
		ackAt := map[[2]uint32]uint64{}
		for _, ev := range e.SendLog {
			if ev.Incoming {
				ackAt[[2]uint32{ev.Peer, ev.Msg}] = ev.At
			}
		}
		before := map[[2]uint32]int{}
		for _, ev := range e.SendLog {
			if ev.Incoming || ev.Kind == msglayer.Ack {
				continue
			}
			mk := [2]uint32{ev.Peer, ev.Msg}
			s := byMsg[[3]uint32{uint32(src), ev.Peer, ev.Msg}]
			proto := s.proto
			if proto != msglayer.Rendezvous && proto != msglayer.Midsize {
				continue
			}
			at, acked := ackAt[mk]
			require.True(t, acked, "node %d: %v message %d to %d was never acknowledged", src, proto, ev.Msg, ev.Peer)
			if ev.At <= at {
				before[mk]++
			}
		}
		for mk, n := range before {
			s := byMsg[[3]uint32{uint32(src), mk[0], mk[1]}]
			limit := 1
			if s.proto == msglayer.Midsize {
				limit = k
			}
			require.LessOrEqual(t, n, limit, "node %d: %v message %d to %d sent %d packets before its ack", src, s.proto, mk[1], mk[0], n)
		}
	}
}
