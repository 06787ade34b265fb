// Package hostcall is the one shape of a host program as a node's
// transport calls it: the NIC (package nic: nic.Host) and the BG/L message
// layer (package msglayer: msglayer.Host) take the same hooks, and differ
// only in the handle a hook is given (P: what the host may do with its
// node's transport) and in the message delivered (M).
//
// The hooks run inside the transport's Eval, and so inside one cycle of a
// simulation whose components may be evaluated in parallel. That is why
// they are limited:
//
//   - A hook acts on its own node only, through the handle it is given
//     (post or send a message, post a receive, ask to be woken). The
//     handle refuses, with a panic naming the component, to be used
//     while none of its own node's hooks runs: a hook that kept another
//     node's handle and posts on it is caught (always when components
//     are evaluated one at a time; in a parallel run unless that node is
//     in a hook of its own at the same moment). What a hook reads of
//     other nodes must not be written after the message that makes it
//     read was sent.
//   - A hook does not block and does not wait: it returns, and asks to be
//     woken at a later cycle (the handle's WakeHost) for what comes next.
//   - The events of one node reach its hooks in time order, a cycle at
//     most late (a host evaluated late still acts in the order it would
//     have): the cycle is the event's, not the simulation's.
//   - A hook allocates nothing per packet or per message once warmed up:
//     it runs on the transport's hot path.
//
// A Wake hook is needed only by a host that asks to be woken; asking
// without one is refused where it is asked (WakeHost panics with an error
// naming the component), not when the cycle comes.
package hostcall

// Hooks are a host program's entry points on one node; a nil hook is an
// event the host does not take.
type Hooks[P, M any] struct {
	// Birth is a birth of the node's injection process at cycle t
	// (measured: inside the measurement window), given to the host
	// instead of becoming a message of the process's pattern.
	Birth func(p P, t uint64, measured bool)
	// Deliver hands the host a message that has reached it (its cycle is
	// the message's).
	Deliver func(p P, m M)
	// Wake is called at the cycle t the host asked for with WakeHost,
	// after the node's births and deliveries due by then: the host's
	// timer (a compute phase, the end of its own send overhead).
	Wake func(p P, t uint64)
}
