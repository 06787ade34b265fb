package msglayer_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/msglayer"
)

// Messages are cut into packets of at most 256 bytes, each a whole number
// of 32-byte chunks on the wire (the BG/L MPI paper §4), the last carrying
// what is left.
func TestPacketization(t *testing.T) {
	sh := msglayer.Shape{PacketBytes: 256, ChunkBytes: 32, ChunkCycles: 128}
	for _, c := range []struct {
		bytes   uint32
		packets uint32
		last    uint32 // payload of the last packet
		chunks  uint32 // of the last packet
	}{
		{0, 1, 0, 1}, // an empty message is its header
		{1, 1, 1, 1},
		{31, 1, 31, 1},
		{32, 1, 32, 1},
		{33, 1, 33, 2},
		{255, 1, 255, 8},
		{256, 1, 256, 8},
		{257, 2, 1, 1},
		{300, 2, 44, 2},
		{512, 2, 256, 8},
		{1000, 4, 232, 8},
		{1025, 5, 1, 1},
		{4096, 16, 256, 8},
		{msglayer.MaxMessageBytes, 65536, 256, 8},
	} {
		n := sh.Packets(c.bytes)
		require.Equal(t, c.packets, n, "%d bytes", c.bytes)
		var sum uint32
		for s := uint32(0); s < n; s++ {
			p := sh.PayloadBytes(c.bytes, s)
			sum += p
			if s+1 < n {
				require.Equal(t, uint32(256), p)
				require.Equal(t, uint32(8), sh.Chunks(p))
			}
		}
		require.Equal(t, c.bytes, sum, "%d bytes: the packets carry the message", c.bytes)
		require.Equal(t, c.last, sh.PayloadBytes(c.bytes, n-1), "%d bytes: last packet", c.bytes)
		require.Equal(t, c.chunks, sh.Chunks(c.last), "%d bytes: chunks of the last packet", c.bytes)
		require.Equal(t, c.chunks*128, sh.Cycles(c.last))
	}
	require.Equal(t, uint32(msglayer.MaxMessageBytes), sh.MaxBytes())
	require.Equal(t, uint32(65536*32), msglayer.Shape{PacketBytes: 32, ChunkBytes: 32, ChunkCycles: 1}.MaxBytes())
}

// The protocol table: Single only for one packet, then the rows, then
// rendezvous.
func TestChoose(t *testing.T) {
	p := msglayer.DefaultParams()
	for _, c := range []struct {
		bytes uint32
		want  msglayer.Protocol
	}{
		{0, msglayer.Single}, {256, msglayer.Single}, {257, msglayer.Eager}, {1024, msglayer.Eager},
		{1025, msglayer.Midsize}, {16 << 10, msglayer.Midsize}, {16<<10 + 1, msglayer.Rendezvous},
	} {
		require.Equal(t, c.want, p.Choose(c.bytes), "%d bytes", c.bytes)
	}
	p.Protocols = []msglayer.Threshold{{MaxBytes: 600, Proto: msglayer.Single}}
	require.Equal(t, msglayer.Eager, p.Choose(300), "a Single row past one packet goes eager")
	require.NoError(t, p.Check())
	p.Protocols = []msglayer.Threshold{{MaxBytes: 600, Proto: msglayer.Eager}, {MaxBytes: 600, Proto: msglayer.Midsize}}
	require.ErrorContains(t, p.Check(), "Protocols[1]")
	p = msglayer.DefaultParams()
	p.Leads = 0
	require.ErrorContains(t, p.Check(), "Leads")
	// K from the round trip: at one packet per full packet's link time
	// (1024 cycles at 2 bits a cycle), 4000 cycles are 4 packets.
	require.Equal(t, 4, p.LeadsFor(4000))
	require.Equal(t, 1, p.LeadsFor(0))
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []msglayer.Header{
		{},
		{Kind: msglayer.Lead, Proto: msglayer.Eager, Bytes: 1000, Tag: 7},
		{Kind: msglayer.Lead, Proto: msglayer.Rendezvous, Bytes: msglayer.MaxMessageBytes, Tag: msglayer.MaxTag},
		{Kind: msglayer.Data, Proto: msglayer.Midsize},
		{Kind: msglayer.Ack},
		{Kind: msglayer.Lead, Proto: msglayer.Single, Bytes: 256, Tag: 32767},
	} {
		m := h.Encode()
		require.Zero(t, m&0xff, "%+v: the hint bits are the hardware's", h)
		require.Equal(t, h, msglayer.Decode(m))
	}
	rapid.Check(t, func(t *rapid.T) {
		h := msglayer.Header{
			Kind:  rapid.SampledFrom([]msglayer.Kind{msglayer.Data, msglayer.Lead, msglayer.Ack}).Draw(t, "kind"),
			Proto: msglayer.Protocol(rapid.IntRange(0, int(msglayer.Rendezvous)).Draw(t, "proto")),
			Bytes: rapid.Uint32Range(0, msglayer.MaxMessageBytes).Draw(t, "bytes"),
			Tag:   rapid.Uint32Range(0, msglayer.MaxTag).Draw(t, "tag"),
		}
		hints := rapid.Uint64Range(0, 0xff).Draw(t, "hints") // bits 0..7: the torus header's hint bits
		m := h.Encode() | hints
		require.Equal(t, h, msglayer.Decode(m), "routing's hint bits do not disturb the header")
		require.Equal(t, hints, m&0xff)
	})
}

func TestParseProtocol(t *testing.T) {
	for p := msglayer.Auto; p <= msglayer.Rendezvous; p++ {
		q, err := msglayer.ParseProtocol(p.String())
		require.NoError(t, err)
		require.Equal(t, p, q)
	}
	_, err := msglayer.ParseProtocol("portals")
	require.ErrorContains(t, err, "allowed: auto | eager")
}
