package ibmesh

import (
	"fmt"
	"io"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
)

// MaxPayload is the largest payload a captured packet carries: the IBA's
// largest MTU. A model packet longer than that is captured with its
// payload cut to it (the pcap record says so: its length is the original).
const MaxPayload = 4096

// Capture writes packets as InfiniBand UD SEND Only packets (Append) into
// a pcap file of link type DLT_USER0 with nanosecond timestamps: cycle ×
// the clock period.
type Capture struct {
	w        *pcapgo.Writer
	periodPS uint64
	buf      []byte
	zero     []byte
	n        uint64
}

// NewCapture writes the file header to w.
func NewCapture(w io.Writer, periodPS uint64) (*Capture, error) {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(HeaderBytes+MaxPayload+ICRCBytes+VCRCBytes, LinkType); err != nil {
		return nil, err
	}
	return &Capture{w: pw, periodPS: periodPS, zero: make([]byte, MaxPayload)}, nil
}

// Write records one packet whose head crossed the link in cycle; its
// payload is payloadBytes zero bytes (at most MaxPayload).
func (c *Capture) Write(cycle uint64, h Header, payloadBytes int) error {
	c.buf = Append(c.buf[:0], h, c.zero[:min(max(payloadBytes, 0), MaxPayload)])
	ns := cycle * c.periodPS / 1000
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(ns/1e9), int64(ns%1e9)), CaptureLength: len(c.buf), Length: len(c.buf)}
	if err := c.w.WritePacket(ci, c.buf); err != nil {
		return fmt.Errorf("pcap: %v", err)
	}
	c.n++
	return nil
}

// Packets is the number of packets written.
func (c *Capture) Packets() uint64 { return c.n }
