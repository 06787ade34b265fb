package router

import (
	"math"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// Switching is the flow control of a router's VCs (the WORMulSim paper
// §3.2).
type Switching uint8

const (
	VCT Switching = iota
	Wormhole
	BufferedWormhole
)

var switchingNames = [...]string{"vct", "wormhole", "buffered-wormhole"}

func (s Switching) String() string {
	if int(s) < len(switchingNames) {
		return switchingNames[s]
	}
	return "switching(?)"
}

// ParseSwitching returns the Switching of a name; an error is a
// *param.Error naming Params.Switching.
func ParseSwitching(name string) (Switching, error) {
	for i, n := range switchingNames {
		if n == name {
			return Switching(i), nil
		}
	}
	return 0, param.Errorf("router.Params.Switching", "%q is not allowed; allowed: vct | wormhole | buffered-wormhole", name)
}

// Params configure a router.
type Params struct {
	// The fields a router reads as it routes and allocates come first
	// (they share the router's hot cache lines).
	Net   *routing.Net
	Route routing.Func
	// Delay is D, the cycles from a flit's arrival to the earliest cycle
	// it may leave (≥ 1).
	Delay     uint64
	VCs       int       // per network port
	Switching Switching //
	// Bubble is the mask of VCs the bubble rule applies to (0: none).
	Bubble uint8
	// Priority is the mask of high-priority VCs: a switch grants an output
	// to their requests before the others' (0: none).
	Priority uint8
	// Atomic allocates a VC, under wormhole switching, only to a packet
	// that finds its buffer empty (every credit home), so a packet never
	// waits behind another one's tail in a VC it was given: Duato's
	// condition for adaptive routing with escape VCs (without it a packet
	// that took a full adaptive VC cannot fall back on the escape VC).
	Atomic bool
	// FlitCycles is P, the cycles a flit holds a link.
	FlitCycles uint32

	// Minimal: Route takes only minimal hops and, with every link up,
	// always reaches the destination (routing.Spec.Minimal), which lets
	// the search around dead links stay where they are.
	Minimal  bool
	BufFlits int // flits per VC buffer (wormhole: 1 whatever is set)
	// PacketFlits is the longest packet in flits (vct buffers must hold it).
	PacketFlits int
	// InjectPackets is the injection FIFO's capacity in packets (per
	// message class).
	InjectPackets int
	// Classes is the number of message classes (virtual networks) the
	// node's packets travel in, a packet's class its VL (0..Classes−1,
	// set by the node); 0 or 1: one class, the VL ignored. With C > 1
	// each network port's VCs are C groups of k = VCs/C (VCs a multiple
	// of C), class c on VCs [ck, (c+1)k): the routing function routes as
	// if the network had k VCs, and Bubble and Priority name the VCs of
	// one class (bits 0..k−1), kept in every class. Port 0 has an
	// injection FIFO of InjectPackets packets and an ejection VC per
	// class, so a class that cannot move never blocks another (doc.go,
	// "The node's port").
	Classes int
	// EjectPackets is the node's receive side in packets per class: a
	// packet of class c leaves for the node only on a credit of class
	// c's counter, which the node returns (EjectToken) when it has
	// consumed a packet. 0: the node's sink always takes a packet.
	EjectPackets int
	// Lanes is the node port's lanes (doc.go, "The node's port"): F
	// packet links each way between the node and port 0, each with its
	// own injection FIFOs and ejection VCs (one per message class), each
	// moving one packet at a time at link rate, busy independently of
	// the others, as the BG/L node's several injection and reception
	// FIFOs feed several links at once (the BG/L MPI paper §2). The
	// node picks a packet's lane by the link it sends it on; the router
	// ejects a packet into any free lane of its class. 0 or 1: one.
	Lanes int
	// Retry gives the network links bit errors at Retry.BER and the
	// link-level retry protocol (retry.go); BER 0: perfect links.
	Retry link.Retry
}

// Buffer is the flits one VC buffer holds under these parameters.
func (p *Params) Buffer() int {
	if p.Switching == Wormhole {
		return 1
	}
	return p.BufFlits
}

// Check reports the first parameter out of range, naming it.
func (p *Params) Check() error {
	switch {
	case p.VCs < 1 || p.VCs > routing.MaxVCs:
		return param.Errorf("router.Params.VCs", "%d is out of range; allowed 1..%d", p.VCs, routing.MaxVCs)
	case p.BufFlits < 1 || p.BufFlits > 1<<14:
		return param.Errorf("router.Params.BufFlits", "%d is out of range; allowed 1..16384", p.BufFlits)
	case p.PacketFlits < 1 || p.PacketFlits > 1<<14:
		return param.Errorf("router.Params.PacketFlits", "%d flits per packet is out of range; allowed 1..16384", p.PacketFlits)
	case p.Switching == VCT && p.BufFlits < p.PacketFlits:
		return param.Errorf("router.Params.BufFlits", "%d flits cannot hold %s %d-flit packet ({router.Params.PacketFlits} / {router.Params.FlitCycles}), which vct needs; allowed: at least %d, or {router.Params.Switching} wormhole | buffered-wormhole", p.BufFlits, param.A(uint64(p.PacketFlits)), p.PacketFlits, p.PacketFlits)
	case p.Bubble != 0 && p.Switching != VCT:
		return param.Errorf("router.Params.Switching", "%s cannot keep the bubble rule (a bubble is a free packet buffer); allowed: vct, or {routing.Escape} dateline | none", p.Switching)
	case p.Bubble != 0 && p.BufFlits < 2*p.PacketFlits:
		return param.Errorf("router.Params.BufFlits", "%d flits cannot hold the two %d-flit packets ({router.Params.PacketFlits} / {router.Params.FlitCycles}) the bubble rule asks of an escape VC; allowed: at least %d", p.BufFlits, p.PacketFlits, 2*p.PacketFlits)
	case p.FlitCycles < 1:
		return param.Errorf("router.Params.FlitCycles", "%d; allowed: at least 1", p.FlitCycles)
	case p.Delay < 1 || p.Delay > math.MaxUint32:
		return param.Errorf("router.Params.Delay", "%d cycles; allowed: 1 to %d cycles", p.Delay, uint64(math.MaxUint32))
	case p.InjectPackets < 1 || p.InjectPackets > 1<<10:
		return param.Errorf("router.Params.InjectPackets", "%d is out of range; allowed 1..1024", p.InjectPackets)
	case p.Classes < 0 || p.Classes > routing.MaxVCs:
		return param.Errorf("router.Params.Classes", "%d message classes is out of range; allowed 0..%d (0 and 1: one)", p.Classes, routing.MaxVCs)
	case p.Classes > 1 && p.VCs%p.Classes != 0:
		return param.Errorf("router.Params.VCs", "%d VCs cannot be split into %d message classes ({router.Params.Classes}) of equal VC groups; allowed: a multiple of %d (%d, %d, …)", p.VCs, p.Classes, p.Classes, p.Classes, 2*p.Classes)
	case p.Lanes < 0 || p.Lanes*p.classes() > routing.MaxVCs:
		return param.Errorf("router.Params.Lanes", "%d lanes of %d message classes ({router.Params.Classes}) is out of range; allowed: lanes × classes at most %d (port 0's VCs)", p.Lanes, p.classes(), routing.MaxVCs)
	case p.EjectPackets < 0 || p.EjectPackets > 1<<10:
		return param.Errorf("router.Params.EjectPackets", "%d is out of range; allowed 0..1024 (0: the node's sink always takes a packet)", p.EjectPackets)
	case p.Retry.BER > 0 && p.Switching != VCT:
		return param.Errorf("router.Params.Switching", "%s cannot resend a packet the link rejects (a partly sent packet may wait on credits its dropped flits hold); allowed with bit errors: vct", p.Switching)
	}
	if p.Retry.BER > 0 {
		if err := p.Retry.Check(); err != nil {
			return param.Errorf("router.Params.Retry", "%v", err)
		}
	}
	return nil
}

// classes is the number of message classes, at least 1.
func (p *Params) classes() int { return max(1, p.Classes) }

// lanes is the node port's lanes, at least 1.
func (p *Params) lanes() int { return max(1, p.Lanes) }

// nodeVCs is port 0's VCs, in and out: a FIFO (and an ejection VC) per
// lane and message class, lane l's class c at l·classes + c.
func (p *Params) nodeVCs() int { return p.lanes() * p.classes() }

// ClassVCs is the VCs of one message class on a network port: VCs / Classes.
func (p *Params) ClassVCs() int { return p.VCs / p.classes() }

// ClassOf is packet pk's message class: its VL with Classes > 1, else 0.
func (p *Params) ClassOf(pk *packet.Packet) int {
	if p.Classes > 1 {
		return int(pk.VL)
	}
	return 0
}

// NodeSender is how a node makes the sender of its injection link into
// port 0 (link.NewSender(owner, name, mode, counters, capacity)): one
// counter of InjectPackets credits (credit.PerLink), or with Classes > 1
// one counter per class (credit.PerCrosspoint, a token's XP the class).
// The node sends a packet with mask SendMask(pk).
func (p *Params) NodeSender() (mode credit.Mode, counters int, capacity uint16) {
	if p.Classes > 1 {
		return credit.PerCrosspoint, p.Classes, uint16(p.InjectPackets)
	}
	return credit.PerLink, 1, uint16(p.InjectPackets)
}

// EjectCounter is the credit counter of the router's ejection link
// (Router.Eject) under these parameters: without EjectPackets one
// counter the node's sink keeps topped up (credit.PerLink, 65535
// credits: a sink returns one per packet, or none, as it likes); with
// EjectPackets one counter of EjectPackets credits per class
// (credit.PerCrosspoint with Classes > 1, a token's XP the class;
// credit.PerLink with one class).
func (p *Params) EjectCounter() (mode credit.Mode, counters int, capacity uint16) {
	switch {
	case p.EjectPackets == 0:
		return credit.PerLink, 1, math.MaxUint16
	case p.Classes > 1:
		return credit.PerCrosspoint, p.Classes, uint16(p.EjectPackets)
	}
	return credit.PerLink, 1, uint16(p.EjectPackets)
}

// SendMask is the credit mask a node's sender (NodeSender) sends packet
// pk with: its class's counter (any mask does with one counter).
func SendMask(pk *packet.Packet) uint64 { return 1 << (pk.VL & (routing.MaxVCs - 1)) }

// EjectToken is the credit a node with bounded ejection
// (Params.EjectPackets) returns on the ejection link's credit line
// (link.Receiver.ReturnCredit) for n consumed packets of class c (0 with
// one class). A credit line carries one token a cycle: a node that
// consumes packets of two classes in one cycle returns the second
// class's credits in a later cycle.
func EjectToken(c, n int) credit.Token { return credit.Token{XP: uint16(c), N: uint16(n)} }
