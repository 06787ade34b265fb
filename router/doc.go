// Package router is the input-queued virtual-channel router of the direct
// networks (docs/architecture.md §6; the WORMulSim paper §3.2): input units
// with VCs of flit buffers, route computation through a routing.Func, VC
// allocation, separable round-robin switch allocation, output units with
// credits per VC in flits, and a pipeline delay. Port 0 is the node's own:
// packets come in from its source over a packet link (link.Receiver) into
// an injection FIFO and leave to its sink over another (link.Sender).
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
// # Bubble rule (torus escape rings)
//
// On the VCs of Params.Bubble a vct packet may enter a ring — be injected,
// change dimension, or come from another VC — only when the VC has credits
// for two packets; continuing in the same ring on the same VC needs one
// (docs/architecture.md §6). That keeps a free packet buffer in every ring.
package router
