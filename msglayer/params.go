package msglayer

import "fmt"

// Threshold is one row of the protocol table: messages of at most MaxBytes
// go by Proto.
type Threshold struct {
	MaxBytes uint32
	Proto    Protocol
}

// Params configure every endpoint of a network (one Params is shared).
//
// The overheads are cycles of the message layer's processor per message
// and per packet, charged on one processor per node that does the sending
// and the receiving in turn (the BG/L MPI paper §5, communication
// coprocessor mode: one core runs the message layer). The defaults are
// the paper's Table 1 instruction counts at one instruction per cycle of
// the 700 MHz PowerPC 440 (an assumption of ours: the paper gives
// instructions, not cycles), so with the simulation clock at 700 MHz one
// cycle is one instruction.
type Params struct {
	Shape Shape
	// Protocols picks the protocol of a message posted with Auto: the
	// first row whose MaxBytes is at least its length; past the last row,
	// Rendezvous. A Single row applies to one-packet messages only (a
	// longer message it covers goes Eager).
	Protocols []Threshold
	// Leads is K, the packets of a Midsize message that carry the matching
	// information and may go before the ack (LeadsFor sizes it from the
	// network's round trip).
	Leads int
	// HighPriorityLead sends packet 0 of every message with SL = 1, the
	// BG/L torus's high-priority VC, so that it is less likely to be
	// overtaken by the message's other packets (the BG/L MPI paper §5).
	HighPriorityLead bool

	// PostCycles is postsend without the first packet: the paper's BT
	// breakdown, 1300 − 671 ≈ 630 instructions of message-layer
	// administration per message (§6).
	PostCycles uint64
	// PacketCycles is msgsend_adv, the work to put one packet into the
	// injection FIFO (Table 1: 556..671); an ack costs the same.
	PacketCycles uint64
	// SendDoneCycles is senddonecb, once per message sent (Table 1: 115).
	SendDoneCycles uint64
	// DispatchCycles is dispatch, the work to take one packet out of the
	// reception FIFO (Table 1: 516..661), acks included.
	DispatchCycles uint64
	// MatchCycles is recvnewcb, matching a new message against the posted
	// receives (Table 1: 328..445), once per message presented.
	MatchCycles uint64
	// RecvDoneCycles is recvdonecb, once per message delivered (Table 1:
	// 127..418 where no message is copied out of the unexpected queue).
	RecvDoneCycles uint64
}

// DefaultParams are the BG/L torus at 700 MHz: 256-byte packets of 32-byte
// chunks, a chunk holding the 1.4 Gb/s link for 128 cycles (2 bits a
// cycle); one-packet messages Single, eager up to 1 KiB, mid-size up to
// 16 KiB with K = 4 (LeadsFor of a round trip of about 4,000 cycles),
// rendezvous above; the Table 1 overheads (see Params). The thresholds are
// our choice: the paper names the protocols, not their sizes.
func DefaultParams() Params {
	return Params{
		Shape: Shape{PacketBytes: 256, ChunkBytes: 32, ChunkCycles: 128},
		Protocols: []Threshold{
			{MaxBytes: 256, Proto: Single},
			{MaxBytes: 1024, Proto: Eager},
			{MaxBytes: 16 << 10, Proto: Midsize},
		},
		Leads:          4,
		PostCycles:     630,
		PacketCycles:   650,
		SendDoneCycles: 115,
		DispatchCycles: 560,
		MatchCycles:    350,
		RecvDoneCycles: 250,
	}
}

// LeadsFor is K for a network round trip of rtt cycles (lead out, ack
// back, both dispatched): the packets the sender can put out in that time
// at one per max(PacketCycles, a full packet's link time), so that the ack
// arrives before the sender has used them up (the BG/L MPI paper §5:
// "determined by the average roundtrip latency of the torus network").
func (p *Params) LeadsFor(rtt uint64) int {
	per := max(p.PacketCycles, uint64(p.Shape.Cycles(p.Shape.PacketBytes)), 1)
	return int(max(1, (rtt+per-1)/per))
}

// Check reports the first parameter out of range.
func (p *Params) Check() error {
	if err := p.Shape.check(); err != nil {
		return err
	}
	if p.Leads < 1 || p.Leads > 1<<16 {
		return fmt.Errorf("msglayer.Params.Leads: %d; allowed: 1..65536", p.Leads)
	}
	for i, t := range p.Protocols {
		if t.Proto == Auto || t.Proto > Rendezvous {
			return fmt.Errorf("msglayer.Params.Protocols[%d]: protocol %v; allowed: eager | single | midsize | rendezvous", i, t.Proto)
		}
		if i > 0 && t.MaxBytes <= p.Protocols[i-1].MaxBytes {
			return fmt.Errorf("msglayer.Params.Protocols[%d]: MaxBytes %d after %d; allowed: increasing", i, t.MaxBytes, p.Protocols[i-1].MaxBytes)
		}
	}
	return nil
}

// Choose is the protocol of a b-byte message posted with Auto.
func (p *Params) Choose(b uint32) Protocol {
	proto := Rendezvous
	for _, t := range p.Protocols {
		if b <= t.MaxBytes {
			proto = t.Proto
			break
		}
	}
	if proto == Single && p.Shape.Packets(b) > 1 {
		proto = Eager
	}
	return proto
}
