package router

import (
	"math/bits"
	"unsafe"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// Prefetch asks for what Eval reads beyond the record (rtl Prefetcher),
// in four steps, each reading what the one before asked for: 0 the
// receiving ends of the lines that hold values, the input VCs with work
// and the outputs with runs; 1 the values at those lines' heads, the
// output VCs and ports the active VCs hold, the waiting heads' packet
// slots and the runs' input VCs; 2 the receiving ends a send from those
// ports writes, and a waiting head's candidate output VCs (or its
// header); 3 the ready set and ring entry the send writes there. It
// changes nothing.
func (r *Router) Prefetch(step int) {
	if r.ready.Words() == 0 {
		return
	}
	switch step {
	case 0:
		r.prefetchLines(r.ready.Word(0), false)
		for m := r.act&^r.stalled | r.wait; m != 0; m &= m - 1 {
			rtl.PrefetchLine(unsafe.Pointer(r.inVC(int32(bits.TrailingZeros64(m)))))
		}
		for m := r.runs; m != 0; m &= m - 1 {
			rtl.PrefetchLine(unsafe.Pointer(&r.outAt(bits.TrailingZeros64(uint64(m))).busyTo))
		}
	case 1:
		r.prefetchLines(r.ready.Word(0), true)
		for m := r.act &^ r.stalled; m != 0; m &= m - 1 {
			v := r.inVC(int32(bits.TrailingZeros64(m)))
			rtl.PrefetchLine(unsafe.Pointer(r.outVCAt(int(r.base[v.out&7]) + int(v.ovc))))
			rtl.PrefetchLine(unsafe.Pointer(&r.outAt(int(v.out & 7)).busyTo))
		}
		for m := r.runs; m != 0; m &= m - 1 {
			if op := r.outAt(bits.TrailingZeros64(uint64(m))); op.from >= 0 {
				rtl.PrefetchLine(unsafe.Pointer(r.inVC(int32(op.from))))
			}
		}
		for m := r.wait; m != 0; m &= m - 1 {
			if pr := r.headRec(int32(bits.TrailingZeros64(m))); pr != nil {
				rtl.PrefetchLine(unsafe.Pointer(pr))
			}
		}
	case 2, 3:
		for m := r.act&^r.stalled | r.runsFrom(); m != 0; m &= m - 1 {
			v := r.inVC(int32(bits.TrailingZeros64(m)))
			if v.state != Active {
				continue
			}
			if op := r.outAt(int(v.out & 7)); step == 2 {
				op.Data.PrefetchFar()
			} else {
				op.Data.PrefetchFarTail()
			}
		}
		if step == 3 {
			return
		}
		for m := r.wait; m != 0; m &= m - 1 {
			pr := r.headRec(int32(bits.TrailingZeros64(m)))
			switch {
			case pr == nil:
			case pr.kind == 0:
				rtl.PrefetchLine(unsafe.Pointer(pr.p))
			default:
				for c := uint64(pr.route); c != 0; c &= c - 1 {
					i := bits.TrailingZeros64(c)
					if o := i / routing.MaxVCs; o != 0 {
						rtl.PrefetchLine(unsafe.Pointer(r.outVCAt(int(r.base[o]) + i%routing.MaxVCs)))
					}
				}
			}
		}
	}
}

// prefetchLines is Prefetch's part for the lines that hold values (ready
// word w): their receiving ends (step 0), or the values at their heads
// (head: step 1).
func (r *Router) prefetchLines(w uint64, head bool) {
	r.prefetchNode(w, head)
	for m := w & 0xfe; m != 0; m &= m - 1 {
		if ip := r.inAt(bits.TrailingZeros64(m)); head {
			ip.Data.PrefetchHead()
		} else {
			ip.Data.Prefetch()
		}
	}
	for m := (w >> 8) & 0xff; m != 0; m &= m - 1 {
		if op := r.outAt(bits.TrailingZeros64(m)); head {
			op.Cred.PrefetchHead()
		} else {
			op.Cred.Prefetch()
		}
	}
}

// prefetchNode is Prefetch's part for the node port: the injection line
// and the sink's credits (bits 0 and maxPorts of the ready word), and with
// lanes the lanes' (their records first: step 0 asks for the classes'
// record, step 1 reads it). head: the values at the lines' heads (step 1)
// rather than the receiving ends.
func (r *Router) prefetchNode(w uint64, head bool) {
	if w&1 != 0 && r.Inject != nil {
		if head {
			r.Inject.Data.PrefetchHead()
		} else {
			r.Inject.Data.Prefetch()
		}
	}
	if w&(1<<maxPorts) != 0 && r.Eject != nil {
		if head {
			r.Eject.Credit.PrefetchHead()
		} else {
			r.Eject.Credit.Prefetch()
		}
	}
	cl := r.cls
	if r.node0&nodeLanes == 0 || cl == nil {
		return
	}
	if !head {
		rtl.PrefetchLine(unsafe.Pointer(&cl.inj))
		rtl.PrefetchLine(unsafe.Pointer(&cl.ej))
		return
	}
	for m := w >> (laneInBit + 1) & (1<<(maxPorts-1) - 1); m != 0; m &= m - 1 {
		if rx := cl.inj[(1+bits.TrailingZeros64(m))&(routing.MaxVCs-1)]; rx != nil {
			rx.Data.Prefetch()
		}
	}
	for m := w >> (laneCredBit + 1) & (1<<(maxPorts-1) - 1); m != 0; m &= m - 1 {
		if tx := cl.ej[(1+bits.TrailingZeros64(m))&(routing.MaxVCs-1)]; tx != nil {
			tx.Credit.Prefetch()
		}
	}
}

// runsFrom is the input VCs of the outputs' runs (Prefetch).
func (r *Router) runsFrom() uint64 {
	var m uint64
	for o := r.runs; o != 0; o &= o - 1 {
		if op := r.outAt(bits.TrailingZeros64(uint64(o))); op.from >= 0 {
			m |= bit(int32(op.from))
		}
	}
	return m
}

// headRec is the packet slot of input VC id's oldest packet, when its
// record holds it (Prefetch: the overflow record is not read).
func (r *Router) headRec(id int32) *pktRec {
	v, st := r.inVC(id), r.pk
	if st == nil || v.more&vcPkt == 0 || v.pkt0.slot >= uint32(len(st.slots)) {
		return nil
	}
	return st.at(v.pkt0.slot)
}
