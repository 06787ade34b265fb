package nic

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// feeder drives a Receiver's take with the steady state of a busy node:
// len(streams) messages in reassembly at once, each from its own source,
// their packets interleaved round robin, each message's packets in a
// scrambled order (Seq = j·stride mod n), and a stream's next message
// starting as soon as its last one completed.
type feeder struct {
	r       *Receiver
	n       uint32 // packets a message
	stride  uint32 // coprime with n: j·stride mod n visits every Seq once
	streams []stream
	i       int
	tail    uint64
}

type stream struct{ src, msg, next uint32 }

func newFeeder(r *Receiver, open int) *feeder {
	f := &feeder{r: r, n: r.Shape.Packets, stride: 1}
	for _, p := range []uint32{7, 11, 13, 17, 19, 23} {
		if f.n%p != 0 {
			f.stride = p % f.n
			break
		}
	}
	if f.stride == 0 {
		f.stride = 1
	}
	for k := 0; k < open; k++ {
		// k·4099 mod 2^16 is one-to-one: distinct sources spread over
		// the 65,536 nodes, so keys differ in their high bits too.
		f.streams = append(f.streams, stream{src: uint32(k*4099) % 65536, msg: uint32(k)})
	}
	return f
}

// packet takes the next packet.
func (f *feeder) packet() {
	s := &f.streams[f.i]
	if f.i++; f.i == len(f.streams) {
		f.i = 0
	}
	seq := s.next * f.stride % f.n
	f.tail++
	p := packet.Packet{Src: s.src, Dst: f.r.Node, Msg: s.msg, Seq: uint16(seq), Cycles: 1, Born: f.tail, Sent: f.tail}
	f.r.take(&p, f.tail)
	if s.next++; s.next == f.n {
		s.next, s.msg = 0, s.msg+1
	}
}

// messages takes the packets of m whole messages.
func (f *feeder) messages(m int) {
	for i := 0; i < m*int(f.n); i++ {
		f.packet()
	}
}

func testShape(t testing.TB, packets int) Shape {
	sh, err := NewShape(packets*256, 256, func(b uint64) uint64 { return (b + 4) / 5 })
	require.NoError(t, err)
	require.Equal(t, uint32(packets), sh.Packets)
	return sh
}

// A warmed-up Receiver allocates nothing per packet or per message: once
// its reassembly state has grown to the most messages open at once, more
// messages (small ones and ones of more than 64 packets, from many sources,
// interleaved and out of order) reuse it.
func TestReceiverNoAllocs(t *testing.T) {
	for _, packets := range []int{1, 3, 64, 65, 130} {
		for _, open := range []int{1, 7, 100, 700} {
			t.Run(fmt.Sprintf("packets=%d/open=%d", packets, open), func(t *testing.T) {
				sim := rtl.NewSim(rtl.Options{Seed: 1})
				r := NewReceiver(sim.Top(), "rx", 3, testShape(t, packets), 10)
				f := newFeeder(r, open)
				f.messages(2 * open) // warm-up: two rounds of every stream
				// Whole rounds of the streams, so every message is done
				// at the end of a run.
				msgs := open * max(1, 2000/(packets*open))
				allocs := testing.AllocsPerRun(5, func() { f.messages(msgs) }) // 1 + 5 runs
				require.Zero(t, allocs, "allocations per %d messages", msgs)
				require.Equal(t, uint64(2*open+6*msgs), r.Completed)
				require.Zero(t, r.Open())
				if packets == 1 {
					require.Equal(t, 1, r.MaxOpen)
				} else {
					require.Equal(t, open, r.MaxOpen)
				}
				require.Zero(t, r.Duplicates+r.BadSeq+r.Misrouted)
			})
		}
	}
}

// BenchmarkReassembly is the receive side's cost per packet (ns/op, an op
// is one packet taken) with open messages in reassembly at once, and the
// heap of a Receiver: idle, and holding open messages each missing a packet.
func BenchmarkReassembly(b *testing.B) {
	for _, packets := range []int{4, 130} {
		for _, open := range []int{1, 64, 1024} {
			var idle, full uint64 // measured once, not at every b.N
			b.Run(fmt.Sprintf("packets=%d/open=%d", packets, open), func(b *testing.B) {
				sh := testShape(b, packets)
				if full == 0 {
					idle, full = receiverBytes(b, sh, open)
				}
				sim := rtl.NewSim(rtl.Options{Seed: 1})
				r := NewReceiver(sim.Top(), "rx", 3, sh, 10)
				f := newFeeder(r, open)
				f.messages(2 * open)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					f.packet()
				}
				b.StopTimer()
				b.ReportMetric(float64(idle), "B/idle-rx")
				b.ReportMetric(float64(full), "B/rx")
			})
		}
	}
}

// receiverBytes is the live heap of a Receiver, idle and with open
// messages each missing its last packet, averaged over many Receivers of
// one Sim.
func receiverBytes(b *testing.B, sh Shape, open int) (idle, full uint64) {
	const n = 64
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	h0 := heap()
	rs := make([]*Receiver, n)
	for i := range rs {
		rs[i] = NewReceiver(sim.Top(), rtl.Idx("rx", i), 3, sh, 10)
	}
	h1 := heap()
	for _, r := range rs {
		f := newFeeder(r, open)
		for range open * int(sh.Packets-1) {
			f.packet()
		}
		require.Equal(b, open, r.Open())
	}
	h2 := heap()
	runtime.KeepAlive(rs)
	runtime.KeepAlive(sim)
	return (h1 - h0) / n, (h2 - h0) / n
}
