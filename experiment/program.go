package experiment

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/msglayer"
	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/program"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
)

// ProgramNote goes into every program result: what the nodes run.
const ProgramNote = "every node runs its program on a NIC (package program): send posts one message of traffic.message_bytes and keeps the host busy for the send overhead; the NIC pays the send overhead per message and nic.send_packet_ns per packet; the receiving NIC pays nic.recv_packet_ns per packet and the receive overhead per message; recv waits for the message"

// ProgramNet is a program run (traffic.pattern program) on a network of
// router blocks: a NIC at every node, running the node's program.
type ProgramNet struct {
	Sim       *rtl.Sim
	Cfg       config.Config
	Timing    config.Timing
	Net       *routernet.Net
	Prog      *program.Program
	Runner    *program.Runner
	Senders   []*nic.Sender
	Receivers []*nic.Receiver
	// With nic.model msglayer: a message-layer endpoint per node in place
	// of the NICs, the program's runner on them (Runner is nil) and their
	// parameters.
	Endpoints []*msglayer.Endpoint
	Layer     *program.EndpointRunner
	MsgParams *msglayer.Params
	Watch     *Watchdog
	flits     int
	extra     func(*Result) // RouterNetlist.Result
	hosts     hosts         // Runner or Layer
	shape     nic.Shape     // the NICs' (collectives.go's bounds)
	lanes     int           // the node port's lanes (router.injection_fifos; 1 on the message layer)
	maxCycles uint64        // run.max_cycles, or derived from the work (workLimit)
}

// partitionsPerGoroutine: a program's collectives move in waves
// (programSplit).
func (*ProgramNet) partitionsPerGoroutine() int { return programSplit }

// hosts is what a run asks of its program's runner.
type hosts interface {
	Done() bool
	Completion() uint64
	Blocked(most int) []string
}

// RoutedProgram makes program runs (traffic.pattern program) on the
// networks of router blocks netlist says how to build: a NIC (or, with
// nic.model msglayer, a message-layer endpoint) at every node running the
// node's program.
func RoutedProgram(netlist func(config.Config) (RouterNetlist, error)) Maker[*ProgramNet] {
	return onNetlist(netlist, routedProgram)
}

func routedProgram(cfg config.Config, tm config.Timing, nl RouterNetlist) (*ProgramNet, error) {
	lanes := max(cfg.Router.InjectionFIFOs, 1) // the NICs' (the message layer does not read the key)
	if cfg.NIC.Model == config.NICMsgLayer {
		lanes = 1
	}
	rt, err := buildNet(cfg, tm, nl, func(p *router.Params) { p.Lanes = lanes })
	if err != nil {
		return nil, err
	}
	nodes := rt.net.Nodes()
	o := program.Options{Sources: cfg.Traffic.Sources, Destinations: cfg.Traffic.Fanout, Seed: uint64(cfg.Seed),
		Colours: cfg.Traffic.Colors, CombineCycles: combineCycles(cfg)}
	if !rt.net.Routing.Graph() {
		o.Net = rt.net.Routing
	}
	prog, err := program.New(cfg.Traffic.Program, nodes, o)
	if err != nil {
		key := "traffic.program"
		switch {
		case strings.Contains(err.Error(), "colours"):
			key = "traffic.colors"
		case strings.Contains(err.Error(), "sources"):
			key = "traffic.sources"
		case strings.Contains(err.Error(), "destinations"):
			key = "traffic.fanout"
		}
		return nil, fmt.Errorf("%s: %v", key, err)
	}
	if cfg.NIC.Model == config.NICMsgLayer {
		return buildMsgLayer(cfg, rt, prog)
	}
	fb, P := uint64(cfg.Packet.FlitBytes), rt.P
	shape, err := nic.NewShape(cfg.Traffic.MessageBytes, cfg.Packet.Bytes, func(b uint64) uint64 { return (b + fb - 1) / fb * P })
	if err != nil {
		return nil, err
	}
	n := &ProgramNet{Sim: rt.sim, Cfg: cfg, Timing: rt.tm, Net: rt.net, Prog: prog, Runner: program.NewRunner(prog), flits: rt.flits, extra: rt.nl.Result,
		shape: shape, lanes: lanes, maxCycles: workLimit(cfg, prog, shape, rt.tm.SendOverheadCycles, rt.tm.RecvOverheadCycles)}
	n.hosts = n.Runner
	links := linksOf(rt.net)
	for i := 0; i < nodes; i++ {
		tx := nic.NewSender(rt.sim.Top(), rtl.Idx("nic_tx", i), uint32(i), shape, rt.tm.SendOverheadCycles, credit.PerLink, 1, injectPackets)
		tx.PacketOverhead, tx.Header = rt.tm.Cycles(cfg.NIC.SendPacketNS), rt.nl.Header
		rx := nic.NewReceiver(rt.sim.Top(), rtl.Idx("nic_rx", i), uint32(i), shape, rt.tm.RecvOverheadCycles)
		rx.PacketOverhead = rt.tm.Cycles(cfg.NIC.RecvPacketNS)
		rx.Links = links
		n.Runner.Attach(i, tx, rx)
		rt.net.ConnectNode(i, tx.Tx, rx.Rx)
		if lanes > 1 { // the node port's lanes (nic: a forwarded packet in its colour's)
			tx.AddLanes(lanes, credit.PerLink, 1, injectPackets)
			rx.AddLanes(lanes)
			for l := 1; l < lanes; l++ {
				rt.net.ConnectNodeLane(i, l, tx.Lane(l), rx.Lane(l))
			}
		}
		n.Senders, n.Receivers = append(n.Senders, tx), append(n.Receivers, rx)
	}
	n.Watch = newWatchdog(rt.net, uint64(cfg.Run.WatchdogCycles))
	return n, nil
}

func (n *ProgramNet) Simulator() *rtl.Sim { return n.Sim }

// Trace records the selected signals of the run into w.
func (n *ProgramNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run runs every node's program to its end (or run.max_cycles, or a
// deadlock the watchdog sees).
func (n *ProgramNet) Run() Result {
	start := time.Now()
	limit := n.maxCycles
	if limit == 0 { // the message layer's: run.max_cycles as set
		limit = uint64(n.Cfg.Run.MaxCycles)
	}
	n.Watch.runUntil(n.Sim, func() bool { return n.hosts.Done() && !n.layerBusy() || n.Watch.Stalled() }, limit)
	return n.result(time.Since(start).Seconds())
}

// layerBusy reports whether a message-layer endpoint has work left (the
// acks and senddones after the programs' ends: the run drains them, so
// that the counters add up; completion is still the programs' end).
func (n *ProgramNet) layerBusy() bool {
	for _, e := range n.Endpoints {
		if e.Busy() {
			return true
		}
	}
	return false
}

func (n *ProgramNet) result(wall float64) Result {
	cfg := n.Cfg
	nodes := n.Prog.Nodes
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: n.Sim.Now(), Nodes: nodes, Inputs: nodes,
		Pattern: cfg.Traffic.Pattern, Program: cfg.Traffic.Program, Note: ProgramNote,
		PacketCycles: n.Timing.PacketCycles, WallSeconds: wall, Process: "program",
	}
	routedResult(&r, cfg, n.Net, n.flits, n.extra)
	var lat stats.Latency
	var hops uint64
	var err error
	if n.Layer != nil {
		r.Note = MsgLayerNote
		hops, err = n.layerResult(&r, &lat)
	}
	for i, tx := range n.Senders {
		rx := n.Receivers[i]
		r.PacketsInjected += tx.Injected
		r.MessagesPosted += tx.Posted
		r.MessagesSent += tx.Sent
		r.PacketsDelivered += rx.Received
		hops += rx.Hops
		lat.Merge(&rx.Lat)
		if e := rx.Err(); e != nil && err == nil {
			err = e
		}
	}
	if lat.N() > 0 { // message latency: post to completion at the receiver
		r.LatencyAvgCycles, r.LatencyP50Cycles, r.LatencyP99Cycles = lat.Avg(), lat.Quantile(0.5), lat.Quantile(0.99)
		r.LatencyMaxCycles, r.LatencyAvgNS = float64(lat.Max()), n.Timing.NS(lat.Avg())
	}
	r.Drained = n.hosts.Done() && !n.layerBusy()
	if r.Drained {
		r.CompletionCycles = n.hosts.Completion()
		r.CompletionNS = n.Timing.NS(float64(r.CompletionCycles))
	}
	n.bounds(&r)
	if r.BoundCycles > 0 && r.CompletionCycles > 0 {
		r.BoundRatio = float64(r.CompletionCycles) / float64(r.BoundCycles)
	}
	if r.Program == "deposit-broadcast" {
		r.Colors = max(cfg.Traffic.Colors, 1)
	}
	if n.Layer == nil && cfg.Router.InjectionFIFOs > 1 {
		r.InjectionFIFOs = cfg.Router.InjectionFIFOs
	}
	r.kernel(n.Sim, wall, hops)
	if err == nil {
		err = n.Net.Err()
	}
	if err == nil {
		err = n.Net.CheckCredits()
	}
	r.Stable = err == nil && r.Drained
	n.Watch.report(&r)
	switch {
	case n.Watch.stalled:
	case !r.Drained:
		limit := fmt.Sprintf("run.max_cycles (%d)", cfg.Run.MaxCycles)
		if n.maxCycles != 0 && n.maxCycles != uint64(cfg.Run.MaxCycles) {
			limit = fmt.Sprintf("%d cycles (four times its work done one message after another; run.max_cycles sets the limit)", n.maxCycles)
		}
		r.fail(fmt.Sprintf("program %s did not end within %s: %s", cfg.Traffic.Program, limit, strings.Join(n.hosts.Blocked(3), "; ")))
	case err != nil:
		r.fail(err.Error())
	}
	return r
}
