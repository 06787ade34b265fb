// Package config holds the hwcoll experiment configuration: the YAML file
// format and `--set key=value` overrides of README.md (the config reference and JSON fields), the
// defaults of the OQ-router paper's Table 1, validation with one-line errors that name
// the offending dotted key, and the conversion of physical units (Gbps, ns,
// MHz) into cycles of the switch clock (docs/architecture.md §4, see Timing).
//
// The key table in keys.go is the single source of truth: Keys() (from which
// the README's config reference is generated), Validate, Set and Get are all
// driven by it, and the YAML decoder walks the yaml tags of Config.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Config is one experiment. The yaml (and json) tags are the CONTRACT keys of
// docs/architecture.md §8; the dotted path of a field (e.g. "network.ports") is its
// `--set` name.
type Config struct {
	Name     string   `yaml:"name" json:"name"`
	Seed     int64    `yaml:"seed" json:"seed"`
	ClockMHz float64  `yaml:"clock_mhz" json:"clock_mhz"`
	Network  Network  `yaml:"network" json:"network"`
	Link     Link     `yaml:"link" json:"link"`
	Switch   Switch   `yaml:"switch" json:"switch"`
	Router   Router   `yaml:"router" json:"router"`
	Packet   Packet   `yaml:"packet" json:"packet"`
	NIC      NIC      `yaml:"nic" json:"nic"`
	MsgLayer MsgLayer `yaml:"msglayer" json:"msglayer"`
	Traffic  Traffic  `yaml:"traffic" json:"traffic"`
	Combine  Combine  `yaml:"combine" json:"combine"`
	DSM      DSM      `yaml:"dsm" json:"dsm"`
	Run      Run      `yaml:"run" json:"run"`
	// Faults are links that go down during the run: "PATH@CYCLE", PATH
	// the waveform path of one of the link's output ports (fault.Parse).
	Faults []string `yaml:"faults,flow" json:"faults"`
}

// Network selects and sizes the network.
type Network struct {
	Topology        string `yaml:"topology" json:"topology"`
	Ports           int    `yaml:"ports" json:"ports"`
	Inputs          int    `yaml:"inputs" json:"inputs"`
	Organization    string `yaml:"organization" json:"organization"`
	XPBufferPackets int    `yaml:"xp_buffer_packets" json:"xp_buffer_packets"`
	CreditMode      string `yaml:"credit_mode" json:"credit_mode"`
	FanoutSplitting string `yaml:"fanout_splitting" json:"fanout_splitting"`
	Iterations      int    `yaml:"iterations" json:"iterations"`
	CombineUnits    int    `yaml:"combine_units" json:"combine_units"`
	Nodes           int    `yaml:"nodes" json:"nodes"`
	Dims            []int  `yaml:"dims,flow" json:"dims"`
	VLs             int    `yaml:"vls" json:"vls"`
	VLPolicy        string `yaml:"vl_policy" json:"vl_policy"`
	TreeBuilder     string `yaml:"tree_builder" json:"tree_builder"`
	MinKind         string `yaml:"min_kind" json:"min_kind"`
	IrregularFile   string `yaml:"irregular_file" json:"irregular_file"`
	Switches        int    `yaml:"switches" json:"switches"`
	Degree          int    `yaml:"degree" json:"degree"`

	// inputsSet records that inputs was given explicitly (YAML or Set);
	// until then Inputs follows Ports.
	inputsSet bool
}

// Link is a point-to-point channel.
type Link struct {
	Gbps    float64 `yaml:"gbps" json:"gbps"`
	DelayNS float64 `yaml:"delay_ns" json:"delay_ns"`
	// BER > 0 gives the links bit errors and the link-level retry
	// protocol (CRC, resend buffer, ACK/NACK, time-out).
	BER          float64 `yaml:"ber" json:"ber"`
	ResendBuffer int     `yaml:"resend_buffer" json:"resend_buffer"`
	RetryTimeout int     `yaml:"retry_timeout" json:"retry_timeout"`
}

// Switch holds switch-wide timing.
type Switch struct {
	DelayNS float64 `yaml:"delay_ns" json:"delay_ns"`
}

// Router configures the direct networks' VC router (torus, mesh).
type Router struct {
	Switching     string `yaml:"switching" json:"switching"`
	VCs           int    `yaml:"vcs" json:"vcs"`
	VCBufferFlits int    `yaml:"vc_buffer_flits" json:"vc_buffer_flits"`
	Routing       string `yaml:"routing" json:"routing"`
	Escape        string `yaml:"escape" json:"escape"`
	// InjectionFIFOs is the node port's lanes (router.Params.Lanes):
	// injection FIFOs and reception FIFOs each moving a packet at link
	// rate, independently (the BG/L node's; program runs on NICs).
	InjectionFIFOs int `yaml:"injection_fifos" json:"injection_fifos"`
}

// Packet holds the packet format.
type Packet struct {
	Bytes     int `yaml:"bytes" json:"bytes"`
	FlitBytes int `yaml:"flit_bytes" json:"flit_bytes"`
}

// NIC holds the endpoint (host + NIC) overheads.
type NIC struct {
	SendOverheadNS float64 `yaml:"send_overhead_ns" json:"send_overhead_ns"`
	RecvOverheadNS float64 `yaml:"recv_overhead_ns" json:"recv_overhead_ns"`
	Model          string  `yaml:"model" json:"model"`
	// SendPacketNS and RecvPacketNS are the NIC's work per packet on each
	// side (the WORMulSim paper §4.1's t_nic_send, t_nic_recv).
	SendPacketNS float64 `yaml:"send_packet_ns" json:"send_packet_ns"`
	RecvPacketNS float64 `yaml:"recv_packet_ns" json:"recv_packet_ns"`
}

// MsgLayer configures the BG/L message layer at every node (nic.model
// msglayer; package msglayer): the protocol of the program's messages and
// the protocol table of msglayer.protocol auto.
type MsgLayer struct {
	Protocol         string `yaml:"protocol" json:"protocol"`
	EagerMaxBytes    int    `yaml:"eager_max_bytes" json:"eager_max_bytes"`
	MidsizeMaxBytes  int    `yaml:"midsize_max_bytes" json:"midsize_max_bytes"`
	Leads            int    `yaml:"leads" json:"leads"`
	HighPriorityLead bool   `yaml:"high_priority_lead" json:"high_priority_lead"`
}

// DSM is the distributed shared memory machine of traffic.pattern dsm
// (package dsm): its nodes' caches, directories, controllers and the
// programs' sizes.
type DSM struct {
	ProblemSize        int     `yaml:"problem_size" json:"problem_size"`
	Directory          string  `yaml:"directory" json:"directory"`
	Pointers           int     `yaml:"pointers" json:"pointers"`
	Consistency        string  `yaml:"consistency" json:"consistency"`
	VirtualNetworks    int     `yaml:"virtual_networks" json:"virtual_networks"`
	CPI                float64 `yaml:"cpi" json:"cpi"`
	CacheBytes         int     `yaml:"cache_bytes" json:"cache_bytes"`
	CacheWays          int     `yaml:"cache_ways" json:"cache_ways"`
	LineBytes          int     `yaml:"line_bytes" json:"line_bytes"`
	TransactionBuffers int     `yaml:"transaction_buffers" json:"transaction_buffers"`
	HandlerCycles      int     `yaml:"handler_cycles" json:"handler_cycles"`
	MemoryCycles       int     `yaml:"memory_cycles" json:"memory_cycles"`
	NIQueue            int     `yaml:"ni_queue" json:"ni_queue"`
	RunAhead           int     `yaml:"run_ahead" json:"run_ahead"`
	WatchLine          int     `yaml:"watch_line" json:"watch_line"`
}

// Traffic selects the workload.
type Traffic struct {
	Pattern      string  `yaml:"pattern" json:"pattern"`
	Load         float64 `yaml:"load" json:"load"`
	Process      string  `yaml:"process" json:"process"`
	Fanout       int     `yaml:"fanout" json:"fanout"`
	MessageBytes int     `yaml:"message_bytes" json:"message_bytes"`
	Multicast    string  `yaml:"multicast" json:"multicast"`
	Software     string  `yaml:"software" json:"software"`
	Groups       int     `yaml:"groups" json:"groups"`
	// IOLoad is bgltree's point-to-point load from every compute node to
	// its I/O node on the system VC, beside the collective.
	IOLoad float64 `yaml:"io_load" json:"io_load"`
	// Sources and GroupPercent shape ibmesh's multicast workload: how
	// many nodes send (0: all) and what share of the nodes each one's
	// group holds.
	Sources      int `yaml:"sources" json:"sources"`
	GroupPercent int `yaml:"group_percent" json:"group_percent"`
	// Program is the program run by traffic.pattern program.
	Program string `yaml:"program" json:"program"`
	// Colors is the torus broadcast's colours of deposit-bit lines (1, 3
	// or 6: the rectangle broadcast).
	Colors int `yaml:"colors" json:"colors"`
}

// Combine configures the switches' combine units (the OQ-router paper §2, Fig. 2): the
// ALU's rate and the reduction collective runs perform.
type Combine struct {
	ElementsPerCycle int    `yaml:"elements_per_cycle" json:"elements_per_cycle"`
	Op               string `yaml:"op" json:"op"`
	Type             string `yaml:"type" json:"type"`
	FloatMode        string `yaml:"float_mode" json:"float_mode"`
}

// Run bounds the simulation: warm up, measure a window, then drain until
// every measured packet is accounted for or MaxCycles is reached.
type Run struct {
	WarmupCycles  int64 `yaml:"warmup_cycles" json:"warmup_cycles"`
	MeasureCycles int64 `yaml:"measure_cycles" json:"measure_cycles"`
	MaxCycles     int64 `yaml:"max_cycles" json:"max_cycles"`
	Workers       int64 `yaml:"workers" json:"workers"`
	// Cores is not a key: the cores run.workers 0 may give one run, set by
	// a caller running several at once (a sweep's jobs); 0 is GOMAXPROCS.
	Cores int64 `yaml:"-" json:"-"`
	// WatchdogCycles stops a run whose flits have not moved for this many
	// cycles (a deadlock); 0 turns the watchdog off.
	WatchdogCycles int64 `yaml:"watchdog_cycles" json:"watchdog_cycles"`
	// MemoryLimit (MiB) refuses a network whose estimated state is larger
	// before it is built; 0: the memory the machine has available.
	MemoryLimit int64 `yaml:"memory_limit" json:"memory_limit"`
}

// Allowed values of the enumerated keys (docs/architecture.md §8).
const (
	// Auto is router.routing's and router.escape's default, VCsAuto
	// router.vcs': what the topology and its routing need, resolved by
	// the topology (experiment.Resolve) before anything is built.
	Auto    = "auto"
	VCsAuto = 0

	TopologySwitch  = "switch"
	TopologyFatTree = "fattree"
	TopologyTorus   = "torus"
	TopologyMesh    = "mesh"
	TopologyIBMesh  = "ibmesh"
	TopologyBGLTree = "bgltree"
	TopologyMIN     = "min"
	TopologyIrreg   = "irregular"

	// IrregularRandom as network.irregular_file draws the network instead
	// of reading one.
	IrregularRandom = "random"

	OrgOQXP   = "oq-xp"
	OrgIQFIFO = "iq-fifo"
	OrgVOQ    = "voq"

	CreditMinFree       = "min-free"
	CreditPerLink       = "per-link"
	CreditPerCrosspoint = "per-crosspoint"

	SplittingOn  = "on"
	SplittingOff = "off"

	VLPolicySL2VL        = "sl2vl"
	VLPolicyPerDirection = "per-direction"

	PatternUniform    = "uniform"
	PatternTranspose  = "transpose"
	PatternBitrev     = "bitrev"
	PatternComplement = "complement"
	PatternShuffle    = "shuffle"
	PatternHotspot    = "hotspot"
	PatternTornado    = "tornado"
	PatternNeighbor   = "neighbor"
	PatternMulticast  = "multicast"
	PatternReduce     = "reduce"
	PatternAllreduce  = "allreduce"
	PatternBarrier    = "barrier"
	PatternBroadcast  = "broadcast"
	PatternNAMD       = "namd"
	PatternProgram    = "program"
	PatternDSM        = "dsm"

	ProcessBernoulli = "bernoulli"
	ProcessPoisson   = "poisson"

	MulticastHardware = "hardware"
	MulticastSoftware = "software"

	BuilderGreedy = "greedy"
	BuilderSimple = "simple"

	NICNone     = "none"
	NICOverhead = "overhead"
	NICMsgLayer = "msglayer"

	ProtoAuto       = "auto"
	ProtoEager      = "eager"
	ProtoSingle     = "single"
	ProtoMidsize    = "midsize"
	ProtoRendezvous = "rendezvous"

	SoftwareSequential = "sequential"
	SoftwareBinomial   = "binomial"
)

// Default returns the defaults: the OQ-router paper Table 1 for the physical parameters
// (10 Gbps links, 256-byte packets, 20 ns channel delay, 90 ns switch delay,
// 250 MHz clock, 1300 ns NIC overheads) and docs/architecture.md §8 for the rest.
func Default() Config {
	return Config{
		Name:     "hwcoll",
		Seed:     1,
		ClockMHz: 250,
		Network: Network{
			Topology:        TopologySwitch,
			Ports:           8,
			Inputs:          8,
			Organization:    OrgOQXP,
			XPBufferPackets: 4,
			CreditMode:      CreditMinFree,
			FanoutSplitting: SplittingOn,
			Iterations:      1,
			CombineUnits:    1,
			Nodes:           256,
			Dims:            []int{8, 8},
			VLs:             1,
			VLPolicy:        VLPolicySL2VL,
			TreeBuilder:     BuilderGreedy,
			MinKind:         "omega",
			IrregularFile:   IrregularRandom,
			Switches:        16,
			Degree:          4,
		},
		Link:   Link{Gbps: 10, DelayNS: 20, ResendBuffer: 8},
		Switch: Switch{DelayNS: 90},
		Router: Router{Switching: "vct", VCs: VCsAuto, VCBufferFlits: 32, Routing: Auto, Escape: Auto, InjectionFIFOs: 1},
		Packet: Packet{Bytes: 256, FlitBytes: 32},
		NIC:    NIC{SendOverheadNS: 1300, RecvOverheadNS: 1300, Model: NICNone},
		DSM: DSM{Directory: "full-map", Pointers: 4, Consistency: "sc", VirtualNetworks: 2, CPI: 1, CacheBytes: 1 << 20,
			CacheWays: 4, LineBytes: 64, TransactionBuffers: 8, HandlerCycles: 4, MemoryCycles: 20, NIQueue: 4, RunAhead: 16},
		MsgLayer: MsgLayer{Protocol: ProtoAuto, EagerMaxBytes: 1024, MidsizeMaxBytes: 16384, Leads: 4},
		Traffic: Traffic{Pattern: PatternUniform, Load: 0.5, Process: ProcessBernoulli, Fanout: 4, MessageBytes: 256, Multicast: MulticastHardware, Software: SoftwareBinomial, Groups: 64, Program: "one-to-all", Colors: 1,
			Sources: 1, GroupPercent: 100},
		Combine: Combine{ElementsPerCycle: 1, Op: "sum", Type: "int64", FloatMode: "exact"},
		Run:     Run{WarmupCycles: 10000, MeasureCycles: 50000, MaxCycles: 5000000, WatchdogCycles: 100000},
		Faults:  []string{},
	}
}

// Error is a configuration error: the full dotted key and what is wrong with
// it, including what is allowed. Error() is always exactly one line.
type Error struct {
	Key string // dotted key, e.g. "network.ports"; "" for whole-document errors (YAML syntax)
	Msg string
}

// Error returns "<key>: <msg>" (or just the message when Key is empty) with
// every run of white space, line breaks included, collapsed to one space.
func (e *Error) Error() string {
	if e.Key == "" {
		return oneLine(e.Msg)
	}
	return oneLine(e.Key + ": " + e.Msg)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Parse decodes a YAML config over Default(): keys that are not named keep
// their defaults, so partial files are fine. The result is validated. Every
// error is an *Error naming the full dotted key (unknown keys at any depth,
// wrong types, bad values), or, for YAML syntax errors, a one-line message
// with the line number.
func Parse(data []byte) (Config, error) {
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // empty file: all defaults
		}
		return Config{}, &Error{Msg: yamlMsg(err, data)}
	}
	var extra yaml.Node
	if err := safeDecode(dec, &extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return Config{}, &Error{Msg: yamlMsg(err, data)}
		}
		return Config{}, &Error{Msg: fmt.Sprintf("yaml: line %d: a config file holds exactly one YAML document", extra.Line)}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return c, nil
		}
		root = root.Content[0]
	}
	root = deref(root)
	if isNull(root) {
		return c, nil
	}
	if root.Kind != yaml.MappingNode {
		return Config{}, &Error{Msg: fmt.Sprintf("config: expected a mapping with keys %s; got %s", strings.Join(sections[""], ", "), describe(root))}
	}
	budget := maxEntries
	if e := decodeMapping(&c, root, "", reflect.ValueOf(&c).Elem(), &budget); e != nil {
		return Config{}, e
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Load reads and parses a YAML config file. Errors are one line; parse
// errors are prefixed with the path and wrap the *Error (use errors.As).
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, errors.New(oneLine(err.Error()))
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", oneLine(path), err)
	}
	return c, nil
}

// Set applies one `--set key=value` assignment: key is a dotted path from
// Keys() (e.g. "network.ports=32", "link.gbps=2.5", "traffic.pattern=bitrev");
// lists are written "[4,4,4]", "4,4,4" or "4x4x4". Numbers use YAML syntax
// (so "5e6", "0x10" and "1_000" work); string values are taken literally:
// everything after the first '=', spaces included.
// The value is type-checked and, unless its rule depends on other keys
// (network.inputs, network.dims, run.max_cycles), range-checked; call
// Validate after the last assignment for the cross-key checks. On error c is
// unchanged.
func (c *Config) Set(assignment string) error {
	key, raw, ok := strings.Cut(assignment, "=")
	key = strings.TrimSpace(key)
	if !ok {
		if key == "" {
			return &Error{Msg: fmt.Sprintf("--set %q: expected key=value, e.g. network.ports=32", assignment)}
		}
		return &Error{Key: key, Msg: "missing '='; expected key=value, e.g. network.ports=32"}
	}
	if key == "" {
		return &Error{Msg: fmt.Sprintf("--set %q: empty key; expected key=value, e.g. network.ports=32", assignment)}
	}
	s := specByKey[key]
	if s == nil {
		return unknownPath(key)
	}
	if s.kind != reflect.String {
		raw = strings.TrimSpace(raw)
	}
	node, e := valueNode(s, raw)
	if e != nil {
		return e
	}
	tmp := *c
	fv := reflect.ValueOf(&tmp).Elem().FieldByIndex(s.index)
	if e := decodeLeaf(node, key, fv); e != nil {
		return e
	}
	if !s.rule.cross {
		if msg := s.rule.check(&tmp, fv); msg != "" {
			return &Error{Key: key, Msg: msg}
		}
	}
	tmp.afterSet(key)
	*c = tmp
	return nil
}

// Get returns the value of a dotted key formatted the way Set accepts it
// (and the way KeyInfo.Default is written): Set(key+"="+Get(key)) is a no-op.
func (c Config) Get(key string) (string, error) {
	s := specByKey[key]
	if s == nil {
		return "", unknownPath(key)
	}
	return format(reflect.ValueOf(&c).Elem().FieldByIndex(s.index)), nil
}

// afterSet keeps the "inputs follows ports" rule: network.inputs follows
// network.ports until inputs is given explicitly.
func (c *Config) afterSet(key string) {
	switch key {
	case "network.inputs":
		c.Network.inputsSet = true
	case "network.ports":
		if !c.Network.inputsSet {
			c.Network.Inputs = c.Network.Ports
		}
	}
}

// safeDecode runs the YAML decoder; a panic inside the library (none is
// known in v3.0.1) becomes an error instead of crashing the caller.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: invalid input (%v)", r)
		}
	}()
	return dec.Decode(n)
}

// yamlMsg makes a YAML library error one line that always names a line.
// yaml.v3 leaves the line out when its (0-based) mark is on the first line,
// and reader errors (control characters, bad UTF-8) and unknown anchors carry
// no position at all: for those, find the offending spot in data.
func yamlMsg(err error, data []byte) string {
	msg := strings.TrimPrefix(oneLine(err.Error()), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		return "yaml: " + msg
	}
	at := -1
	switch {
	case strings.HasPrefix(msg, "unknown anchor '"):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown anchor '"), "'")
		at = bytes.Index(data, []byte("*"+name))
	case strings.Contains(msg, "control characters") || strings.Contains(msg, "UTF-8") || strings.Contains(msg, "Unicode"):
		at = firstUnprintable(data)
	}
	line := 1
	if at > 0 {
		line += bytes.Count(data[:at], []byte("\n"))
	}
	return fmt.Sprintf("yaml: line %d: %s", line, msg)
}

// firstUnprintable is the offset of the first byte YAML's reader rejects
// (invalid UTF-8 or a character outside YAML's printable set), or -1.
func firstUnprintable(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		ok := r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
			(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
		if (r == utf8.RuneError && size <= 1) || !ok {
			return i
		}
		i += size
	}
	return -1
}

// deref follows aliases (bounded: the parser can build alias cycles).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 64 && n != nil && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func isMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" &&
		(n.Tag == "" || n.Tag == "!" || n.ShortTag() == "!!merge")
}

// describe names what a node is, for "got ..." in messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil || n.Kind == 0:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an unresolved alias"
	case isNull(n):
		return "null"
	case n.Kind == yaml.ScalarNode:
		return show(n)
	}
	return "an unsupported YAML node"
}

// show renders a scalar for a message: numbers and words plain, everything
// else quoted (so control characters and line breaks stay escaped).
func show(n *yaml.Node) string {
	v := clip(n.Value)
	if n.ShortTag() != "!!str" && v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") == "" {
		return v
	}
	return strconv.Quote(v)
}

// child is the dotted key of a YAML key name under prefix, for messages:
// names that are empty or hold spaces or control characters are quoted,
// long ones clipped.
func child(prefix, name string) string {
	odd := strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0
	if name == "" || odd {
		return join(prefix, strconv.Quote(clip(name)))
	}
	return join(prefix, clip(name))
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// maxEntries bounds the mapping entries one document may produce (merges
// included); a config has 28 keys.
const maxEntries = 10000

type pair struct {
	key string
	val *yaml.Node
}

// pairs lists a mapping's entries in the order they must be applied: merged
// entries ("<<: *anchor", earlier sources winning) first, then the explicit
// ones, which override them. Duplicate explicit keys are an error.
//
// budget bounds the entries produced by merges over a whole document, so
// that an alias bomb (each level merging the previous one many times) fails
// fast instead of expanding exponentially.
func pairs(n *yaml.Node, prefix string, depth int, budget *int) ([]pair, *Error) {
	if depth > 8 {
		return nil, &Error{Key: join(prefix, "<<"), Msg: "merge keys nested too deeply (or recursive)"}
	}
	var merged, explicit []pair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			if prefix == "" {
				return nil, &Error{Msg: fmt.Sprintf("config: keys must be names; got %s as a key", describe(k))}
			}
			return nil, &Error{Key: prefix, Msg: fmt.Sprintf("keys must be names; got %s as a key", describe(k))}
		}
		if isMerge(k) {
			src := deref(v)
			srcs := []*yaml.Node{src}
			if src != nil && src.Kind == yaml.SequenceNode {
				srcs = src.Content
			}
			for j := len(srcs) - 1; j >= 0; j-- {
				m := deref(srcs[j])
				if m == nil || m.Kind != yaml.MappingNode {
					return nil, &Error{Key: join(prefix, "<<"), Msg: fmt.Sprintf("merge needs a mapping or a list of mappings; got %s", describe(m))}
				}
				ps, e := pairs(m, prefix, depth+1, budget)
				if e != nil {
					return nil, e
				}
				merged = append(merged, ps...)
			}
			continue
		}
		if line, dup := seen[k.Value]; dup {
			return nil, &Error{Key: child(prefix, k.Value), Msg: fmt.Sprintf("duplicate key (lines %d and %d)", line, k.Line)}
		}
		seen[k.Value] = k.Line
		explicit = append(explicit, pair{k.Value, v})
	}
	if *budget -= len(merged) + len(explicit); *budget < 0 {
		if prefix == "" {
			return nil, &Error{Msg: "config: merge keys expand to too many entries"}
		}
		return nil, &Error{Key: prefix, Msg: "merge keys expand to too many entries"}
	}
	return append(merged, explicit...), nil
}

// decodeMapping applies a YAML mapping to the struct v (the section prefix).
func decodeMapping(c *Config, n *yaml.Node, prefix string, v reflect.Value, budget *int) *Error {
	ps, e := pairs(n, prefix, 0, budget)
	if e != nil {
		return e
	}
	for _, p := range ps {
		key := join(prefix, p.key)
		f, ok := fieldByName(v.Type(), p.key)
		if !ok {
			return unknownKey(child(prefix, p.key), prefix, p.key)
		}
		fv := v.FieldByIndex(f.Index)
		if fv.Kind() == reflect.Struct {
			val := deref(p.val)
			if isNull(val) {
				continue // "network:" with every child commented out
			}
			if val.Kind != yaml.MappingNode {
				return &Error{Key: key, Msg: fmt.Sprintf("expected a mapping with keys %s; got %s", strings.Join(sections[key], ", "), describe(val))}
			}
			if e := decodeMapping(c, val, key, fv, budget); e != nil {
				return e
			}
			continue
		}
		if e := decodeLeaf(p.val, key, fv); e != nil {
			return e
		}
		c.afterSet(key)
	}
	return nil
}

// fieldByName finds the field of struct type t whose yaml name is name.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.IsExported() && yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// decodeLeaf type-checks one YAML value and stores it in fv (no range check).
func decodeLeaf(n *yaml.Node, key string, fv reflect.Value) *Error {
	n = deref(n)
	want := typeName(fv.Type())
	if isNull(n) {
		return &Error{Key: key, Msg: "missing value; expected " + want}
	}
	switch fv.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return &Error{Key: key, Msg: fmt.Sprintf("expected %s; got %s", want, describe(n))}
		}
		fv.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		i, msg := scalarInt(n)
		if msg == "" && fv.OverflowInt(i) {
			msg = fmt.Sprintf("%d is out of range for %s", i, want)
		}
		if msg != "" {
			return &Error{Key: key, Msg: msg}
		}
		fv.SetInt(i)
	case reflect.Bool:
		b, msg := scalarBool(n)
		if msg != "" {
			return &Error{Key: key, Msg: msg}
		}
		fv.SetBool(b)
	case reflect.Float64:
		f, msg := scalarFloat(n)
		if msg != "" {
			return &Error{Key: key, Msg: msg}
		}
		fv.SetFloat(f)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return &Error{Key: key, Msg: fmt.Sprintf("expected %s, e.g. [8, 8]; got %s", want, describe(n))}
		}
		out := reflect.MakeSlice(fv.Type(), len(n.Content), len(n.Content))
		for i, el := range n.Content {
			el = deref(el)
			if fv.Type().Elem().Kind() == reflect.String {
				if el.Kind != yaml.ScalarNode || isNull(el) {
					return &Error{Key: key, Msg: fmt.Sprintf("entry %d: expected a string; got %s", i+1, describe(el))}
				}
				out.Index(i).SetString(el.Value)
				continue
			}
			if isNull(el) {
				return &Error{Key: key, Msg: fmt.Sprintf("entry %d: missing value; expected an integer", i+1)}
			}
			v, msg := scalarInt(el)
			if msg == "" && out.Index(i).OverflowInt(v) {
				msg = fmt.Sprintf("%d is out of range for an integer", v)
			}
			if msg != "" {
				return &Error{Key: key, Msg: fmt.Sprintf("entry %d: %s", i+1, msg)}
			}
			out.Index(i).SetInt(v)
		}
		fv.Set(out)
	default:
		return &Error{Key: key, Msg: "unsupported field type " + fv.Type().String()}
	}
	return nil
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list of integers"
	}
	return t.String()
}

// scalarBool accepts true and false (any case: YAML's true, True, TRUE).
func scalarBool(n *yaml.Node) (bool, string) {
	if n.Kind != yaml.ScalarNode {
		return false, fmt.Sprintf("expected true or false; got %s", describe(n))
	}
	switch strings.ToLower(n.Value) {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, fmt.Sprintf("%q is not true or false", clip(n.Value))
}

// scalarInt accepts YAML integers (decimal, 0x, 0o, 0b, underscores) and
// integral floats (so "5e6" cycles works).
func scalarInt(n *yaml.Node) (int64, string) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Sprintf("expected an integer; got %s", describe(n))
	}
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			if (&yaml.Node{Kind: yaml.ScalarNode, Value: n.Value}).ShortTag() == "!!int" {
				return 0, fmt.Sprintf("%s is out of range for a 64-bit integer", show(n))
			}
			return 0, fmt.Sprintf("%s is not an integer", show(n))
		}
		return i, ""
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return 0, fmt.Sprintf("%s is not an integer", show(n))
		}
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return 0, fmt.Sprintf("%s is not an integer", show(n))
		}
		if f < -(1<<63) || f >= 1<<63 {
			return 0, fmt.Sprintf("%s is out of range for a 64-bit integer", show(n))
		}
		return int64(f), ""
	}
	return 0, fmt.Sprintf("%s is not an integer", show(n))
}

func scalarFloat(n *yaml.Node) (float64, string) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Sprintf("expected a number; got %s", describe(n))
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err == nil {
			return f + 0, "" // + 0 turns -0 into 0
		}
	}
	return 0, fmt.Sprintf("%s is not a number", show(n))
}

// valueNode turns the text of a --set value into a YAML node for decodeLeaf.
func valueNode(s *spec, raw string) (*yaml.Node, *Error) {
	if s.kind == reflect.String {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: raw}, nil
	}
	if raw == "" {
		return nil, &Error{Key: s.key, Msg: "missing value; expected " + typeName(s.typ)}
	}
	var doc yaml.Node
	if err := safeDecode(yaml.NewDecoder(strings.NewReader(raw)), &doc); errors.Is(err, io.EOF) {
		return nil, &Error{Key: s.key, Msg: "missing value; expected " + typeName(s.typ)}
	} else if err != nil {
		return nil, &Error{Key: s.key, Msg: fmt.Sprintf("%q is not %s (%s)", clip(raw), typeName(s.typ), yamlMsg(err, []byte(raw)))}
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if s.kind == reflect.Slice && n.Kind == yaml.ScalarNode && !isNull(n) {
		// "4,4,4", "4x4x4" or a single "8".
		parts := []string{n.Value}
		if s.typ.Elem().Kind() == reflect.String {
			parts = splitOutside(n.Value)
		} else if n.ShortTag() == "!!str" {
			if strings.Contains(n.Value, ",") {
				parts = strings.Split(n.Value, ",")
			} else {
				parts = strings.Split(strings.ToLower(n.Value), "x")
			}
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, p := range parts {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: strings.TrimSpace(p)})
		}
		n = seq
	}
	return n, nil
}

// splitOutside splits s at the commas outside parentheses, so that a
// fault path's coordinates (top.net.r(1,0).out(1)@5) stay one entry.
func splitOutside(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// format writes a field value the way Set reads it.
func format(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float()+0, 'g', -1, 64) // + 0: no "-0"
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = format(v.Index(i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// unknownPath explains an unknown dotted key (from Set or Get), listing
// what is allowed where it went wrong.
func unknownPath(key string) *Error {
	if children, ok := sections[key]; ok && key != "" {
		full := make([]string, len(children))
		for i, ch := range children {
			full[i] = join(key, ch)
		}
		return &Error{Key: key, Msg: "is a section, not a value; set one of: " + strings.Join(full, ", ")}
	}
	segs := strings.Split(key, ".")
	parent := ""
	for i, seg := range segs[:len(segs)-1] {
		next := join(parent, seg)
		if specByKey[next] != nil {
			return &Error{Key: key, Msg: fmt.Sprintf("unknown key; %s is a value and has no sub-keys", next)}
		}
		if _, ok := sections[next]; !ok {
			return unknownKey(key, parent, segs[i])
		}
		parent = next
	}
	return unknownKey(key, parent, segs[len(segs)-1])
}

// unknownKey reports that name (shown as key) is not a key of section
// parent ("" = top level).
func unknownKey(key, parent, name string) *Error {
	children := sections[parent]
	where := "allowed keys"
	if parent != "" {
		where = "allowed keys in " + parent
	}
	hint := ""
	if best := closest(name, children); best != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", join(parent, best))
	}
	return &Error{Key: key, Msg: fmt.Sprintf("unknown key%s; %s: %s", hint, where, strings.Join(children, ", "))}
}

// closest returns the candidate within edit distance 2 of name, if any.
func closest(name string, candidates []string) string {
	best, bestD := "", 3
	if len(name) > 64 {
		return ""
	}
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
