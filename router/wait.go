package router

import (
	"math/bits"

	"github.com/hwcoll/hwcoll/packet"

	"github.com/hwcoll/hwcoll/routing"
)

// VCRef names an input VC of a router.
type VCRef struct {
	R        *Router
	Port, VC int
}

// Path is the VC's hierarchical name, as the waveform shows it.
func (v VCRef) Path() string { return v.R.inP()[v.Port].arr.Path(v.VC) }

// Holding reports whether the router has flits in a buffer or on a wire.
func (r *Router) Holding() bool {
	return r.moved >= r.Now() || r.holdsFlits(r.Now())
}

// holdsFlits reports whether an input VC holds flits that have not left by
// now, or the head of a packet whose flits are still to come.
func (r *Router) holdsFlits(now uint64) bool {
	for q := range r.inP() {
		for w := range r.inP()[q].vcs {
			if r.inP()[q].vcs[w].holds(now, r.P, r.pk) {
				return true
			}
		}
	}
	return false
}

// WaitsOn calls f for every input VC holding a packet that has flits left
// to send, with the input VCs it waits on: an active packet on the
// downstream VC it was given (none when it goes to the node's sink, which
// has taken its credit); a routing one on every VC its routing function
// offers, the downstream VC or the local VC that holds it. A head for the
// node waits on the local VC holding its class's ejection VC, and, with
// bounded ejection (Params.EjectPackets) and no credit of its class, on
// the node's injection FIFOs that hold packets: a node frees its receive
// side as it consumes, and a node that must send to consume (a
// protocol's reply to a request) waits on them, so a protocol deadlock
// through the node closes a cycle here. The watchdog looks for a cycle in
// this graph.
func (r *Router) WaitsOn(f func(v VCRef, on []VCRef)) {
	var on []VCRef
	for q := range r.inP() {
		ip := &r.inP()[q]
		for w := range ip.vcs {
			v := &ip.vcs[w]
			pr, ok := v.cur(r.pk)
			if !ok {
				continue
			}
			on = on[:0]
			switch v.state {
			case Active:
				if v.out != 0 {
					on = append(on, r.downstream(int(v.out), int(v.ovc)))
				}
			case Routing:
				if int(pr.p.Dst) == r.Node && r.node0&(nodeVCs|nodeBounded) == 0 {
					break // the node's one VC: its sink always takes it
				}
				ch := r.choices(q, w, pr.p)
				for ports := ch.Ports(); ports != 0; ports &= ports - 1 {
					o := bits.TrailingZeros8(ports)
					for vcs := ch.VCs(routing.Port(o)); vcs != 0; vcs &= vcs - 1 {
						u := bits.TrailingZeros8(vcs)
						if o == 0 && r.node0&nodeVCs == 0 {
							u = 0 // the node's one VC
						}
						if ov := &r.outP()[o].vcs()[u]; ov.owner >= 0 {
							on = append(on, VCRef{R: r, Port: int(ov.owner / routing.MaxVCs), VC: int(ov.owner % routing.MaxVCs)})
						}
						if o != 0 {
							on = append(on, r.downstream(o, u))
						} else if s, c := r.ejectAt(u); r.node0&nodeBounded != 0 && s.Available(c) == 0 {
							on = r.injecting(on)
						}
					}
				}
			}
			f(VCRef{R: r, Port: q, VC: w}, on)
		}
	}
}

// injecting appends to on the node's injection FIFOs that hold packets.
func (r *Router) injecting(on []VCRef) []VCRef {
	ip := &r.inP()[0]
	for c := range ip.vcs {
		if _, ok := ip.vcs[c].cur(r.pk); ok {
			on = append(on, VCRef{R: r, Port: 0, VC: c})
		}
	}
	return on
}

func (r *Router) downstream(o, u int) VCRef {
	op := &r.outP()[o]
	return VCRef{R: op.peerR, Port: int(op.peerQ), VC: u}
}

// Flits is the occupancy of the VC now: the flits that have arrived and
// not left, whether or not the router has read their message yet.
func (v VCRef) Flits() uint64 {
	now := v.R.Now()
	n := v.R.inP()[v.Port].vcs[v.VC].occupancy(now, v.R.P, v.R.pk)
	v.landed(now, func(m *Flits, k uint64) { n += k })
	return n
}

// Packet is the packet of the oldest flit in the VC's buffer (for
// monitors; ok false when the buffer is empty).
func (v VCRef) Packet() (p packet.Packet, ok bool) {
	now := v.R.Now()
	vc := &v.R.inP()[v.Port].vcs[v.VC]
	st := v.R.pk
	if vc.occupancy(now, v.R.P, st) > 0 {
		d := vc.departedBy(now, v.R.P)
		for i := 0; i < vc.npkts(st); i++ {
			if pr := vc.pktAt(i, st); fnBefore(d, pr.end) {
				return *pr.rec(v.R.pk).p, true
			}
		}
	}
	v.landed(now, func(m *Flits, k uint64) {
		switch {
		case ok:
		case m.Head:
			p, ok = *m.Pkt, true
		case vc.npkts(st) > 0: // the rest of the packet whose head was read
			p, ok = *vc.pktAt(vc.npkts(st)-1, st).rec(st).p, true
		}
	})
	return p, ok
}

// landed calls f for each run on the VC's input line whose first k > 0
// flits have arrived by now but whose message the router has not read
// (messages read late: rtl.LineOut.SendAt).
func (v VCRef) landed(now uint64, f func(m *Flits, k uint64)) {
	if v.Port == 0 {
		return
	}
	ip := &v.R.inP()[v.Port]
	for i := 0; ; i++ {
		m, ok := ip.Data.Arrived(i, ^uint64(0))
		if !ok {
			return
		}
		if int(m.VC) == v.VC && now >= m.At {
			f(m, min(uint64(m.N), (now-m.At)/uint64(v.R.P)+1))
		}
	}
}

// HasPort reports whether the router has port q (a mesh's edge routers
// lack the ports that would leave it).
func (r *Router) HasPort(q int) bool { return q < int(r.np) && r.inP()[q].exists() }

// Buffer is the flits a VC buffer holds.
func (r *Router) Buffer() uint64 { return uint64(r.buf) }
