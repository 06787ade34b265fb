package nic

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// pingPong answers every message with one back to its source (same id),
// until it has sent Rounds answers; it logs the completions it saw.
type pingPong struct {
	rounds int
	seen   []Completion
	late   int // completions handed over at another cycle than their own
}

func (p *pingPong) deliver(s Port, c Completion) {
	p.seen = append(p.seen, c)
	if s.Now() != c.At {
		p.late++
	}
	if len(p.seen) <= p.rounds {
		s.Post(Request{Dst: c.Src, Msg: c.Msg + 1, Born: c.Born, At: c.At, Measured: c.Measured})
	}
}

// Two nodes joined back to back by links of delay d (no switch): node 0
// posts one message at cycle t0, then both hosts answer each completion.
// Every exchange is one zero-load message over 0 switches,
// L = o_s + (n−1)·P_full + d + P_last + o_r (Shape.Latency0 with h = 0),
// so the i-th completion is at t0 + i·L, alternately at node 1 and node 0,
// and carries the first message's Born (the host chose it).
func TestHostPingPong(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sh, err := NewShape(rapid.IntRange(1, 3000).Draw(rt, "message"), rapid.IntRange(8, 512).Draw(rt, "packet"), timing(rt).BytesCycles)
		require.NoError(rt, err)
		os := rapid.Uint64Range(0, 500).Draw(rt, "send")
		or := rapid.Uint64Range(0, 500).Draw(rt, "recv")
		d := rapid.Uint64Range(1, 30).Draw(rt, "delay")
		t0 := rapid.Uint64Range(0, 100).Draw(rt, "t0")
		rounds := rapid.IntRange(1, 6).Draw(rt, "rounds")
		sim := rtl.NewSim(rtl.Options{Seed: 1})
		var tx [2]*Sender
		var rx [2]*Receiver
		var hosts [2]*pingPong
		for i := 0; i < 2; i++ {
			// Credits enough for the whole message: the model has no credit stall.
			tx[i] = NewSender(sim.Top(), rtl.Idx("tx", i), uint32(i), sh, os, credit.PerLink, 1, uint16(min(sh.Packets, 1024)))
			rx[i] = NewReceiver(sim.Top(), rtl.Idx("rx", i), uint32(i), sh, or)
			hosts[i] = &pingPong{rounds: rounds}
			Attach(tx[i], rx[i], Host{Deliver: hosts[i].deliver})
		}
		link.Connect(tx[0].Tx, rx[1].Rx, d)
		link.Connect(tx[1].Tx, rx[0].Rx, d)
		tx[0].Post(Request{Dst: 1, Msg: 7, Born: t0, At: t0, Measured: true})
		require.NoError(rt, sim.Build())
		l := sh.Latency0(os, or, 0, d, 0)
		sim.RunUntil(func() bool { return len(hosts[0].seen)+len(hosts[1].seen) == 2*rounds+1 }, 100*l*uint64(rounds+2)+1000)
		for i := 0; i <= 2*rounds; i++ {
			h := hosts[(i+1)%2]
			c := h.seen[i/2]
			require.Equal(rt, t0+uint64(i+1)*l, c.At, "completion %d", i)
			require.Equal(rt, uint32((i+1)%2^1), c.Src)
			require.Equal(rt, uint32(7+i), c.Msg)
			require.Equal(rt, t0, c.Born)
			require.True(rt, c.Measured)
			require.Equal(rt, packet.Unicast, c.Op)
			require.Equal(rt, c.Arrived+or, c.At)
		}
		require.Zero(rt, hosts[0].late+hosts[1].late, "the hook runs at the completion cycle")
		require.Equal(rt, uint64(rounds+1), tx[0].Posted)
		require.Equal(rt, uint64(rounds), tx[1].Posted)
		require.Equal(rt, tx[0].Posted, tx[0].Sent)
		require.Zero(rt, tx[0].Born, "posted messages are not births")
	})
}

// A multicast packet is taken only when Member says the node belongs to
// its address (and never without a Member); it completes like a unicast
// message, with its Op and address in the Completion.
func TestReceiverMulticastMembership(t *testing.T) {
	sh, err := NewShape(600, 256, timing(t).BytesCycles)
	require.NoError(t, err)
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	r := NewReceiver(sim.Top(), "rx", 3, sh, 10)
	r.Record = true
	p := packet.Packet{Src: 1, Dst: 42, Op: packet.Multicast, Cycles: 1}
	r.take(&p, 5)
	require.Equal(t, uint64(1), r.Misrouted, "no Member: misrouted")
	r.Member = func(_, addr uint32) bool { return addr == 42 }
	for s := uint16(0); s < uint16(sh.Packets); s++ {
		q := packet.Packet{Src: 1, Dst: 42, Op: packet.Multicast, Seq: s, Cycles: 1, Sent: 3}
		r.take(&q, 10+uint64(s))
	}
	q := packet.Packet{Src: 1, Dst: 43, Op: packet.Multicast, Cycles: 1}
	r.take(&q, 20)
	require.Equal(t, uint64(2), r.Misrouted)
	require.Equal(t, []Completion{{Src: 1, Dst: 42, Op: packet.Multicast, At: 10 + uint64(sh.Packets) + 10, Sent: 3, Arrived: 10 + uint64(sh.Packets)}}, r.Log)
	red := packet.Packet{Src: 1, Dst: 3, Op: packet.Reduce, Cycles: 1}
	r.take(&red, 30)
	require.Equal(t, uint64(3), r.Misrouted, "other ops are not messages")
}

// A host with no Wake hook that asks to be woken is refused where it asks,
// with an error naming its Sender, not with a nil call in a later Eval.
func TestWakeHostWithoutWakeHook(t *testing.T) {
	sh, err := NewShape(256, 256, timing(t).BytesCycles)
	require.NoError(t, err)
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	tx := NewSender(sim.Top(), "tx", 0, sh, 10, credit.PerLink, 1, 4)
	rx := NewReceiver(sim.Top(), "rx", 0, sh, 10)
	require.PanicsWithError(t, "top.tx: WakeHost(0) with no Wake hook attached (nic.Attach)", func() { tx.WakeHost(0) })
	Attach(tx, rx, Host{Deliver: func(Port, Completion) {}})
	require.PanicsWithError(t, "top.tx: WakeHost(5) with no Wake hook attached (nic.Attach)", func() { tx.WakeHost(5) })
}

// A Port works only inside its own node's hooks: node 1's Wake hook that
// posts on node 0's Port (kept from Attach) is refused, and so is the
// testbench using a Port between cycles.
func TestPortOnlyInsideItsHooks(t *testing.T) {
	sh, err := NewShape(256, 256, timing(t).BytesCycles)
	require.NoError(t, err)
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	var ports [2]Port
	var tx [2]*Sender
	for i := range tx {
		tx[i] = NewSender(sim.Top(), rtl.Idx("tx", i), uint32(i), sh, 10, credit.PerLink, 1, 4)
		rx := NewReceiver(sim.Top(), rtl.Idx("rx", i), uint32(i), sh, 10)
		ports[i] = Attach(tx[i], rx, Host{Wake: func(p Port, t uint64) {
			if p.Node() == 1 {
				ports[0].Post(Request{Dst: 1, At: t})
			}
		}})
		link.Connect(tx[i].Tx, rx.Rx, 1)
	}
	require.PanicsWithError(t, "top.tx(0): Port.Post outside the node's own host hooks", func() { ports[0].Post(Request{Dst: 1}) })
	tx[1].WakeHost(3)
	require.NoError(t, sim.Build())
	require.PanicsWithError(t, "top.tx(0): Port.Post outside the node's own host hooks", func() { sim.Run(10) })
}
