// Package router is the input-queued virtual-channel router of the direct
// networks (docs/architecture.md §6; the WORMulSim paper §3.2): input units
// with VCs of flit buffers, route computation through a routing.Func, VC
// allocation, separable round-robin switch allocation, output units with
// credits per VC in flits, and a pipeline delay. Port 0 is the node's own:
// packets come in from its source over a packet link (link.Receiver) into
// an injection FIFO (one per message class) and leave to its sink over
// another (link.Sender), which may be bounded ("The node's port").
//
// # Flits move in runs
//
// A flit takes P cycles on a link (Params.FlitCycles). A router does not
// move flits one at a time: when a VC wins its output it sends a run, every
// flit it can already prove may go at one flit per P cycles — the flits
// whose arrival it knows (an upstream run announces all of its flits when
// its first one is sent) and for which it holds or is promised a credit (a
// downstream run announces the credits its flits will free). One message
// on the data line announces the run; one on the credit line announces the
// credits it frees upstream. While a run is on the wire, news that lets it
// go on (more flits announced, more credits promised) extends it with one
// more message each way. A packet that moves unblocked therefore costs O(1)
// per hop whatever its length, and a blocked worm costs one event per
// router it stops in and one per router it restarts in.
//
// # Headers travel by handle
//
// A packet's header is copied once, from the node's port into a record of
// the partition's pool (store.newRec); from then on the head's message
// carries a pointer to it (Flits.Pkt) and each router on the way takes the
// record over, so a hop copies no header and a data line's entry is 32
// bytes. One router owns a record at a time: the one whose VC holds the
// head, until it passes the record on with its one copy; a multicast
// router gives every copy but the last a record of its own, and a link
// with retry every copy on the wire (the receiver may reject it, and then
// frees it). The last owner frees the record once its tail has left
// (store.retire). CheckRecords checks, after a drain, that every record
// is back in a pool exactly once. A record may be freed into another
// partition's pool than the one that made it; a pool of a split Sim
// keeps at most 256 free records and hands more to the partitions that
// would otherwise make new ones (records.go), so a hot spot across
// partitions does not grow the heap for as long as it runs.
//
// Timing is the flit-level model it stands for, exactly
// (TestRouterTimingMatchesFlitReference in timing_test.go checks it
// against a flit-by-flit reference, one router driven by the test
// blocks of harness_test.go): flit k of a run sent in cycle s is on the
// wire from s+kP, arrives at s+kP+L (L the channel delay), may leave the
// next router from arrival+D (D the pipeline delay: route computation,
// VC and switch allocation, crossbar), and frees its buffer slot when it
// leaves, its credit reaching the upstream L cycles later.
//
// # Switching (Params.Switching)
//
//   - vct: a packet gets an output VC only when that VC's credits cover the
//     whole packet, so it never waits inside the network with its tail
//     behind (VC buffers must hold a packet).
//   - wormhole: one flit per VC buffer; a header that cannot advance holds
//     its worm in place across the routers behind it.
//   - buffered-wormhole: Params.BufFlits flits per VC, no guarantee that a
//     packet fits.
//
// An output VC belongs to one packet from its head's allocation until its
// tail has been sent; a downstream VC buffer may hold the tail of one packet
// and the head of the next — unless allocation is atomic (Params.Atomic,
// set for adaptive routing under wormhole switching), which gives a VC
// only to a packet that finds it empty. Switch allocation is at run granularity: an
// output and an input port are held by one VC for a run (winner take all
// while the flits stream), and both are re-arbitrated when it ends.
//
// A head whose VC allocation fails waits (Router.block): until an event
// on one of the outputs its routing choices name (an output VC taken or
// freed, a multicast copy sent, credits announced for a VC no packet
// holds) or the cycle its retry names, VC allocation passes it by without
// reading its packet. Under a hot spot a router holds many such heads,
// and each try reads the packet's records, long gone from the caches.
// A try passed by is one that would fail and change nothing, so the runs
// are the same cycle for cycle (TestPassBlockedChangesNothing).
//
// An active VC that only a message can move (Router.stalled: no credit
// in hand or promised on its output VC, or its next flit not announced)
// is likewise left out of switch allocation until receive hears of
// credits for its output VC or of its flits. Under wormhole switching
// with one-flit buffers nearly every active VC waits so, flit by flit.
//
// # The node's port
//
// Port 0 joins the router to its node by two packet links, made by the
// node and joined by routernet.Net.ConnectNode (or link.Connect to
// Inject and from Eject). With the zero values of Params.Classes and
// Params.EjectPackets the node's sender into Inject has one counter of
// InjectPackets credits (credit.PerLink), the router returns a credit
// when a packet's tail leaves the injection FIFO, and the node's sink on
// Eject takes every packet (it returns Token{N: 1} per packet, or
// nothing: the router's counter is 65,535 deep and never waits).
//
// Message classes (Params.Classes = C > 1) are virtual networks: a
// packet's class is its VL, set by the node, 0..C−1. The VCs of every
// network port are C groups of k = VCs/C, class c on [ck, (c+1)k); the
// routing function routes on ClassNet (the network with k VCs, the
// packet's class in routing.Request.Class, its input VC within the
// class), its VC masks shifted into the class's group, and Bubble and
// Priority hold in every class. Port 0 has C injection FIFOs of InjectPackets packets and
// C ejection VCs, so a class that cannot move never blocks another. The
// node's sender has a counter per class (Params.NodeSender:
// credit.PerCrosspoint, C counters of InjectPackets) and sends a packet
// with mask SendMask(pk), its class's counter; the router puts it in its
// class's FIFO and returns that FIFO's credits as Token{XP: c}, one
// token a cycle (the classes take turns when several are due at once).
//
// Bounded ejection (Params.EjectPackets = E > 0) makes the node's
// receive side finite: E packets per class. The router's Eject sender
// has a counter of E credits per class (Params.EjectCounter), and a
// packet for the node is given its class's ejection VC only when that
// counter has a credit, which it takes when it leaves: a packet whose
// class's receive side is full waits in the router, holding its input
// VC and, upstream, the network's (back-pressure). The node's
// link.Receiver end returns EjectToken(c, n) on the Eject link's credit
// line (link.Receiver.ReturnCredit) when it has consumed n packets of
// class c (its credit line too takes one token a cycle); the router
// wakes on every such credit. A head waiting for an ejection credit is
// waiting in the wait-for graph (WaitsOn): on
// the node's injection FIFOs that hold packets, so that a protocol
// deadlock through the nodes' receive sides shows as a cycle.
//
//	rp := router.Params{ /* … */ VCs: 4, Classes: 2, InjectPackets: 4, EjectPackets: 2}
//	mode, n, capacity := rp.NodeSender()      // or routernet.Net.NodeSender
//	tx := link.NewSender(&node.Module, "tx", mode, n, capacity)
//	rx := link.NewReceiver(&node.Module, "rx")
//	net.ConnectNode(i, tx, rx)
//	// send: pk.VL = class; if tx.CanSend(now, router.SendMask(&pk)) { tx.Send(now, pk, router.SendMask(&pk)) }
//	// receive: pk, ok := rx.Recv(now) … and once consumed:
//	// rx.ReturnCredit(router.EjectToken(rp.ClassOf(&pk), 1))
//
// Lanes (Params.Lanes = F > 1; lanes.go) are several such links each
// way, as the BG/L node's several injection and reception FIFOs feed and
// drain several links at once (the BG/L MPI paper §2): lane l has its
// own link in (InjectLane(l); lane 0 is Inject) and out (EjectLane(l);
// lane 0 is Eject), an injection FIFO and an ejection VC per class (port
// 0's VC l·C + c), and is a crossbar input and output of its own, one
// packet at a time at link rate, busy independently of the other lanes.
// The node picks a packet's injection lane by the link it sends it on;
// the router gives a packet for the node any free ejection VC of its
// class, the lowest lane first. Each lane's sender is made as
// NodeSender says and joined by routernet.Net.ConnectNodeLane.
//
// # Bubble rule (torus escape rings)
//
// On the VCs of Params.Bubble a vct packet may enter a ring — be injected,
// change dimension, or come from another VC — only when the VC has credits
// for two packets; continuing in the same ring on the same VC needs one
// (docs/architecture.md §6). That keeps a free packet buffer in every ring.
package router
