package program

import (
	"fmt"

	"github.com/hwcoll/hwcoll/msglayer"
)

// EndpointRunner runs a program on the nodes' BG/L message-layer
// endpoints (package msglayer) instead of NICs: the same hosts as
// Runner's, over another transport.
//
//   - Send(dst, tag): the host posts a message of the run's size with
//     the run's protocol (msglayer.Endpoint.Send) and goes on at once:
//     the message layer's processor pays the overheads (postsend,
//     msgsend_adv per packet, …), not the host (the BG/L MPI paper §5,
//     communication coprocessor mode).
//   - Recv(src, tag): the host posts a receive on its endpoint
//     (msglayer.Endpoint.Recv; MPI matching is the endpoint's, the
//     unexpected queue included) and waits; the op completes at the
//     cycle the message is delivered (recvdone ends).
//   - Compute(c): the host is busy c cycles (Endpoint.WakeHost).
//   - Deposit: refused (NewEndpointRunner); the message layer speaks
//     unicast.
type EndpointRunner struct {
	core
	eps   []epPort
	bytes uint32
	proto msglayer.Protocol
}

// epPort is a host's endpoint: its hooks are the endpoint's
// msglayer.Host, and send, receive and wake go through the Port (from
// inside the hooks only).
type epPort struct {
	h   *host
	p   msglayer.Port
	r   *EndpointRunner
	err error // the first Send the endpoint refused
}

// tagBase is the smallest tag a program uses (the library's are below
// 0): a program tag goes on the wire as tag − tagBase.
const tagBase = depositTag

// NewEndpointRunner makes the runner of p on endpoints of shape sh, every
// message of bytes bytes sent by proto (msglayer.Auto: by the endpoints'
// protocol table). It refuses a program that deposits, a message the
// shape cannot carry, a Single protocol for a message of several packets
// and tags the software header cannot carry.
func NewEndpointRunner(p *Program, bytes uint32, proto msglayer.Protocol, sh msglayer.Shape) (*EndpointRunner, error) {
	if bytes > sh.MaxBytes() {
		return nil, fmt.Errorf("a message of %d bytes; allowed on the message layer: at most %d (65536 packets of %d bytes)", bytes, sh.MaxBytes(), sh.PacketBytes)
	}
	if proto == msglayer.Single && sh.Packets(bytes) > 1 {
		return nil, fmt.Errorf("the single-packet protocol for messages of %d bytes, %d packets of %d bytes; allowed: messages of at most one packet", bytes, sh.Packets(bytes), sh.PacketBytes)
	}
	for node := 0; node < p.Nodes; node++ {
		for pc, end := 0, p.Len(node); pc < end; pc++ {
			op := p.Op(node, pc)
			switch {
			case op.Kind == Deposit || op.Kind == Forward:
				return nil, fmt.Errorf("program %s: node %d deposits along a torus line; the message layer sends unicast messages only", p.Name, node)
			case op.Kind == RecvAll:
				return nil, fmt.Errorf("program %s: node %d takes messages from any node; the message layer's receives name their source", p.Name, node)
			case (op.Kind == Send || op.Kind == Recv) && int64(op.Tag)-tagBase > msglayer.MaxTag:
				return nil, fmt.Errorf("program %s: node %d uses tag %d; allowed on the message layer: at most %d", p.Name, node, op.Tag, msglayer.MaxTag+tagBase)
			}
		}
	}
	r := &EndpointRunner{eps: make([]epPort, p.Nodes), bytes: bytes, proto: proto}
	r.init(p)
	return r, nil
}

// Attach makes node's program the host of endpoint e and starts it at
// cycle 0. Call before the simulation is built.
func (r *EndpointRunner) Attach(node int, e *msglayer.Endpoint) {
	p := &r.eps[node]
	p.h, p.r = &r.hosts[node], r
	p.h.tr = p
	var err error
	p.p, err = e.Attach(msglayer.Host{Deliver: p.deliver, Wake: p.wakeUp})
	if err != nil {
		panic(err) // only a Birth hook is refused
	}
	e.WakeHost(0)
}

// deliver hands a delivered message to the host.
func (p *epPort) deliver(_ msglayer.Port, d msglayer.Delivery) {
	p.h.deliver(int32(d.Src), int32(int64(d.Tag)+tagBase), d.At)
}

// wakeUp resumes the program after a Compute.
func (p *epPort) wakeUp(_ msglayer.Port, t uint64) { p.h.run(t) }

// Err is the first send an endpoint refused (by node), or nil.
func (r *EndpointRunner) Err() error {
	for i := range r.eps {
		if err := r.eps[i].err; err != nil {
			return fmt.Errorf("node %d: %v", i, err)
		}
	}
	return nil
}

func (p *epPort) post(_ int, op Op, _ uint64) uint64 {
	_, err := p.p.Send(msglayer.SendReq{Dst: uint32(op.Peer), Tag: uint32(int64(op.Tag) - tagBase), Bytes: p.r.bytes, Proto: p.r.proto})
	if err != nil && p.err == nil {
		p.err = err
	}
	return 0
}

func (p *epPort) recv(op Op, _ uint64) {
	p.p.Recv(uint32(op.Peer), uint32(int64(op.Tag)-tagBase))
}

func (p *epPort) wake(at uint64) { p.p.WakeHost(at) }

func (p *epPort) forward(int, Op, uint64) uint64 {
	panic("program: a Forward on the message layer (NewEndpointRunner refuses it)")
}
