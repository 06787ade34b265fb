package msglayer

import "fmt"

// Protocol is how a message goes (the BG/L MPI paper §5, "Communication
// protocol in the message layer").
type Protocol uint8

const (
	// Auto picks the protocol from Params.Protocols by the message's size.
	Auto Protocol = iota
	// Eager is "fire and forget": every packet goes at once; only the first
	// carries the matching information, so the others may reach the
	// receiver before it and must be buffered there.
	Eager
	// Single is the single-packet fast path: a message of one packet,
	// matched and delivered as it is dispatched, with no reassembly state.
	Single
	// Midsize replicates the matching information in the first K packets
	// (Params.Leads); the receiver acknowledges the first of them it gets,
	// and the sender stops only when it has sent its K and no ack has come.
	Midsize
	// Rendezvous sends the first packet only; the receiver acknowledges
	// it, and the rest follows the ack.
	Rendezvous
)

var protocolNames = [...]string{"auto", "eager", "single", "midsize", "rendezvous"}

func (p Protocol) String() string {
	if int(p) < len(protocolNames) {
		return protocolNames[p]
	}
	return fmt.Sprintf("protocol(%d)", uint8(p))
}

// ParseProtocol returns the Protocol of a name.
func ParseProtocol(name string) (Protocol, error) {
	for i, n := range protocolNames {
		if n == name {
			return Protocol(i), nil
		}
	}
	return 0, fmt.Errorf("msglayer: protocol %q; allowed: auto | eager | single | midsize | rendezvous", name)
}

// Kind is what a packet is to the message layer.
type Kind uint8

const (
	// Data is a packet of message data without the matching information.
	Data Kind = iota
	// Lead carries the matching information (tag, message length,
	// protocol) besides its data: packet 0 of a message, and under Midsize
	// each of the first K.
	Lead
	// Ack acknowledges the lead of a Rendezvous or Midsize message (Msg
	// names it); it carries no data.
	Ack
)

var kindNames = [...]string{"data", "lead", "ack"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Header is the message layer's software header. It travels in
// packet.Packet.Mask above bit 7: bits 0..7 are the torus hardware's hint
// bits (routing reads them), which the message layer leaves 0. The message
// id and packet index have fields of their own (Packet.Msg, Packet.Seq),
// as the BG/L torus packet has room for them beside the hardware header.
//
//	bits  8..9   Kind
//	bits 10..12  Protocol
//	bits 13..37  message length in bytes (Lead)
//	bits 38..63  MPI tag (Lead)
type Header struct {
	Kind  Kind
	Proto Protocol
	Bytes uint32 // the whole message's length
	Tag   uint32
}

const (
	kindShift  = 8
	protoShift = 10
	bytesShift = 13
	bytesBits  = 25
	tagShift   = bytesShift + bytesBits
	tagBits    = 64 - tagShift

	// MaxTag is the largest MPI tag a header carries (MPI promises 32767).
	MaxTag = 1<<tagBits - 1
	// MaxMessageBytes is the longest message: Seq is 16 bits, so at most
	// 65,536 packets of 256 bytes; the length field holds it. With smaller
	// packets the limit is 65,536 packets (Shape.MaxBytes).
	MaxMessageBytes = 1 << 24
)

// Encode packs h into the bits of a packet's Mask above the hint bits.
func (h Header) Encode() uint64 {
	return uint64(h.Kind&3)<<kindShift | uint64(h.Proto&7)<<protoShift |
		uint64(h.Bytes&(1<<bytesBits-1))<<bytesShift | uint64(h.Tag&MaxTag)<<tagShift
}

// Decode unpacks a Header from a packet's Mask, ignoring the hint bits.
func Decode(mask uint64) Header {
	return Header{
		Kind:  Kind(mask >> kindShift & 3),
		Proto: Protocol(mask >> protoShift & 7),
		Bytes: uint32(mask >> bytesShift & (1<<bytesBits - 1)),
		Tag:   uint32(mask >> tagShift),
	}
}

// Shape is how messages are cut into torus packets (the BG/L MPI paper §4,
// the packet layer: a torus packet is 1..8 chunks of 32 bytes, at most
// 256 bytes).
type Shape struct {
	PacketBytes uint32 // the largest packet's payload (256)
	ChunkBytes  uint32 // the unit of a packet's length on the wire (32)
	// ChunkCycles is the link cycles of a chunk: the router's FlitCycles
	// with 32-byte flits (packet.flit_bytes).
	ChunkCycles uint32
}

// Packets is the number of packets of a message of b bytes: ceil(b /
// PacketBytes), and one for an empty message (its header).
func (s Shape) Packets(b uint32) uint32 {
	if b == 0 {
		return 1
	}
	return (b + s.PacketBytes - 1) / s.PacketBytes
}

// PayloadBytes is the message data packet seq of a b-byte message carries:
// PacketBytes but for the last packet, which carries what is left.
func (s Shape) PayloadBytes(b, seq uint32) uint32 {
	n := s.Packets(b)
	if seq+1 < n {
		return s.PacketBytes
	}
	return b - (n-1)*s.PacketBytes
}

// Chunks is the chunks a packet of payload p takes on the wire: p rounded
// up to whole chunks, at least one (an ack, an empty message).
func (s Shape) Chunks(p uint32) uint32 {
	return max(1, (p+s.ChunkBytes-1)/s.ChunkBytes)
}

// Cycles is the link cycles of a packet of payload p.
func (s Shape) Cycles(p uint32) uint32 { return s.Chunks(p) * s.ChunkCycles }

// MaxBytes is the longest message of this shape: 65,536 packets (Seq is
// 16 bits), at most MaxMessageBytes.
func (s Shape) MaxBytes() uint32 { return uint32(min(uint64(s.PacketBytes)<<16, MaxMessageBytes)) }

func (s Shape) check() error {
	switch {
	case s.ChunkBytes == 0 || s.PacketBytes == 0 || s.PacketBytes%s.ChunkBytes != 0:
		return fmt.Errorf("msglayer.Shape: %d-byte packets of %d-byte chunks; allowed: a whole number (≥ 1) of chunks", s.PacketBytes, s.ChunkBytes)
	case s.ChunkCycles == 0:
		return fmt.Errorf("msglayer.Shape.ChunkCycles: 0; allowed: at least 1")
	}
	return nil
}
