package router

import (
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
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
	// InjectPackets is the injection FIFO's capacity in packets.
	InjectPackets int
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
	case p.Delay < 1:
		return param.Errorf("router.Params.Delay", "%d; allowed: at least 1", p.Delay)
	case p.InjectPackets < 1 || p.InjectPackets > 1<<10:
		return param.Errorf("router.Params.InjectPackets", "%d is out of range; allowed 1..1024", p.InjectPackets)
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
