package ibmesh

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The InfiniBand wire format of the model's packets (IBA Vol. 1 §5–§9): an
// unreliable-datagram SEND Only, local (no GRH):
//
//	LRH   8 bytes  VL:4 LVer:4 | SL:4 resv:2 LNH:2 | DLID:16 | resv:5 PktLen:11 | SLID:16
//	BTH  12 bytes  OpCode:8 | SE:1 M:1 PadCnt:2 TVer:4 | P_Key:16 | resv8a:8 | DestQP:24 | A:1 resv:7 | PSN:24
//	DETH  8 bytes  Q_Key:32 | resv:8 | SrcQP:24
//	payload, padded to 4 bytes (PadCnt)
//	ICRC  4 bytes  CRC-32 of the invariant fields (the LRH's VL and the
//	               BTH's resv8a taken as all ones), as Ethernet computes it
//	VCRC  2 bytes  CRC-16 (x^16 + x^12 + x^3 + x + 1, seed 0xFFFF,
//	               complemented) of everything from the LRH to the ICRC
//
// PktLen counts 4-byte words from the LRH to the ICRC. Every multi-byte
// field, the CRCs included, is written big-endian.
const (
	LRHBytes  = 8
	BTHBytes  = 12
	DETHBytes = 8
	ICRCBytes = 4
	VCRCBytes = 2
	// HeaderBytes is what a UD SEND Only adds before its payload.
	HeaderBytes = LRHBytes + BTHBytes + DETHBytes
	// OpUDSendOnly is the BTH opcode of an unreliable-datagram SEND Only.
	OpUDSendOnly = 0x64
	// LNHLocal: the LRH is followed by a BTH (no GRH).
	LNHLocal = 2
	// MulticastQP is the destination QP of a multicast packet.
	MulticastQP = 0xFFFFFF
	// DefaultPKey is the default partition (full membership).
	DefaultPKey = 0xFFFF
)

// Header is the fields of a UD SEND Only the model sets.
type Header struct {
	VL, SL     uint8
	DLID, SLID uint16
	PKey       uint16
	DestQP     uint32 // 24 bits
	PSN        uint32 // 24 bits
	QKey       uint32
	SrcQP      uint32 // 24 bits
	// Set by Decode: the packet length in words and the pad count.
	PktLen uint16
	PadCnt uint8
}

// Append appends the packet of h and payload to dst, CRCs included, and
// returns it. Fields wider than their bits are cut to them.
func Append(dst []byte, h Header, payload []byte) []byte {
	pad := (4 - len(payload)%4) % 4
	n := HeaderBytes + len(payload) + pad + ICRCBytes
	start := len(dst)
	dst = append(dst, make([]byte, n+VCRCBytes)...)
	b := dst[start:]
	b[0] = h.VL<<4 | 0 // LVer 0
	b[1] = h.SL<<4 | LNHLocal
	binary.BigEndian.PutUint16(b[2:], h.DLID)
	binary.BigEndian.PutUint16(b[4:], uint16(n/4)&0x7ff)
	binary.BigEndian.PutUint16(b[6:], h.SLID)
	t := b[LRHBytes:]
	t[0] = OpUDSendOnly
	t[1] = uint8(pad) << 4 // SE 0, M 0, TVer 0
	binary.BigEndian.PutUint16(t[2:], h.PKey)
	binary.BigEndian.PutUint32(t[4:], h.DestQP&0xFFFFFF) // resv8a 0
	binary.BigEndian.PutUint32(t[8:], h.PSN&0xFFFFFF)    // A 0
	d := t[BTHBytes:]
	binary.BigEndian.PutUint32(d[0:], h.QKey)
	binary.BigEndian.PutUint32(d[4:], h.SrcQP&0xFFFFFF)
	copy(d[DETHBytes:], payload)
	binary.BigEndian.PutUint32(b[n-ICRCBytes:], ICRC(b[:n-ICRCBytes]))
	binary.BigEndian.PutUint16(b[n:], VCRC(b[:n]))
	return dst
}

// ICRC is the invariant CRC of a local packet's bytes from the LRH to the
// end of the payload (without the ICRC): the variant fields (the LRH's VL,
// which a switch may remap, and the BTH's resv8a) count as all ones.
func ICRC(pkt []byte) uint32 {
	var head [LRHBytes + BTHBytes]byte
	copy(head[:], pkt)
	head[0] |= 0xF0
	head[LRHBytes+4] = 0xFF
	c := crc32.Update(0, crc32.IEEETable, head[:])
	return crc32.Update(c, crc32.IEEETable, pkt[len(head):])
}

// VCRC is the variant CRC of a packet's bytes from the LRH to the ICRC.
func VCRC(pkt []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range pkt {
		c = crc16Table[byte(c)^x] ^ c>>8
	}
	return ^c
}

// crc16Table is the reflected table of x^16 + x^12 + x^3 + x + 1
// (0x100B; reflected 0xD008): the IBA's VCRC, bits least significant
// first like the ICRC.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// ErrCRC is returned by Decode for a packet whose ICRC or VCRC is wrong.
var ErrCRC = errors.New("ibmesh: CRC mismatch")

// Decode parses a UD SEND Only written by Append and checks its CRCs; the
// payload is a subslice of pkt (without the padding).
func Decode(pkt []byte) (Header, []byte, error) {
	var h Header
	if len(pkt) < HeaderBytes+ICRCBytes+VCRCBytes {
		return h, nil, fmt.Errorf("ibmesh: %d bytes is too short for a UD packet", len(pkt))
	}
	if pkt[1]&3 != LNHLocal || pkt[LRHBytes] != OpUDSendOnly {
		return h, nil, fmt.Errorf("ibmesh: not a local UD SEND Only (LNH %d, opcode %#x)", pkt[1]&3, pkt[LRHBytes])
	}
	h.VL, h.SL = pkt[0]>>4, pkt[1]>>4
	h.DLID = binary.BigEndian.Uint16(pkt[2:])
	h.PktLen = binary.BigEndian.Uint16(pkt[4:]) & 0x7ff
	h.SLID = binary.BigEndian.Uint16(pkt[6:])
	n := int(h.PktLen) * 4
	if n+VCRCBytes != len(pkt) || n < HeaderBytes+ICRCBytes {
		return h, nil, fmt.Errorf("ibmesh: PktLen %d words for %d bytes", h.PktLen, len(pkt))
	}
	t := pkt[LRHBytes:]
	h.PadCnt = t[1] >> 4 & 3
	h.PKey = binary.BigEndian.Uint16(t[2:])
	h.DestQP = binary.BigEndian.Uint32(t[4:]) & 0xFFFFFF
	h.PSN = binary.BigEndian.Uint32(t[8:]) & 0xFFFFFF
	d := t[BTHBytes:]
	h.QKey = binary.BigEndian.Uint32(d[0:])
	h.SrcQP = binary.BigEndian.Uint32(d[4:]) & 0xFFFFFF
	if ICRC(pkt[:n-ICRCBytes]) != binary.BigEndian.Uint32(pkt[n-ICRCBytes:]) || VCRC(pkt[:n]) != binary.BigEndian.Uint16(pkt[n:]) {
		return h, nil, ErrCRC
	}
	payload := pkt[HeaderBytes : n-ICRCBytes]
	return h, payload[:len(payload)-int(h.PadCnt)], nil
}
