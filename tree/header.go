package tree

import (
	"fmt"

	"github.com/hwcoll/hwcoll/alu"
)

// Header is a tree packet's 32-bit hardware header (the BG/L MPI paper §2;
// README, "The BlueGene/L collective tree"): class (4 bits), point-to-point
// flag (1), ALU opcode (3), operand size in 16-bit words less one (7), tag
// (17), from the top bit down. It travels in packet.Packet.Msg; a
// point-to-point packet's destination node travels in packet.Packet.Dst.
type Header uint32

// Opcode is the header's ALU field: None forwards a packet without
// combining (broadcast, point-to-point); the others name an alu.WideOp.
type Opcode uint8

// None is the opcode of a packet that is not combined.
const None Opcode = 0

// OpcodeOf is the opcode of an ALU operation.
func OpcodeOf(op alu.WideOp) Opcode { return Opcode(op) + 1 }

// Wide returns the ALU operation of a combining opcode.
func (o Opcode) Wide() (alu.WideOp, bool) { return alu.WideOp(o - 1), o != None && o <= 5 }

func (o Opcode) String() string {
	if w, ok := o.Wide(); ok {
		return w.String()
	}
	if o == None {
		return "none"
	}
	return fmt.Sprintf("opcode(%d)", uint8(o))
}

// Classes is the number of class routes of a router.
const Classes = 16

// MakeHeader packs the header fields; size16 is the operand size in
// 16-bit words (1..128), tag is kept modulo 2^17.
func MakeHeader(class int, p2p bool, op Opcode, size16 int, tag uint32) (Header, error) {
	switch {
	case class < 0 || class >= Classes:
		return 0, fmt.Errorf("tree: class %d; allowed: 0..%d", class, Classes-1)
	case op > 5:
		return 0, fmt.Errorf("tree: opcode %d; allowed: 0 (none) .. 5", op)
	case size16 < 1 || size16 > 128:
		return 0, fmt.Errorf("tree: operand size %d 16-bit words; allowed: 1..128", size16)
	}
	h := uint32(class)<<28 | uint32(op)<<24 | uint32(size16-1)<<17 | tag&(1<<17-1)
	if p2p {
		h |= 1 << 27
	}
	return Header(h), nil
}

// Class is the packet's class (its class route).
func (h Header) Class() int { return int(h >> 28) }

// P2P reports a point-to-point packet (routed by destination, not class).
func (h Header) P2P() bool { return h>>27&1 != 0 }

// Opcode is the ALU operation combining the packet (None: forwarded).
func (h Header) Opcode() Opcode { return Opcode(h >> 24 & 7) }

// Size16 is the operand size in 16-bit words.
func (h Header) Size16() int { return int(h>>17&127) + 1 }

// Bits is the operand width in bits.
func (h Header) Bits() int { return 16 * h.Size16() }

// Tag is the software's tag.
func (h Header) Tag() uint32 { return uint32(h) & (1<<17 - 1) }

func (h Header) String() string {
	return fmt.Sprintf("class %d p2p %v op %v size %d tag %d", h.Class(), h.P2P(), h.Opcode(), h.Size16(), h.Tag())
}
