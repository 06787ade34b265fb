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
func crcPasses(p *packet.Packet, flips []uint64) bool {
	var chunk [64]byte
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
		binary.LittleEndian.PutUint16(h[30:], p.Link&seqMask)
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
