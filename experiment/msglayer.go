package experiment

import (
	"fmt"
	"math"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/msglayer"
	"github.com/hwcoll/hwcoll/program"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
)

// MsgLayerNote goes into every program result with nic.model msglayer.
const MsgLayerNote = "every node runs its program on a BG/L message-layer endpoint (package msglayer) in place of a NIC: send posts one message of traffic.message_bytes by msglayer.protocol and the host goes on; the message layer's processor pays the paper's Table 1 overheads (clock_mhz/700 cycles per instruction); recv posts a receive and waits for the message's delivery; latency is the sender's post to the delivery"

// msgInstructionMHz is the clock of the message layer's processor: the
// Table 1 overheads are instructions, one a cycle of the 700 MHz PowerPC
// 440 (package msglayer), converted to cycles of clock_mhz.
const msgInstructionMHz = 700

// msgLayerParams are the endpoints' parameters of cfg on rt: the torus
// packet of packet.bytes in flits of packet.flit_bytes (P cycles each),
// the Table 1 overheads in cycles of clock_mhz, the protocol table of
// msglayer.protocol auto, K (msglayer.leads; 0: LeadsFor the round trip
// over the network's mean distance) and the high-priority lead.
func msgLayerParams(cfg config.Config, rt routed) (*msglayer.Params, error) {
	p := msglayer.DefaultParams()
	pb, fb := uint32(cfg.Packet.Bytes), uint32(cfg.Packet.FlitBytes)
	if pb%fb != 0 {
		return nil, fmt.Errorf("packet.bytes: %d is not a whole number of packet.flit_bytes %d-byte chunks, which a message-layer packet is; allowed with nic.model msglayer: a multiple of %d", pb, fb, fb)
	}
	p.Shape = msglayer.Shape{PacketBytes: pb, ChunkBytes: fb, ChunkCycles: uint32(rt.P)}
	scale := func(instr uint64) uint64 {
		return uint64(math.Round(float64(instr) * cfg.ClockMHz / msgInstructionMHz))
	}
	p.PostCycles, p.PacketCycles, p.SendDoneCycles = scale(p.PostCycles), scale(p.PacketCycles), scale(p.SendDoneCycles)
	p.DispatchCycles, p.MatchCycles, p.RecvDoneCycles = scale(p.DispatchCycles), scale(p.MatchCycles), scale(p.RecvDoneCycles)
	p.Protocols = p.Protocols[:0]
	for _, t := range []msglayer.Threshold{
		{MaxBytes: pb, Proto: msglayer.Single},
		{MaxBytes: uint32(cfg.MsgLayer.EagerMaxBytes), Proto: msglayer.Eager},
		{MaxBytes: uint32(cfg.MsgLayer.MidsizeMaxBytes), Proto: msglayer.Midsize},
	} {
		if n := len(p.Protocols); n == 0 || t.MaxBytes > p.Protocols[n-1].MaxBytes {
			p.Protocols = append(p.Protocols, t)
		}
	}
	p.HighPriorityLead = cfg.MsgLayer.HighPriorityLead
	p.Leads = cfg.MsgLayer.Leads
	if p.Leads == 0 {
		p.Leads = p.LeadsFor(roundTrip(cfg, rt, &p))
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("msglayer: %v", err)
	}
	return &p, nil
}

// roundTrip is the zero-load round trip that K covers (msglayer.leads 0):
// a full lead packet out over the network's mean distance, dispatched,
// its ack prepared, sent back over the same distance and dispatched.
// A packet of F flits over r routers takes (r+1)·L + r·D + F·P cycles.
func roundTrip(cfg config.Config, rt routed, p *msglayer.Params) uint64 {
	L, D := max(rt.tm.LinkDelayCycles, 1), max(rt.tm.SwitchDelayCycles, 1)
	routers := 1.0 // the distance in links, plus the source's router
	for _, k := range cfg.Network.Dims {
		if rt.net.Routing.Torus {
			routers += float64((k/2)*((k+1)/2)) / float64(k) // mean ring distance
		} else {
			routers += float64(k*k-1) / float64(3*k) // mean line distance
		}
	}
	wire := func(flits uint64) uint64 {
		return uint64(math.Round((routers+1)*float64(L)+routers*float64(D))) + flits*rt.P
	}
	return wire(uint64(rt.flits)) + p.DispatchCycles + p.PacketCycles + wire(1) + p.DispatchCycles
}

// buildMsgLayer builds a program run with a message-layer endpoint at
// every node (nic.model msglayer).
func buildMsgLayer(cfg config.Config, rt routed, prog *program.Program) (*ProgramNet, error) {
	if rt.net.Routing.Graph() {
		return nil, fmt.Errorf("nic.model: msglayer endpoints are built on network.topology torus and mesh, not on %s; allowed there: none | overhead", cfg.Network.Topology)
	}
	p, err := msgLayerParams(cfg, rt)
	if err != nil {
		return nil, err
	}
	proto, err := msglayer.ParseProtocol(cfg.MsgLayer.Protocol)
	if err != nil {
		return nil, fmt.Errorf("msglayer.protocol: %v", err)
	}
	layer, err := program.NewEndpointRunner(prog, uint32(min(cfg.Traffic.MessageBytes, math.MaxUint32)), proto, p.Shape)
	if err != nil {
		key := "traffic.message_bytes"
		switch {
		case proto == msglayer.Single && cfg.Traffic.MessageBytes <= int(p.Shape.MaxBytes()):
			key = "msglayer.protocol"
		case cfg.Traffic.MessageBytes <= int(p.Shape.MaxBytes()):
			key = "traffic.program"
		}
		return nil, fmt.Errorf("%s: %v", key, err)
	}
	n := &ProgramNet{Sim: rt.sim, Cfg: cfg, Timing: rt.tm, Net: rt.net, Prog: prog, Layer: layer, MsgParams: p, flits: rt.flits}
	n.hosts = layer
	for i := 0; i < prog.Nodes; i++ {
		e, err := msglayer.New(rt.sim.Top(), rtl.Idx("ml", i), uint32(i), p, injectPackets)
		if err != nil {
			return nil, fmt.Errorf("msglayer: %v", err)
		}
		e.Lat = &stats.Latency{}
		layer.Attach(i, e)
		rt.net.ConnectNode(i, &e.Tx, &e.Rx)
		n.Endpoints = append(n.Endpoints, e)
	}
	n.Watch = newWatchdog(rt.net, uint64(cfg.Run.WatchdogCycles))
	return n, nil
}

// layerResult sums the endpoints' counters into r and their latencies
// into lat; it returns the packet hops of the program's messages (for the
// kernel's rate: every packet of every send over its route, acks
// included) and the first endpoint error.
func (n *ProgramNet) layerResult(r *Result, lat *stats.Latency) (uint64, error) {
	var err error
	var c msglayer.Counters
	for _, e := range n.Endpoints {
		c.Add(&e.Counters)
		lat.Merge(e.Lat)
		if x := e.Err(); x != nil && err == nil {
			err = x
		}
	}
	r.PacketsInjected += c.PacketsSent
	r.PacketsDelivered += c.PacketsReceived
	r.MessagesPosted += c.Posted
	r.MessagesSent += c.Sent
	r.MessagesDelivered += c.Delivered
	r.OutOfOrderPackets += c.OutOfOrder
	r.Acks += c.AcksSent
	r.UnexpectedMessages += c.Unexpected
	r.BufferedBeforeMatch += c.BufferedBeforeMatch
	r.HeldForOrder += c.HeldForOrder
	r.FastPathMessages += c.FastPath
	r.MaxOpenMessages = max(r.MaxOpenMessages, c.MaxOpen)
	if x := n.Layer.Err(); x != nil && err == nil {
		err = x
	}
	r.MsgLayerProtocol, r.MsgLayerLeads = n.Cfg.MsgLayer.Protocol, n.MsgParams.Leads
	sh := &n.MsgParams.Shape
	var hops uint64
	for src := 0; src < n.Prog.Nodes; src++ {
		for pc, end := 0, n.Prog.Len(src); pc < end; pc++ {
			if op := n.Prog.Op(src, pc); op.Kind == program.Send {
				hops += uint64(sh.Packets(uint32(n.Cfg.Traffic.MessageBytes))) * uint64(n.Net.Hops(src, int(op.Peer))+1)
			}
		}
	}
	return hops, err
}
