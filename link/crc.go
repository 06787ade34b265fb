package link

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/packet"
)

// A packet on a link with retry is a wire image: a 32-byte header, the
// body (p.Bytes bytes: the payload words, then filler bytes fixed by the
// packet's id) and a 4-byte CRC-32C trailer. Bit errors are flips at
// offsets into that image; the receiver recomputes the CRC over what it
// got and compares it with the trailer it got.
const (
	headerBytes  = 32
	trailerBytes = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// wireBits is the length of p's wire image in bits.
func wireBits(p *packet.Packet) uint64 {
	return uint64(headerBytes+p.Bytes+trailerBytes) * 8
}

// errorGap is the number of error-free bits before the next flipped one on
// a wire with bit error rate ber: geometric, from the link's stream.
func errorGap(rng *rand.Rand, ber float64) uint64 {
	if ber >= 1 {
		return 0
	}
	g := math.Log(1-rng.Float64()) / math.Log1p(-ber)
	if g >= math.MaxInt64 {
		return math.MaxInt64
	}
	return uint64(g)
}

// crcPasses reports whether the receiver's CRC check passes on p's wire
// image with the bits at offsets flips (ascending) inverted: a flip in the
// trailer changes the CRC received, one elsewhere the bytes it covers.
// chunk is scratch for the image, the caller's: a local array would move
// to the heap at every call, as the CRC's table-driven update keeps its
// argument.
func crcPasses(p *packet.Packet, flips []uint64, chunk *[64]byte) bool {
	var sent, got uint32
	n := uint64(headerBytes + p.Bytes)
	f := 0
	for off := uint64(0); off < n; off += uint64(len(chunk)) {
		k := min(uint64(len(chunk)), n-off)
		b := chunk[:k]
		image(p, off, b)
		sent = crc32.Update(sent, castagnoli, b)
		for ; f < len(flips) && flips[f] < (off+k)*8; f++ {
			b[flips[f]/8-off] ^= 1 << (flips[f] % 8)
		}
		got = crc32.Update(got, castagnoli, b)
	}
	var tr [trailerBytes]byte
	binary.LittleEndian.PutUint32(tr[:], sent)
	for ; f < len(flips); f++ {
		tr[flips[f]/8-n] ^= 1 << (flips[f] % 8)
	}
	return binary.LittleEndian.Uint32(tr[:]) == got
}

// image writes the wire image's bytes [off, off+len(b)) of p into b.
func image(p *packet.Packet, off uint64, b []byte) {
	var h [headerBytes]byte
	if off < headerBytes {
		binary.LittleEndian.PutUint64(h[0:], p.ID)
		binary.LittleEndian.PutUint32(h[8:], p.Src)
		binary.LittleEndian.PutUint32(h[12:], p.Dst)
		binary.LittleEndian.PutUint32(h[16:], p.Msg)
		binary.LittleEndian.PutUint32(h[20:], p.Bytes)
		binary.LittleEndian.PutUint16(h[24:], p.Seq)
		h[26], h[27], h[28], h[29] = byte(p.Op), p.VL, p.SL, p.Pass
		binary.LittleEndian.PutUint16(h[30:], p.Link&SeqMask)
	}
	for i := range b {
		k := off + uint64(i)
		if k < headerBytes {
			b[i] = h[k]
			continue
		}
		j := k - headerBytes
		if w := j / 8; w < uint64(len(p.Payload)) {
			b[i] = byte(p.Payload[w] >> (8 * (j % 8)))
		} else {
			b[i] = byte(mix(p.ID^j/8) >> (8 * (j % 8)))
		}
	}
}

// mix is a 64-bit finaliser (splitmix64): the filler of a packet's body.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Wire is the bit errors of one wire at a bit error rate: flips with
// geometric gaps drawn from the sending end's stream, O(1) per packet
// that none hits. A link with retry has one per direction; the routers'
// links keep theirs beside their resend buffers.
type Wire struct {
	BER       float64
	Corrupted uint64    // packets drawn with at least one flip
	gap       uint64    // error-free bits before the next flip
	flips     []uint64  // scratch: one packet's flipped bits
	chunk     *[64]byte // scratch: the CRC check's image (made at the first flip)
}

// NewWire is a wire with bit error rate ber.
func NewWire(ber float64) Wire { return Wire{BER: ber, gap: ^uint64(0)} }

// Packet draws the flips of one copy of p's wire image and reports whether
// the receiver's CRC check fails on it (p.Link's sequence bits are part of
// the image).
func (w *Wire) Packet(rng *rand.Rand, p *packet.Packet) (bad bool) {
	if w.BER == 0 {
		return false
	}
	if w.gap == ^uint64(0) {
		w.gap = errorGap(rng, w.BER)
	}
	bits := wireBits(p)
	if w.gap >= bits {
		w.gap -= bits
		return false
	}
	w.flips = w.flips[:0]
	at := w.gap // offset of the next flip
	for at < bits {
		w.flips = append(w.flips, at)
		at += 1 + errorGap(rng, w.BER)
	}
	w.gap = at - bits
	w.Corrupted++
	if w.chunk == nil {
		w.chunk = new([64]byte)
	}
	return !crcPasses(p, w.flips, w.chunk)
}

// Message draws the flips of a short message of n bits (an
// acknowledgement) and reports whether any hit it: it is taken as caught
// by the message's own CRC (not modelled bit by bit, as packets' are) and
// the message as lost.
func (w *Wire) Message(rng *rand.Rand, n uint64) (bad bool) {
	if w.BER == 0 {
		return false
	}
	if w.gap == ^uint64(0) {
		w.gap = errorGap(rng, w.BER)
	}
	if w.gap >= n {
		w.gap -= n
		return false
	}
	for w.gap < n {
		w.gap += 1 + errorGap(rng, w.BER)
	}
	w.gap -= n
	return true
}
