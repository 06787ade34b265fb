package rtl_test

import (
	"fmt"
	"testing"

	"github.com/hwcoll/hwcoll/rtl"
)

// hopPkt is a packet the size of packet.Packet (88 bytes), which this
// package cannot import.
type hopPkt struct {
	id, src, mask, born, sent uint64
	meta                      [4]uint64
	hops                      uint64
	payload                   []uint64
}

// hopper is the least a switch port of this form does per packet-hop: it
// takes the packets that arrived on its input line into a slot of its
// own, sends each on its output line (at most one a cycle), returns a
// credit upstream on a line the sender reads lazily (as a credit line
// is), and sleeps until the next arrival. No routing, arbitration,
// crosspoints or probes: what is left is the kernel's and the lines'
// share of a hop, the floor under any block written in this form.
type hopper struct {
	rtl.Module
	in      rtl.LineIn[hopPkt]
	out     rtl.LineOut[hopPkt]
	credIn  rtl.LineIn[uint16]  `rtl:"optional"`
	credOut rtl.LineOut[uint16] `rtl:"optional"`
	slots   []hopPkt
	q       []uint16 // slots waiting for the output, oldest first
	free    []uint16
	credits bool // the credit line is connected
	hops    uint64
}

func (h *hopper) Eval() {
	now := h.Now()
	if h.credits {
		for {
			if _, ok := h.credIn.Recv(); !ok {
				break
			}
		}
	}
	for {
		pk, ok := h.in.RecvRef()
		if !ok {
			break
		}
		s := h.free[len(h.free)-1]
		h.free = h.free[:len(h.free)-1]
		h.slots[s] = *pk
		h.slots[s].hops++
		h.q = append(h.q, s)
	}
	if len(h.q) > 0 && !h.out.Busy() {
		s := h.q[0]
		h.q = h.q[:copy(h.q, h.q[1:])]
		h.out.SendRef(&h.slots[s])
		h.free = append(h.free, s)
		h.hops++
		if h.credits {
			h.credOut.Send(1)
		}
	}
	if len(h.q) > 0 {
		h.SleepUntil(now + 1)
		return
	}
	h.Sleep()
}

// BenchmarkHopSkeleton: packets circulate on a ring of hoppers (lines of
// 5 cycles, one packet per hopper so they seldom meet), without and with a
// credit line per hop. ns/hop is the floor, on this machine, of a
// packet-hop in this form (one evaluation, one line send and receive, a
// slot copy; and a credit send); compare the networks' ns/pkt-hop
// (fat-tree, torus) with it. With a packet on every 16th hopper only
// (sparse), a cycle has about one evaluation: what is added is the
// kernel's work per cycle.
func BenchmarkHopSkeleton(b *testing.B) {
	type run struct {
		n       int
		credits bool
		every   int // a packet on every this many hoppers
	}
	runs := []run{{64, false, 1}, {64, true, 1}, {1024, false, 1}, {1024, true, 1}, {64, true, 16}}
	for _, r := range runs {
		n, credits := r.n, r.credits
		name := fmt.Sprintf("hoppers=%d/credits=%v", n, credits)
		if r.every > 1 {
			name += "/sparse"
		}
		{
			b.Run(name, func(b *testing.B) {
				s := rtl.NewSim(rtl.Options{})
				hs := make([]hopper, n)
				for i := range hs {
					h := &hs[i]
					h.Init(s.Top(), rtl.Idx("h", i), h)
					h.in.Init(&h.Module, "in")
					h.out.Init(&h.Module, "out")
					h.credits = credits
					if credits {
						h.credIn.Init(&h.Module, "cred_in")
						h.credOut.Init(&h.Module, "cred_out")
					}
					h.slots = make([]hopPkt, 8)
					for j := 7; j >= 0; j-- {
						h.free = append(h.free, uint16(j))
					}
				}
				for i := range hs {
					rtl.ConnectLine(&hs[i].out, &hs[(i+1)%n].in, 5)
					if credits {
						rtl.ConnectLine(&hs[(i+1)%n].credOut, &hs[i].credIn, 1)
						hs[i].credIn.SetWake(false)
					}
				}
				if err := s.Build(); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < n; i += r.every {
					hs[i].out.Send(hopPkt{id: uint64(i)})
				}
				s.Run(100)
				var h0 uint64
				for i := range hs {
					h0 += hs[i].hops
				}
				b.ResetTimer()
				s.Run(uint64(b.N))
				b.StopTimer()
				var h1 uint64
				for i := range hs {
					h1 += hs[i].hops
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(h1-h0), "ns/hop")
				b.ReportMetric(float64(s.Stats().Evals)/float64(h1), "evals/hop")
			})
		}
	}
}
