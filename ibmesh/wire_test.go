package ibmesh

import (
	"bytes"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func drawHeader(t *rapid.T) (Header, []byte) {
	h := Header{
		VL: uint8(rapid.IntRange(0, 15).Draw(t, "vl")), SL: uint8(rapid.IntRange(0, 15).Draw(t, "sl")),
		DLID: rapid.Uint16().Draw(t, "dlid"), SLID: rapid.Uint16().Draw(t, "slid"), PKey: rapid.Uint16().Draw(t, "pkey"),
		DestQP: rapid.Uint32Range(0, 1<<24-1).Draw(t, "dqp"), PSN: rapid.Uint32Range(0, 1<<24-1).Draw(t, "psn"),
		QKey: rapid.Uint32().Draw(t, "qkey"), SrcQP: rapid.Uint32Range(0, 1<<24-1).Draw(t, "sqp"),
	}
	return h, rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "payload")
}

// Append then Decode gives back every field and the payload; PktLen and
// PadCnt are what the lengths say; any one flipped bit is caught (the VL,
// outside the ICRC, by the VCRC).
func TestWireRoundTripAndCRCs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, payload := drawHeader(t)
		pkt := Append(nil, h, payload)
		pad := (4 - len(payload)%4) % 4
		require.Len(t, pkt, HeaderBytes+len(payload)+pad+ICRCBytes+VCRCBytes)
		got, gotPayload, err := Decode(pkt)
		require.NoError(t, err)
		require.Equal(t, uint16((len(pkt)-VCRCBytes)/4), got.PktLen)
		require.Equal(t, uint8(pad), got.PadCnt)
		got.PktLen, got.PadCnt = 0, 0
		require.Equal(t, h, got)
		require.Equal(t, payload, append([]byte{}, gotPayload...))
		bit := rapid.IntRange(0, 8*len(pkt)-1).Draw(t, "bit")
		bad := bytes.Clone(pkt)
		bad[bit/8] ^= 1 << (bit % 8)
		_, _, err = Decode(bad)
		require.Error(t, err, "bit %d flipped", bit)
	})
}

// The ICRC leaves out exactly the variant fields: a switch remapping the
// VL or touching resv8a keeps it, any other header change does not.
func TestICRCVariantFields(t *testing.T) {
	pkt := Append(nil, Header{VL: 1, SL: 2, DLID: 3, SLID: 4, PKey: DefaultPKey, DestQP: 5, PSN: 6, QKey: 7, SrcQP: 8}, []byte("payload!"))
	body := pkt[:len(pkt)-ICRCBytes-VCRCBytes]
	c := ICRC(body)
	v := bytes.Clone(body)
	v[0] = 0x70 | v[0]&0x0F // VL 7
	v[LRHBytes+4] = 0x5A    // resv8a
	require.Equal(t, c, ICRC(v))
	for _, i := range []int{1, 2, 3, 6, 7, LRHBytes, LRHBytes + 3, LRHBytes + 11, HeaderBytes - 1, HeaderBytes} {
		w := bytes.Clone(body)
		w[i] ^= 0x10
		require.NotEqual(t, c, ICRC(w), "byte %d", i)
	}
}

// refCRC16 is the VCRC computed the textbook way, most significant bit
// first with the unreflected polynomial 0x100B on bit-reversed input and
// output: an independent check of the table.
func refCRC16(b []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range b {
		c ^= uint16(bits.Reverse8(x)) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x100B
			} else {
				c <<= 1
			}
		}
	}
	return ^bits.Reverse16(c)
}

func TestVCRCMatchesBitwise(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 100).Draw(t, "b")
		require.Equal(t, refCRC16(b), VCRC(b))
	})
}

// packets is a small capture: unicast and multicast, VLs and SLs.
func packets() []Header {
	var hs []Header
	for i := range 12 {
		h := Header{VL: uint8(i % 4), SL: uint8(i % 3), DLID: uint16(10 + i), SLID: uint16(1 + i%5), PKey: DefaultPKey,
			DestQP: 2, PSN: uint32(1000 + i), QKey: 0x11111111, SrcQP: 2}
		if i%3 == 0 {
			h.DLID, h.DestQP = MulticastBase+uint16(i), MulticastQP
		}
		hs = append(hs, h)
	}
	return hs
}

func writeCapture(t *testing.T, hs []Header) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ib.pcap")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := pcapgo.NewWriterNanos(f)
	require.NoError(t, w.WriteFileHeader(65536, LinkType))
	for i, h := range hs {
		data := Append(nil, h, bytes.Repeat([]byte{byte(i)}, 32+i))
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(4*i)), CaptureLength: len(data), Length: len(data)}
		require.NoError(t, w.WritePacket(ci, data))
	}
	require.NoError(t, f.Close())
	return path
}

// A pcap written with pcapgo reads back through the gopacket layer.
func TestGopacketRoundTrip(t *testing.T) {
	hs := packets()
	f, err := os.Open(writeCapture(t, hs))
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	require.Equal(t, LinkType, r.LinkType())
	for i, want := range hs {
		data, ci, err := r.ReadPacketData()
		require.NoError(t, err)
		require.Equal(t, int64(4*i), ci.Timestamp.UnixNano())
		p := gopacket.NewPacket(data, LayerTypeIB, gopacket.Default)
		require.Nil(t, p.ErrorLayer())
		l, ok := p.Layer(LayerTypeIB).(*Layer)
		require.True(t, ok)
		l.PktLen, l.PadCnt = 0, 0
		require.Equal(t, want, l.Header)
		require.Equal(t, bytes.Repeat([]byte{byte(i)}, 32+i), p.ApplicationLayer().Payload())
	}
}

// TsharkDLT is the tshark option that reads DLT_USER0 as InfiniBand.
const TsharkDLT = `uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""`

// tshark, a real external reader, decodes every packet of the capture
// with the fields the model wrote (it shows no CRCs for this link type:
// TestWireRoundTripAndCRCs and TestVCRCMatchesBitwise check those).
func TestTsharkDecodes(t *testing.T) {
	tshark := requireTshark(t)
	hs := packets()
	path := writeCapture(t, hs)
	out, err := exec.Command(tshark, "-r", path, "-o", TsharkDLT, "-T", "fields", "-E", "separator=,",
		"-e", "infiniband.lrh.vl", "-e", "infiniband.lrh.sl", "-e", "infiniband.lrh.dlid", "-e", "infiniband.lrh.slid",
		"-e", "infiniband.lrh.pktlen", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "infiniband.bth.destqp",
		"-e", "infiniband.deth.q_key").Output()
	require.NoError(t, err, "tshark: %s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(hs), "%s", out)
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 0, 64)
		require.NoError(t, err, "%q", s)
		return v
	}
	for i, h := range hs {
		data := Append(nil, h, bytes.Repeat([]byte{byte(i)}, 32+i))
		f := strings.Split(lines[i], ",")
		require.Len(t, f, 9, lines[i])
		n := len(data) - VCRCBytes
		want := []uint64{uint64(h.VL), uint64(h.SL), uint64(h.DLID), uint64(h.SLID), uint64(n / 4), OpUDSendOnly,
			uint64(h.PSN), uint64(h.DestQP), uint64(h.QKey)}
		for k, w := range want {
			require.Equal(t, w, num(f[k]), "packet %d field %d (%s)", i, k, lines[i])
		}
	}
}

func requireTshark(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tshark")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("tshark not found (CI=true): install it (apt-get install -y tshark)")
	}
	t.Skip("tshark not found: apt-get install -y tshark to run this test")
	return ""
}
