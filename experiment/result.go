// Package experiment runs one configured experiment (docs/architecture.md §8): it builds
// the netlist from a config, drives it through warm-up, a measurement window
// and a drain, and reports the contract's JSON fields.
package experiment

import (
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/stats"
)

// Result is one run. The first block is the contract (docs/architecture.md §8); the rest
// says what was run and how the kernel did.
type Result struct {
	Name               string  `json:"name"`
	Seed               int64   `json:"seed"`
	Cycles             uint64  `json:"cycles"`
	OfferedLoad        float64 `json:"offered_load"`
	AcceptedLoad       float64 `json:"accepted_load"`
	DeliveredLoad      float64 `json:"delivered_load"`
	LatencyAvgCycles   float64 `json:"latency_avg_cycles"`
	LatencyP50Cycles   float64 `json:"latency_p50_cycles"`
	LatencyP99Cycles   float64 `json:"latency_p99_cycles"`
	LatencyMaxCycles   float64 `json:"latency_max_cycles"`
	LatencyAvgNS       float64 `json:"latency_avg_ns"`
	PacketsInjected    uint64  `json:"packets_injected"`
	PacketsDelivered   uint64  `json:"packets_delivered"`
	CompletionCycles   uint64  `json:"completion_cycles"`
	CompletionNS       float64 `json:"completion_ns"`
	Stable             bool    `json:"stable"`
	WallSeconds        float64 `json:"wall_seconds"`
	SimCyclesPerSecond float64 `json:"sim_cycles_per_second"`

	Topology      string  `json:"topology"`
	Organization  string  `json:"organization"`
	CreditMode    string  `json:"credit_mode"`
	Ports         int     `json:"ports"`
	Inputs        int     `json:"inputs"`
	Nodes         int     `json:"nodes,omitempty"`  // end nodes of a network (fattree)
	Levels        int     `json:"levels,omitempty"` // switch levels of a fat-tree
	XPBuffer      int     `json:"xp_buffer_packets"`
	CombineUnits  int     `json:"combine_units,omitempty"` // per switch (collective runs)
	Pattern       string  `json:"pattern"`
	Process       string  `json:"process"`
	Fanout        float64 `json:"mean_fanout,omitempty"` // measured mean fanout of multicast packets
	PacketCycles  uint64  `json:"packet_cycles"`
	GeneratedLoad float64 `json:"generated_load"` // measured birth rate in the window, same unit as offered_load
	Drained       bool    `json:"drained"`        // every measured packet arrived before run.max_cycles
	MaxQueue      int     `json:"max_source_queue"`
	MeasuredSent  uint64  `json:"measured_packets"`
	MeasuredRecv  uint64  `json:"measured_copies_delivered"`
	KernelEvals   uint64  `json:"kernel_evals"`
	SkippedCycles uint64  `json:"skipped_cycles"`
	Workers       int     `json:"workers,omitempty"` // goroutines run.workers: 0 split the network over, cycles parallel while measured faster (omitted: one, or run.workers given)
	FlitHopsPerS  float64 `json:"packet_hops_per_second"`
	Note          string  `json:"note,omitempty"` // what the run does not model (fattree: no NIC)

	// Links with bit errors (link.ber > 0): copies resent, packets sent
	// with bit errors, copies the CRC check rejected, acknowledgements
	// lost, and packets lost (sent and neither taken nor still coming: 0).
	LinkRetransmissions uint64 `json:"link_retransmissions"`
	LinkErrorsInjected  uint64 `json:"link_errors_injected"`
	LinkCRCRejected     uint64 `json:"link_crc_rejected,omitempty"`
	LinkAcksLost        uint64 `json:"link_acks_lost,omitempty"`
	LinkTimeouts        uint64 `json:"link_timeouts,omitempty"`
	PacketsLost         uint64 `json:"packets_lost"`
	Error               string `json:"error,omitempty"`

	// Links that go down (the config's faults): how many, the packets
	// discarded for want of a route, and the first fault.Keep of them.
	LinkFaults         int           `json:"link_faults,omitempty"`
	PacketsUnreachable uint64        `json:"packets_unreachable,omitempty"`  // every packet of the run
	MeasuredUnreach    uint64        `json:"measured_unreachable,omitempty"` // of those, born in the window
	Unreachable        []Unreachable `json:"unreachable,omitempty"`

	// Collectives through the NICs (multicast, namd, software reduce).
	Multicast              string  `json:"multicast,omitempty"`                 // traffic.multicast
	Algorithm              string  `json:"algorithm,omitempty"`                 // hardware | sequential | binomial
	TreeBuilder            string  `json:"tree_builder,omitempty"`              // network.tree_builder
	Groups                 int     `json:"groups,omitempty"`                    // traffic.groups per source
	Sources                int     `json:"sources,omitempty"`                   // nodes that start multicasts
	MulticastsMeasured     uint64  `json:"multicasts_measured,omitempty"`       // born in the window
	MulticastsCompleted    uint64  `json:"multicasts_completed,omitempty"`      // of those, reached every member
	MessagesPosted         uint64  `json:"messages_posted,omitempty"`           // to the NICs in the window (all nodes)
	MessagesSent           uint64  `json:"messages_sent,omitempty"`             // whose last packet left in the window
	MemberLatencyAvgCycles float64 `json:"member_latency_avg_cycles,omitempty"` // birth to each member's completion
	SourceLinkLoad         float64 `json:"source_link_load,omitempty"`          // link time the sources injected, per source
	NodeLinkLoad           float64 `json:"node_link_load,omitempty"`            // link time all nodes injected, per node
	ReductionChecked       bool    `json:"reduction_checked,omitempty"`         // the result equals the functional model

	// Programs on the BG/L message layer (nic.model msglayer): the
	// protocol configured and K, then the endpoints' counters summed over
	// the nodes (messages_posted and messages_sent above count its
	// messages too; packets_injected and packets_delivered its packets,
	// acks included). Fields that are 0 are left out.
	MsgLayerProtocol    string `json:"msglayer_protocol,omitempty"`     // msglayer.protocol
	MsgLayerLeads       int    `json:"msglayer_leads,omitempty"`        // K, as configured or derived (msglayer.leads 0)
	MessagesDelivered   uint64 `json:"messages_delivered,omitempty"`    // handed to the hosts (recvdone ended)
	Acks                uint64 `json:"acks,omitempty"`                  // acknowledgements of rendezvous and mid-size leads
	OutOfOrderPackets   uint64 `json:"out_of_order_packets,omitempty"`  // arrived after a packet their source injected later
	BufferedBeforeMatch uint64 `json:"buffered_before_match,omitempty"` // packets that arrived before their message's matching information
	HeldForOrder        uint64 `json:"held_for_order,omitempty"`        // messages whose matching information came while an earlier message of their source was not presented
	UnexpectedMessages  uint64 `json:"unexpected_messages,omitempty"`   // presented with no receive posted
	FastPathMessages    uint64 `json:"fast_path_messages,omitempty"`    // single-packet messages delivered with no reassembly record
	MaxOpenMessages     int    `json:"max_open_messages,omitempty"`     // reassembly records in use at once, the most at one node

	// Switch-based networks (min, irregular): what was built, e.g. "omega
	// MIN of 64 hosts, 6 stages of 2×2 switches".
	Program string `json:"program,omitempty"` // traffic.pattern program or dsm: the program run

	// DSM runs (traffic.pattern dsm).
	References     uint64            `json:"references,omitempty"`       // loads, stores and atomics the programs made
	Misses         uint64            `json:"misses,omitempty"`           // of them, misses and upgrades sent to a home
	MissRate       float64           `json:"miss_rate,omitempty"`        // misses / references
	MessagesByType map[string]uint64 `json:"messages_by_type,omitempty"` // coherence packets the network carried, by type
	Verified       *bool             `json:"verified,omitempty"`         // the program's own answer check passed
	DSMDirectory   string            `json:"dsm_directory,omitempty"`
	DSMConsistency string            `json:"dsm_consistency,omitempty"`

	Shape   string `json:"shape,omitempty"`
	MinKind string `json:"min_kind,omitempty"` // min: omega | butterfly | cube | bmin

	// Collectives on the torus by programs (collectives.go): the analytic
	// bound completion_cycles is compared with and what binds there, the
	// bisection's and (broadcasts) the root's six links' bounds, and the
	// colours of a broadcast in lines.
	BoundCycles          uint64  `json:"bound_cycles,omitempty"`
	BoundRatio           float64 `json:"bound_ratio,omitempty"` // completion_cycles / bound_cycles
	Bound                string  `json:"bound,omitempty"`
	BisectionBoundCycles uint64  `json:"bisection_bound_cycles,omitempty"`
	RootLinksBoundCycles uint64  `json:"root_links_bound_cycles,omitempty"`
	Colors               int     `json:"colors,omitempty"`
	// InjectionFIFOs is router.injection_fifos when above 1: the node
	// port's lanes (a program run on NICs).
	InjectionFIFOs int `json:"injection_fifos,omitempty"`

	// Direct networks (torus, mesh).
	Dims          []int    `json:"dims,omitempty"`
	Switching     string   `json:"switching,omitempty"`
	Routing       string   `json:"routing,omitempty"`
	Escape        string   `json:"escape,omitempty"`
	VCs           int      `json:"vcs,omitempty"`
	VCBufferFlits int      `json:"vc_buffer_flits,omitempty"`
	PacketFlits   int      `json:"packet_flits,omitempty"`
	PcapPackets   uint64   `json:"pcap_packets,omitempty"` // packets written to --pcap
	VLs           int      `json:"vls,omitempty"`          // ibmesh: virtual lanes
	VLPolicy      string   `json:"vl_policy,omitempty"`    // ibmesh: sl2vl | per-direction
	Deadlock      bool     `json:"deadlock"`               // the watchdog stopped the run
	WaitFor       []string `json:"wait_for,omitempty"`     // the wait-for cycle it found: blocked VCs by path
}

// setLatency writes the latency fields of r.
func (r *Result) setLatency(s stats.Summary) {
	r.LatencyAvgCycles, r.LatencyP50Cycles, r.LatencyP99Cycles, r.LatencyMaxCycles, r.LatencyAvgNS =
		s.AvgCycles, s.P50Cycles, s.P99Cycles, s.MaxCycles, s.AvgNS
}

func (r *Result) setLinkStats(s link.RetryStats) {
	r.LinkRetransmissions, r.LinkErrorsInjected, r.LinkCRCRejected = s.Retransmits, s.Corrupted, s.Rejected
	r.LinkAcksLost, r.LinkTimeouts, r.PacketsLost = s.AcksLost, s.Timeouts, s.Lost
}
