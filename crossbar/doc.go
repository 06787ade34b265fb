// Package crossbar is the switch netlist (the OQ-router paper §2) in three
// organizations that share the ports (Switch.In, Switch.Out), the routing
// table and the timing, so they can be compared side by side (docs/architecture.md §5).
//
// # oq-xp: output-queued with crosspoint buffers (the design under study)
//
// Input ports look up the route and write a packet into the crosspoint
// buffer of every output it goes to in one crossbar pass (multicast
// replication); K×K crosspoint buffers; per-output round-robin arbiters send
// a crosspoint's head packet when the downstream credits allow. Every output
// decides alone, so inputs and outputs are separate components (input.go,
// output.go). They share one partition of the kernel (rtl.Module.Together)
// and hand each other work through declared calls (rtl.CallOut, wired in
// New), always for a later cycle: in(i).xp_write puts a copy into
// out(o)'s crosspoint bank at once, marked with the cycle it arrives after
// the switch delay; out(o).done gives a sent copy's notice to in(i), which
// takes it a cycle later. The packet itself stays in
// the input's slot until its last copy has left; crosspoints hold the slot.
//
// Credits (credit.Mode). Min-free (the OQ-router paper §2, the default):
// the upstream counter starts at XPPackets and holds the least free space
// over input i's crosspoints; input i follows its crosspoints' counts
// (credit.Granter, traced as in(i).grant.min_free and .granted) and, every
// cycle it is evaluated, returns whatever that minimum has grown past what
// it has granted — on a packet's arrival when the packet fills no
// crosspoint up to the fullest one, otherwise when the fullest one drains.
// A packet, unicast or multicast, goes when the counter is ≥ 1 and finds
// room in every crosspoint; an input may hold up to XPPackets packets per
// crosspoint. Per-link mode: the counter counts the packets the input
// holds in all (at most XPPackets); input i keeps one slot per packet and
// returns the credit when the last copy has left its crosspoint (the
// output that sends the last copy schedules that credit for the next
// cycle on the input's behalf, so the input need not wake for it; in
// min-free mode the output takes the done notice's counts and releases the
// credit they free in the same way when the input would do nothing else
// in the next cycle: not evaluated in this one, nothing owed, no head
// arriving by then, nothing traced — inPort.releaseEarly).
// Per-crosspoint mode: one counter per downstream output, one credit back
// per copy; the sender needs look-ahead routing. Slots for the packets an
// input holds are made as they are first needed.
//
// # iq-fifo and voq: input-queued baselines with one central scheduler
//
// Input queueing needs a central arbiter (the OQ-router paper §2: "IQ and VOQ ... have
// centralized arbitration"): whether input i may send to output o depends on
// what every other input and output does in the same arbitration. To keep
// that deterministic and independent of evaluation order, the whole switch is
// ONE component (scheduler.go): the Switch module itself is clocked, and
// in(i) / out(o) are its sub-blocks holding the link ends, the queues and the
// probes. So the hierarchical names (top.sw.in(3).rx, top.sw.out(5).tx) are
// those of oq-xp.
//
// Timing is that of oq-xp, so the three compare like with like: a head
// received by input i in cycle t is visible to the scheduler from t +
// SwitchDelay (oq-xp: visible to the output), and a packet granted in cycle s
// has its head on the output link in cycle s. A transfer lasts the packet's
// Cycles: the input reads its buffer at link rate, so an input serves one
// transfer at a time (one output for a unicast; for a multicast the crossbar
// lets it drive several outputs at once), and the output link is busy for as
// long. A packet leaves its queue (frees its buffer slot) when the transfer
// of its last copy starts, and the credit goes upstream in the next cycle —
// exactly when oq-xp returns it (its output tells the input over a latency-1
// line).
//
// Arbitration is event driven, at packet-time granularity: the scheduler
// arbitrates in a cycle in which an input or an output becomes free, a queued
// head becomes visible or a credit arrives at an output, and sleeps in
// between (O(ports) work per arbitration, O(1) per packet per hop; nothing
// per cycle of packet length). Between events nothing it looks at changes,
// so evaluating it in other cycles (activity off) changes nothing: the
// matching is only recomputed at events, which is also what makes a limited
// number of iSLIP iterations meaningful.
//
// An output is free when its link is idle and the downstream has a credit for
// the packet (per-link or, with look-ahead, per-crosspoint downstream
// counters, as for oq-xp).
//
// iq-fifo: one FIFO per input holding XPPackets packets, which is also the
// upstream's per-link credit count (the same number of packets per input as
// oq-xp holds with per-link credits, so the two compare at equal
// buffering). Only the head of each FIFO can be served (head-of-line
// blocking). Each free output grants round robin (pointer one past the last
// input it granted) among the free inputs whose visible head wants it.
// Multicast with fanout splitting (Params.FanoutSplitting): the head
// requests every free output it still has to reach and takes every grant, in
// one crossbar pass; the rest go in later transfers, and the packet leaves
// the FIFO (credit returned) when its last copy has gone. Without splitting,
// a multicast head requests only when all its remaining outputs are free and
// goes only if all of them grant it in the same arbitration; if some do not,
// it refuses and the outputs it refused grant again among the other requests
// (repeated until no grant is refused). So that a multicast cannot starve
// behind a stream of unicasts or smaller multicasts, the oldest waiting
// multicast head (earliest visible, then lowest input) reserves its free
// outputs: they grant no one else until it has gone.
//
// voq: per input one virtual output queue per output plus one multicast FIFO.
// The input's buffer holds XPPackets packets, shared by its queues; each
// queue can hold all of them, so the upstream (per-link credits, counter =
// XPPackets) never overflows one. Per-crosspoint credits (per-VOQ counters)
// are not offered; New rejects them naming network.credit_mode. Min-free
// is accepted for iq-fifo and voq and is per-link there: an input has one
// buffer, whose least free space is its free space. Unicast
// packets go to the VOQ of their output, multicast packets to the multicast
// FIFO (a packet's kind decides, so order is kept among the unicast packets
// of an (input, output) pair and among the multicast ones). In each
// arbitration the multicast FIFO heads are scheduled first, by the iq-fifo
// rules above (fanout splitting or not, separate round-robin pointers
// mc_ptr), then iSLIP (McKeown) matches the remaining free inputs and
// outputs for unicast: for Params.Iterations iterations over the unmatched
// ones, each input requests every output whose VOQ head is visible, each
// output grants the requesting input next at/after its grant pointer, each
// input accepts the granting output next at/after its accept pointer; the
// pointers move one past the partner only for matches made in the first
// iteration.
//
// A unicast route with several outputs (adaptive routing, Table.SetUnicast
// with a set) is resolved by the input when the packet arrives, in every
// organization: the output with the fewest of this input's copies still in
// the switch for it (oq-xp: in its crosspoint or on the way; iq-fifo, voq:
// queued at the input), lowest index first. The packet then goes to that
// one output only. Two options (fat-trees, package fattree) refine the
// choice: Params.AdaptiveCredits first keeps the candidates with the most
// downstream credits (oq-xp: each output of the set registers its credit
// count in out(o).ds_credits, read by the inputs a cycle later, so the
// choice does not depend on evaluation order; the inputs compute the
// register's value from the counter, and the output updates the register
// only while it is traced), and Params.RandomTies (implied by it)
// breaks the remaining ties by a draw from the input port's own random
// stream instead of the lowest index. Neither is set for a single switch.
//
// Accessors per organization: Buffered(i) counts the packets holding input
// i's credits (oq-xp: slots in use; iq-fifo, voq: packets in its queues);
// PendingCredits(i) the credits freed but not yet sent upstream;
// CopiesHeld(i, o) the copies for output o holding a crosspoint credit (oq-xp)
// or queued at input i (iq-fifo, voq); XPOccupancy(i, o) the crosspoint
// (oq-xp), input i's FIFO whatever o (iq-fifo) or VOQ (i, o) (voq);
// XPCapacity the capacity of that buffer, XPPackets in every case.
//
// Traced per input: rx (valid, pkt), occupancy, head_pkt, xfer (the outputs
// it is driving); voq also voq(o) occupancies, mc_occupancy and accept_ptr.
// Per output: tx (valid, pkt, credits), grant (input on the link), rr_ptr,
// credit_stall; voq also mc_ptr.
package crossbar
