// Package packet is the packet format every block carries (docs/architecture.md §4): a
// header with addressing, collective tag, message id, sequence and length.
// Packets are values: links, buffers and multicast replication copy them,
// so nothing is allocated per packet and no two components share one,
// with two exceptions. Between the VC routers (package router: the tori,
// meshes, MINs and irregular networks) the header travels as a handle,
// a pointer to a record in the routers' pool that moves with the packet
// from router to router, one owner at a time (router.Flits). And a
// reduction's payload (Payload), the one per-packet allocation for
// now: a slice that is immutable once the packet is sent, so copies (links,
// multicast replication) share it and a combine unit builds a new slice for
// every packet it emits (the OQ-router paper §2.1).
package packet

import "fmt"

// Op is the collective tag that selects what a switch does with a packet.
type Op uint8

const (
	Unicast   Op = iota // to one node
	Multicast           // to every port of the collective's entry but the arrival port
	Reduce              // combined in the switches (combine units)
	Barrier             // a reduction without payload
	Broadcast           // a multicast from the root of a collective
	// Deposit is the BlueGene/L torus's deposit bit (the BG/L MPI paper
	// §2): a packet sent along one line of the torus (Dst differs from
	// Src in one coordinate) is delivered at every node it passes, its
	// direction the hint bit of that dimension (HintMinus).
	Deposit
)

var opNames = [...]string{"unicast", "multicast", "reduce", "barrier", "broadcast", "deposit"}

// HintMinus is the hint bit of dimension d in a torus packet's Mask (bits
// 0..2; the BG/L torus header's hint bits): set, a Deposit packet goes
// the negative way along its line; clear, the positive way. The bits
// above 7 are the message layer's (package msglayer).
func HintMinus(d int) uint64 { return 1 << uint(d) }

// HintHigh in a Deposit packet's Mask puts its line on the high-priority
// bubble VC (the VC field of the BG/L torus header, which the sender
// sets; routing bgl with 4 VCs): two lines that share links, each on a
// bubble VC of its own, do not wait behind each other's packets.
const HintHigh uint64 = 1 << 6

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Packet is the header and, for reductions, the payload of one packet.
type Packet struct {
	// (Fields are ordered so the struct packs into 88 bytes: a packet is
	// copied onto every link of the fat-tree's switches it crosses, and
	// into a VC router's record from the node's port.)
	ID     uint64 // unique per run: source << 40 | sequence at the source
	Src    uint32 // source node
	Dst    uint32 // destination node (Unicast) or collective address
	Mask   uint64 // Multicast in a single-switch experiment: the destination port set drawn by the source; 0 means look Dst up in the routing table. A torus packet: hint bits (HintMinus) and the message layer's header
	Msg    uint32 // message id at the source
	Bytes  uint32
	Cycles uint32 // cycles the packet holds a link: ceil(Bytes / link bytes per cycle)
	Seq    uint16 // packet index within the message
	Op     Op
	VL, SL uint8
	Hops   uint8
	// InPort is the switch input the packet last arrived on, written by the
	// input port with the packet into its crosspoints: a combine unit marks
	// that port as delivered in its arrival-port mask (the OQ-router paper §2.1).
	InPort uint8
	// Measured marks a packet born inside the measurement window: its
	// latency counts and the run drains until every copy of it arrived.
	Measured bool
	// Pass is the tree pass of a Reduce packet (alu.Spec.Passes): 0, or 1
	// for the aligned mantissas of a two-phase float sum. A combine unit
	// keeps separate state per pass and folds with that pass's ALU.
	Pass uint8
	// Next is look-ahead routing (per-crosspoint credits on a network with
	// adaptive routes): 1 + the output the packet takes in the switch it is
	// sent to, chosen by the sender from its per-crosspoint credits; 0 lets
	// that switch choose. The switch clears it on arrival.
	Next uint8
	// Link is the link-level header of a link with retry (link.Retry): the
	// link sequence number in bits 0..14; bit 15 set when the copy on the
	// wire fails the receiver's CRC check. It fits in what was padding.
	Link uint16
	Born uint64 // cycle the packet entered its source queue (latency starts here)
	Sent uint64 // cycle its head left the source
	// Payload is a Reduce packet's contribution or partial result as ALU
	// wire words (alu.Spec.Encode); nil for every other packet and for a
	// Barrier. Never written after the packet is sent: copies share it.
	Payload []uint64
}

// MakeID builds the unique packet id from a source and its running count.
func MakeID(src uint32, n uint64) uint64 { return uint64(src)<<40 | n&(1<<40-1) }

// Tag is a 32-bit name of the packet for waveforms: source in the high 12
// bits, the source's packet count in the low 20 (both wrap).
func (p *Packet) Tag() uint32 { return uint32(p.ID>>40)<<20 | uint32(p.ID&(1<<20-1)) }
