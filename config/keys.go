package config

import (
	"fmt"
	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/routing"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// KeyInfo describes one config key; Keys() is the config reference.
type KeyInfo struct {
	Key     string // dotted key, e.g. "network.ports" (YAML path and --set name)
	Type    string // "string", "int", "float", "bool" or "list of int"
	Default string // the default, written the way Set accepts it, e.g. "8", "[8,8]"
	Allowed string // allowed values, e.g. "2..256", "(0, 1]" or "oq-xp | iq-fifo | voq"
	Doc     string // one-line description
}

// Limits shared by several keys.
const (
	maxNodes  = 1 << 20            // nodes, dims product, fanout
	maxNS     = 1e9                // any delay or overhead: 1 s
	maxCycles = 1_000_000_000_000  // warm-up or measurement window
	maxRun    = 10_000_000_000_000 // run.max_cycles
)

// table is the single source of truth for every key: its name (= the yaml
// tag path of a Config field), documentation and rule (allowed values and
// the check that Validate and Set run). Order = the reference order.
var table = []spec{
	{key: "name", doc: "experiment name, copied into results", rule: anyString()},
	{key: "seed", doc: "random seed; every random stream derives from it", rule: anyInt()},
	{key: "clock_mhz", doc: "switch clock in MHz; every ns value is converted to cycles of this clock", rule: floatIn(0, 10000, true)},

	{key: "network.topology", doc: "network to build", rule: topologyRule()},
	{key: "network.ports", doc: "switch radix (switch, fattree; min: k of its k x k switches)", rule: intIn(2, 256)},
	{key: "network.inputs", doc: "active input ports of a single switch (switch only; e.g. 2 for a 2x8 switch); follows network.ports unless set explicitly", rule: inputsRule()},
	{key: "network.organization", doc: "switch organization: output-queued with crosspoint buffers, input-queued FIFO, or virtual output queues", rule: oneOf(OrgOQXP, OrgIQFIFO, OrgVOQ)},
	{key: "network.xp_buffer_packets", doc: "crosspoint buffer capacity in packets (iq-fifo: input FIFO capacity; voq: capacity of each virtual output queue)", rule: intIn(1, 1024)},
	{key: "network.credit_mode", doc: "min-free: one counter per link holding the least free space over the next input's crosspoints, a packet goes when it is at least 1 (the OQ-router paper's scheme); per-link: one counter per link counting the packets the sender has in the next switch, credit returned after a packet's last copy left (an input holds at most xp_buffer_packets packets); per-crosspoint: one counter per downstream crosspoint, with look-ahead routing (the sender picks a fat-tree's adaptive up port; not with NICs). iq-fifo and voq have one buffer per input, where min-free and per-link are the same", rule: oneOf(CreditMinFree, CreditPerLink, CreditPerCrosspoint)},
	{key: "network.fanout_splitting", doc: "multicast in iq-fifo and in the voq multicast queue: on sends a packet to the outputs that take it now and the rest later; off waits until all its outputs take it at once", rule: oneOf(SplittingOn, SplittingOff)},
	{key: "network.iterations", doc: "voq: iterations of the iSLIP-style request-grant-accept matching per arbitration", rule: intIn(1, 16)},
	{key: "network.combine_units", doc: "combine (reduction/barrier) units per switch", rule: intIn(1, 64)},
	{key: "network.nodes", doc: "number of end nodes (fattree, bgltree; min: its hosts, a power of network.ports)", rule: intIn(2, maxNodes)},
	{key: "network.dims", doc: "network dimensions (torus, mesh, ibmesh), e.g. [8,8] or [64,32,32]", rule: dimsRule(3, 2, 1024)},
	{key: "network.vls", doc: "virtual lanes per link (ibmesh)", rule: intOneOf(1, 2, 4)},
	{key: "network.vl_policy", doc: "VL assignment (ibmesh): SL-to-VL mapping, or one VL per direction", rule: oneOf(VLPolicySL2VL, VLPolicyPerDirection)},

	{key: "network.tree_builder", doc: "fattree collective spanning trees: greedy climbs through the least loaded parent (load = trees through a switch), simple always through the last up port", rule: oneOf(BuilderGreedy, BuilderSimple)},

	{key: "network.min_kind", doc: "min: the multistage network of network.nodes hosts (a power of network.ports) on network.ports x network.ports switches: omega (a perfect shuffle before every stage), butterfly (the k-ary n-fly), cube (the indirect k-ary n-cube), unidirectional, at most 7 ports a side; bmin, bidirectional (turnaround routing; a k-ary n-tree), at most 3", rule: oneOf("omega", "butterfly", "cube", "bmin")},
	{key: "network.irregular_file", doc: "irregular: an edge-list file of the network (lines 'switches N', 'hosts H', 'root R', then one cable 'A B' per line, # comments; a path relative to the working directory; ./random for a file of that name); random = a random network of network.switches switches of network.degree cables, drawn with the seed", rule: anyString()},
	{key: "network.switches", doc: "irregular, random: number of switches (one host each)", rule: intIn(1, 4096)},
	{key: "network.degree", doc: "irregular, random: cables per switch, at most (the network is connected, and cables are added while two switches with free ports and no cable between them remain)", rule: intIn(1, 6)},

	{key: "link.gbps", doc: "link bandwidth in Gbit/s", rule: floatIn(0, 10000, true)},
	{key: "link.delay_ns", doc: "channel delay in ns", rule: floatIn(0, maxNS, false)},
	{key: "link.ber", doc: "bit error rate of every network link (fattree, torus, mesh, ibmesh, bgltree); above 0 the links check a CRC per packet and resend what fails (link-level retry, go-back-N)", rule: floatIn(0, 0.01, false)},
	{key: "link.resend_buffer", doc: "link retry: packets a sender keeps until they are acknowledged (it sends nothing new while full)", rule: intIn(1, 16383)},
	{key: "link.retry_timeout", doc: "link retry: cycles without an acknowledgement before the sender resends; 0 = auto (4 round trips of a packet)", rule: intIn(0, 1<<30)},
	{key: "switch.delay_ns", doc: "switch delay in ns", rule: floatIn(0, maxNS, false)},
	{key: "router.switching", doc: "direct networks' flow control: vct (a packet advances only when the next VC can hold all of it), wormhole (one-flit VC buffers; a blocked header holds its worm across routers), buffered-wormhole (router.vc_buffer_flits per VC, no guarantee a packet fits)", rule: oneOf("vct", "wormhole", "buffered-wormhole")},
	{key: "router.vcs", doc: "virtual channels per router port (torus, mesh, min, irregular); 0 = auto: what the routing needs (2; planar-adaptive and bgl 3; duato on a dateline torus 3)", rule: intIn(0, 8)},
	{key: "router.vc_buffer_flits", doc: "flits per VC buffer (vct, buffered-wormhole; vct needs a whole packet, the bubble rule two)", rule: intIn(1, 16384)},
	{key: "router.routing", doc: routingDoc(), rule: oneOf(routingNames()...)},
	{key: "router.escape", doc: "deadlock avoidance on a torus's escape (deterministic) VCs: dateline VC classes, the bubble rule (enter a ring with room for two packets), or none (unsafe, to show deadlock); auto = bubble under bgl, dateline otherwise", rule: oneOf(Auto, "dateline", "bubble", "none")},
	{key: "router.injection_fifos", doc: "lanes of the node's port (program runs on NICs, traffic.pattern program or broadcast; the BG/L node's injection and reception FIFOs): this many injection FIFOs and reception FIFOs, each moving one packet at a time at link rate, independently, so a node feeds and drains several links at once; a NIC puts a forwarded packet in the FIFO of its colour (traffic.colors), its own messages in the first; the router ejects into any free reception FIFO. 1 = one of each (one link's bandwidth in and out); at most 6, a node's links", rule: intIn(1, 6)},
	{key: "packet.bytes", doc: "packet size in bytes; messages are split into packets of at most this size", rule: intIn(8, 65536)},
	{key: "packet.flit_bytes", doc: "flit size in bytes (torus, mesh, min, irregular): the unit of flow control; a flit holds a link ceil(flit_bytes / link bytes per cycle) cycles", rule: intIn(1, 65536)},
	{key: "nic.send_overhead_ns", doc: "NIC send overhead per message in ns", rule: floatIn(0, maxNS, false)},
	{key: "nic.recv_overhead_ns", doc: "NIC receive overhead per message in ns", rule: floatIn(0, maxNS, false)},
	{key: "nic.model", doc: "endpoints of fattree point-to-point and multicast load runs: none = open-loop packet sources and sinks (no overheads), overhead = NICs paying the per-message overheads; namd and software collectives always use NICs; msglayer = the BG/L message layer (msglayer.*) in place of the NICs of a program run (traffic.pattern program) on a torus or mesh", rule: nicModelRule()},
	{key: "nic.send_packet_ns", doc: "NIC send work per packet in ns (t_nic_send): each packet goes this long after the last one, the first after the send overhead (program runs)", rule: floatIn(0, maxNS, false)},
	{key: "nic.recv_packet_ns", doc: "NIC receive work per packet in ns (t_nic_recv), one packet at a time after its tail arrived; a message has arrived when its last packet is done (program runs)", rule: floatIn(0, maxNS, false)},

	{key: "msglayer.protocol", doc: "nic.model msglayer: the protocol of every message (the BG/L MPI paper §5): eager (fire and forget), single (the one-packet fast path; messages of one packet only), midsize (matching information in the first msglayer.leads packets, the first acknowledged), rendezvous (the first packet acknowledged, the rest after the ack); auto = single for one packet, eager up to msglayer.eager_max_bytes, midsize up to msglayer.midsize_max_bytes, rendezvous above. The message layer's processor pays the Table 1 overheads (postsend 630, msgsend_adv 650 per packet, senddone 115, dispatch 560 per packet, recvnew 350, recvdone 250 instructions) at one instruction per cycle of a 700 MHz core: clock_mhz/700 simulation cycles each", rule: oneOf(ProtoAuto, ProtoEager, ProtoSingle, ProtoMidsize, ProtoRendezvous)},
	{key: "msglayer.eager_max_bytes", doc: "msglayer.protocol auto: messages of more than one packet and at most this many bytes go eager", rule: intIn(0, 1<<24)},
	{key: "msglayer.midsize_max_bytes", doc: "msglayer.protocol auto: longer messages of at most this many bytes go midsize, longer ones rendezvous", rule: midsizeRule()},
	{key: "msglayer.leads", doc: "K: the packets of a midsize message that carry the matching information and may go before the ack; 0 = derived from the round trip (msglayer LeadsFor of the lead out and the ack back over the network's mean distance, both dispatched)", rule: intIn(0, 1<<16)},
	{key: "msglayer.high_priority_lead", doc: "send packet 0 of every message at high priority (SL 1: VC 3 of router.routing bgl with 4 VCs, served first), so that the message's other packets are less likely to overtake it", rule: highPriorityRule()},

	{key: "traffic.pattern", doc: "traffic pattern or collective", rule: oneOf(PatternUniform, PatternTranspose, PatternBitrev, PatternComplement, PatternShuffle, PatternHotspot, PatternTornado, PatternNeighbor, PatternMulticast, PatternReduce, PatternAllreduce, PatternBarrier, PatternBroadcast, PatternNAMD, PatternProgram, PatternDSM)},
	{key: "traffic.load", doc: "offered injection rate per source as a fraction of link bandwidth", rule: floatIn(0, 1, true)},
	{key: "traffic.process", doc: "injection process", rule: oneOf(ProcessBernoulli, ProcessPoisson)},
	{key: "traffic.fanout", doc: "mean multicast fanout (destinations per multicast)", rule: intIn(1, maxNodes)},
	{key: "traffic.message_bytes", doc: "message size in bytes (collectives, messages)", rule: intIn(1, 1<<30)},
	{key: "traffic.multicast", doc: "collectives in the switches (hardware) or by point-to-point messages (software)", rule: oneOf(MulticastHardware, MulticastSoftware)},
	{key: "traffic.software", doc: "software multicast algorithm (traffic.multicast software): sequential = the source sends one message per destination, binomial = every node that has the message forwards it along a binomial tree; software reductions always use a binomial tree", rule: oneOf(SoftwareSequential, SoftwareBinomial)},
	{key: "traffic.groups", doc: "fattree multicast and namd: destination groups per source, each a collective tree built before the run; a multicast goes to one of its source's groups drawn uniformly", rule: intIn(1, 4096)},
	{key: "traffic.io_load", doc: "bgltree: point-to-point load from every compute node to its pset's I/O node on the system VC while the collective runs, as a fraction of link bandwidth (0: none)", rule: floatIn(0, 1, false)},
	{key: "traffic.sources", doc: "ibmesh multicast: nodes that send a message to their group, drawn with the seed (0 = all)", rule: intIn(0, maxNodes)},
	{key: "traffic.group_percent", doc: "ibmesh multicast: each source's group, as a percentage of the nodes, drawn with the seed (100 = every other node)", rule: intIn(1, 100)},
	{key: "traffic.program", doc: "traffic.pattern program: the program every node runs on its NIC (torus, mesh, min, irregular): ping-pong (node 0 and the last node), one-to-all and all-to-one (node 0 and every other, one message each), multi-multicast (traffic.sources sources, 0 = all, each to traffic.fanout destinations drawn with the seed, binomial trees), ring-allreduce (2(N-1) steps of one message to the right neighbour), alltoall (every node to every other, to node+1, node+2, ... in turn), alltoall-random (each node's destinations in an order drawn with the seed), barrier (dissemination), allreduce (recursive doubling, or a binomial reduction and broadcast), broadcast (node 0 to every node along a binomial tree of messages), allgather (every node's message to every other, a line broadcast from every node at once; torus, routing bgl, vct), deposit-broadcast (node 0 to every node of a torus or mesh in traffic.colors colours of deposit-bit lines, each packet passed on as it arrives; routing bgl, vct); every message is traffic.message_bytes; the run ends when every node's program has; with traffic.pattern dsm: the shared-memory program every processor runs (radix when left at its default; dsm.problem_size sizes it)", rule: programRule(oneOf("ping-pong", "one-to-all", "all-to-one", "multi-multicast", "ring-allreduce", "alltoall", "alltoall-random", "barrier", "allreduce", "broadcast", "allgather", "deposit-broadcast"))},
	{key: "traffic.colors", doc: "torus and mesh broadcast in deposit-bit lines (traffic.pattern broadcast with traffic.multicast hardware, or traffic.program deposit-broadcast): the message's packets are dealt round robin to this many colours, each a broadcast in lines that leaves node 0 along a dimension of its own (3: +X, +Y, +Z; 6: both ways, a torus only) and takes the dimensions in its own order (the rectangle broadcast)", rule: intOneOf(1, 3, 6)},

	{key: "combine.elements_per_cycle", doc: "combine unit ALU rate: a reduction packet of n elements holds the unit ceil(n/rate) cycles", rule: intIn(1, 65536)},
	{key: "combine.op", doc: "reduction operator of reduce/allreduce runs (bitwise ones on integer types only)", rule: oneOf("sum", "min", "max", "and", "or", "xor")},
	{key: "combine.type", doc: "element type of reduce/allreduce runs (8 bytes per element of traffic.message_bytes)", rule: oneOf("int32", "int64", "uint64", "float64")},
	{key: "combine.float_mode", doc: "float64 sums: naive (IEEE, arrival order), two-phase (two tree passes: max exponent to every member, then aligned mantissas; links charged 8 then 16 bytes per element) or exact (wide fixed point, correctly rounded)", rule: oneOf("naive", "two-phase", "exact")},

	{key: "dsm.problem_size", doc: "traffic.pattern dsm: the program's size: keys for radix, bodies for barnes, iterations for the small kernels; 0 = the program's default", rule: intIn(0, 1<<26)},
	{key: "dsm.directory", doc: "traffic.pattern dsm: the homes' directories: full-map (a presence bit per node), limited-broadcast (Dir_i B: dsm.pointers sharer pointers, past them invalidations go to every node), limited-no-broadcast (Dir_i NB: a new sharer past the pointers takes the place of one the home invalidates)", rule: oneOf("full-map", "limited-broadcast", "limited-no-broadcast")},
	{key: "dsm.pointers", doc: "traffic.pattern dsm, limited directories: sharer pointers per directory entry (i of Dir_i)", rule: intIn(1, 64)},
	{key: "dsm.consistency", doc: "traffic.pattern dsm: sc = sequential consistency (a processor blocks on every miss); rc = release consistency (stores retire into the transaction buffers, loads block, locks and barriers fence)", rule: oneOf("sc", "rc")},
	{key: "dsm.virtual_networks", doc: "traffic.pattern dsm: 2 = requests and replies on separate virtual networks (router.vcs split in two classes; the protocol cannot deadlock); 1 = one network for both, to show the protocol deadlock the watchdog then catches", rule: intIn(1, 2)},
	{key: "dsm.cpi", doc: "traffic.pattern dsm: cycles per instruction of the programs' computation between references (compute time = instructions x CPI)", rule: floatIn(0, 1000, true)},
	{key: "dsm.cache_bytes", doc: "traffic.pattern dsm: each node's cache (a power of two times dsm.cache_ways lines)", rule: intIn(8, 1<<30)},
	{key: "dsm.cache_ways", doc: "traffic.pattern dsm: the cache's associativity (LRU replacement)", rule: intIn(1, 64)},
	{key: "dsm.line_bytes", doc: "traffic.pattern dsm: the coherence unit, a power of two", rule: intIn(8, 512)},
	{key: "dsm.transaction_buffers", doc: "traffic.pattern dsm: outstanding misses per node (under rc they bound the stores a processor overlaps)", rule: intIn(1, 64)},
	{key: "dsm.handler_cycles", doc: "traffic.pattern dsm: the node controller's occupancy per handler (a message handled), in cycles", rule: intIn(1, 1<<20)},
	{key: "dsm.memory_cycles", doc: "traffic.pattern dsm: added to the occupancy of handlers that read or write the home's memory", rule: intIn(0, 1<<20)},
	{key: "dsm.ni_queue", doc: "traffic.pattern dsm: packets each class's output queue of a network interface holds before a request's handler must wait for room", rule: intIn(1, 1<<16)},
	{key: "dsm.run_ahead", doc: "traffic.pattern dsm: how many cycles a processor runs hits and computation ahead of the clock before it yields (its references perform in order at the cycle it was resumed; 0 = yield at every reference)", rule: intIn(0, 1<<20)},
	{key: "dsm.watch_line", doc: "traffic.pattern dsm: the line (address / line size) whose directory entry and cache states the waveform's probes show", rule: intIn(0, 1<<40)},

	{key: "run.warmup_cycles", doc: "cycles simulated before the measurement window", rule: intIn(0, maxCycles)},
	{key: "run.measure_cycles", doc: "length of the measurement window in cycles", rule: intIn(1, maxCycles)},
	{key: "run.max_cycles", doc: "limit on simulated cycles, drain included", rule: maxCyclesRule()},
	{key: "run.workers", doc: "goroutines evaluating one run (the kernel's parallel evaluation; results and VCD are identical for any value): 0 = auto: networks of at least 1024 components (a 256-node 8-port fat-tree, an 8x8x8 torus) are split for GOMAXPROCS goroutines (a program run into four partitions a goroutine, claimed as they come) and run in parallel only while measured stretches of cycles show it cheaper than serial, not tried while other processes hold the cores, and a split network whose cycles stay serial runs as one partition until they would go parallel (the JSON's workers says when the split was used), else 1; the points of a sweep running at once share the cores", rule: intIn(0, 256)},
	{key: "run.watchdog_cycles", doc: "deadlock watchdog (torus, mesh, min, irregular): a run with flits in the network and none moved for this many cycles stops, prints the wait-for cycle and exits with status 3; 0 = off", rule: intIn(0, maxCycles)},
	{key: "run.memory_limit", doc: "MiB a run may take: a network whose estimated state is larger is refused before it is built (0 = the memory the machine has available, MemAvailable)", rule: intIn(0, 1<<30)},

	{key: "faults", doc: "links that go down during the run, each PATH@CYCLE with PATH the waveform path of one of the link's output ports (torus, mesh: top.net.r(1)(0).out(1); fattree: top.leaf(2).out(5)); the link dies both ways; routing avoids it where a route remains and the run reports the packets left with none (packets_unreachable, unreachable); fattree, torus and mesh, point-to-point traffic", rule: faultsRule()},
}

type spec struct {
	key  string
	doc  string
	rule rule

	// filled in by init from the Config type
	index []int
	typ   reflect.Type
	kind  reflect.Kind
}

// rule is a key's allowed values: the text shown to users and the check
// (returns "" or a message without the key). cross marks rules that read
// other keys; Set skips those, Validate runs them.
type rule struct {
	allowed string
	// allowedFunc, when set, is allowed worked out when asked (a list
	// another package registers into).
	allowedFunc func() string
	cross       bool
	check       func(c *Config, v reflect.Value) string
	// with, when set, is a check against other keys that Validate runs
	// after check, and Set does not (a rule that is not cross otherwise).
	with func(c *Config, v reflect.Value) string
}

var (
	specByKey = map[string]*spec{}
	// sections maps a dotted section ("" = top level) to its child names in
	// field order; built from the yaml tags of Config.
	sections = map[string][]string{}
	leaves   = map[string]reflect.StructField{}
	indexes  = map[string][]int{}
)

func init() {
	walkType(reflect.TypeOf(Config{}), "", nil)
	for i := range table {
		s := &table[i]
		f, ok := leaves[s.key]
		if !ok {
			panic("config: key table names " + s.key + ", which is no field of Config")
		}
		s.index, s.typ, s.kind = indexes[s.key], f.Type, f.Type.Kind()
		specByKey[s.key] = s
	}
}

func walkType(t reflect.Type, prefix string, index []int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := yamlName(f)
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		key := join(prefix, name)
		idx := append(append([]int(nil), index...), i)
		sections[prefix] = append(sections[prefix], name)
		if f.Type.Kind() == reflect.Struct {
			walkType(f.Type, key, idx)
			continue
		}
		leaves[key], indexes[key] = f, idx
	}
}

// Keys returns the config reference, in a fixed order (the order of docs/architecture.md §8):
// every key with its type, default (from Default()), allowed values and a
// description. It is generated from the same table that drives Validate and
// Set.
func Keys() []KeyInfo {
	d := reflect.ValueOf(Default())
	out := make([]KeyInfo, len(table))
	for i, s := range table {
		allowed := s.rule.allowed
		if s.rule.allowedFunc != nil {
			allowed = s.rule.allowedFunc()
		}
		out[i] = KeyInfo{
			Key:     s.key,
			Type:    shortType(s.typ),
			Default: format(d.FieldByIndex(s.index)),
			Allowed: allowed,
			Doc:     s.doc,
		}
	}
	return out
}

// Reference renders Keys() as a Markdown table for the README.
func Reference() string {
	var b strings.Builder
	b.WriteString("| key | type | default | allowed | description |\n|---|---|---|---|---|\n")
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, k := range Keys() {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", k.Key, k.Type, esc(k.Default), esc(k.Allowed), esc(k.Doc))
	}
	return b.String()
}

func shortType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.Bool:
		return "bool"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "list of string"
		}
		return "list of int"
	}
	return t.String()
}

// Validate checks every key against its rule, in Keys() order, and returns
// the first violation as an *Error naming the key (one line).
func (c Config) Validate() error {
	v := reflect.ValueOf(&c).Elem()
	for i := range table {
		s := &table[i]
		fv := v.FieldByIndex(s.index)
		msg := s.rule.check(&c, fv)
		if msg == "" && s.rule.with != nil {
			msg = s.rule.with(&c, fv)
		}
		if msg != "" {
			return &Error{Key: s.key, Msg: msg}
		}
	}
	return nil
}

func anyString() rule {
	return rule{allowed: "any string", check: func(*Config, reflect.Value) string { return "" }}
}

func anyInt() rule {
	return rule{allowed: "any 64-bit integer", check: func(*Config, reflect.Value) string { return "" }}
}

func intIn(lo, hi int64) rule {
	allowed := fmt.Sprintf("%d..%d", lo, hi)
	return rule{allowed: allowed, check: func(_ *Config, v reflect.Value) string {
		if x := v.Int(); x < lo || x > hi {
			return fmt.Sprintf("%d is out of range; allowed %s", x, allowed)
		}
		return ""
	}}
}

// floatIn allows lo..hi, or (lo, hi] when loOpen. NaN and ±Inf never pass.
func floatIn(lo, hi float64, loOpen bool) rule {
	bound := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	allowed := bound(lo) + ".." + bound(hi)
	if loOpen {
		allowed = "(" + bound(lo) + ", " + bound(hi) + "]"
	}
	return rule{allowed: allowed, check: func(_ *Config, v reflect.Value) string {
		x := v.Float()
		ok := x >= lo && x <= hi
		if loOpen {
			ok = x > lo && x <= hi
		}
		if !ok {
			return fmt.Sprintf("%s is out of range; allowed %s", fmtFloat(x), allowed)
		}
		return ""
	}}
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func oneOf(values ...string) rule {
	allowed := strings.Join(values, " | ")
	return rule{allowed: allowed, check: func(_ *Config, v reflect.Value) string {
		for _, a := range values {
			if v.String() == a {
				return ""
			}
		}
		return fmt.Sprintf("%q is not allowed; allowed: %s", clip(v.String()), allowed)
	}}
}

func intOneOf(values ...int64) rule {
	parts := make([]string, len(values))
	for i, x := range values {
		parts[i] = strconv.FormatInt(x, 10)
	}
	allowed := strings.Join(parts, " | ")
	return rule{allowed: allowed, check: func(_ *Config, v reflect.Value) string {
		for _, a := range values {
			if v.Int() == a {
				return ""
			}
		}
		return fmt.Sprintf("%d is not allowed; allowed: %s", v.Int(), allowed)
	}}
}

// routingNames are router.routing's allowed values: every function of the
// routing registry, whichever networks it serves (a network refuses one
// it is not served by when it is built).
func routingNames() []string {
	names := []string{Auto}
	for _, e := range routing.Entries() {
		names = append(names, e.Name)
	}
	return names
}

// routingDoc is router.routing's description from the routing registry:
// the functions grouped by the networks they serve, each with its doc.
func routingDoc() string {
	var groups []string
	entries := routing.Entries()
	for i := 0; i < len(entries); {
		kinds := entries[i].Kinds
		var fs []string
		for ; i < len(entries) && slices.Equal(entries[i].Kinds, kinds); i++ {
			fs = append(fs, fmt.Sprintf("%s (%s)", entries[i].Name, entries[i].Doc))
		}
		var on []string
		for _, k := range kinds {
			on = append(on, k.String())
		}
		groups = append(groups, "for "+strings.Join(on, ", ")+": "+strings.Join(fs, ", "))
	}
	return "routing function; auto = the topology's own (dor on torus and mesh, updown on min and irregular); " + strings.Join(groups, "; ")
}

// inputsRule: 1..network.ports (a 2x8 switch has 2 active inputs).
func inputsRule() rule {
	return rule{allowed: "1..network.ports", cross: true, check: func(c *Config, v reflect.Value) string {
		if x := v.Int(); x < 1 || x > int64(c.Network.Ports) {
			return fmt.Sprintf("%d is out of range; allowed 1..%d (network.ports)", x, c.Network.Ports)
		}
		return ""
	}}
}

// nicModelRule: none | overhead | msglayer; msglayer only for a program
// run on a torus or mesh.
func nicModelRule() rule {
	r := oneOf(NICNone, NICOverhead, NICMsgLayer)
	r.with = func(c *Config, v reflect.Value) string {
		if v.String() != NICMsgLayer {
			return ""
		}
		// Which topologies have the message layer is theirs to say
		// (experiment.Check).
		if c.Traffic.Pattern != PatternProgram {
			return fmt.Sprintf("msglayer endpoints run programs (traffic.pattern program), not traffic.pattern %s; allowed for it: none | overhead", c.Traffic.Pattern)
		}
		return ""
	}
	return r
}

// midsizeRule: msglayer.eager_max_bytes..2^24.
func midsizeRule() rule {
	allowed := fmt.Sprintf("msglayer.eager_max_bytes..%d", 1<<24)
	return rule{allowed: allowed, cross: true, check: func(c *Config, v reflect.Value) string {
		if x := v.Int(); x < int64(c.MsgLayer.EagerMaxBytes) || x > 1<<24 {
			return fmt.Sprintf("%d is out of range; allowed %d..%d (msglayer.eager_max_bytes..%d)", x, c.MsgLayer.EagerMaxBytes, 1<<24, 1<<24)
		}
		return ""
	}}
}

// highPriorityRule: true needs the high-priority VC (router.routing bgl,
// router.vcs 4 or more) when the message layer runs.
func highPriorityRule() rule {
	return rule{allowed: "true | false (true: router.routing bgl with router.vcs at least 4)", cross: true, check: func(c *Config, v reflect.Value) string {
		if v.Bool() && c.NIC.Model == NICMsgLayer && (c.Router.Routing != "bgl" || c.Router.VCs < 4) {
			return fmt.Sprintf("true needs the high-priority VC 3 of router.routing bgl with router.vcs at least 4 (here %s, %d VCs); allowed: false", c.Router.Routing, c.Router.VCs)
		}
		return ""
	}}
}

// faultsRule: every entry is PATH@CYCLE with CYCLE inside the run, each
// output port named once, with point-to-point traffic. Whether the
// topology can fail links is for it to say (experiment.Check), whether
// PATH names a link for the network when it is built, and so whether two
// entries name one link by its two ends (its Fail).
func faultsRule() rule {
	allowed := "a list of PATH@CYCLE (fattree, torus, mesh; point-to-point traffic)"
	return rule{allowed: allowed, cross: true, check: func(c *Config, v reflect.Value) string {
		if v.Len() == 0 {
			return ""
		}
		list := make([]string, v.Len())
		for i := range list {
			list[i] = v.Index(i).String()
		}
		links, err := fault.ParseAll(list)
		if err != nil {
			return err.Error()
		}
		// run.max_cycles comes earlier in the table, so Validate has
		// checked it by now: the range below is a real one.
		for i, f := range links {
			if f.At >= uint64(c.Run.MaxCycles) {
				return fmt.Sprintf("entry %d (%s): cycle %d is past the run; allowed 0..%d (run.max_cycles-1)", i+1, f, f.At, c.Run.MaxCycles-1)
			}
		}
		if err := fault.Repeated(links); err != nil {
			return err.Error()
		}
		switch c.Traffic.Pattern {
		case PatternMulticast, PatternReduce, PatternAllreduce, PatternBarrier, PatternBroadcast, PatternNAMD:
			return fmt.Sprintf("link faults reroute point-to-point traffic only; traffic.pattern %s is a collective", c.Traffic.Pattern)
		}
		return ""
	}}
}

// dimsRule: 1..maxLen entries, each lo..hi, at most maxNodes nodes in all
// (64x32x32 = 65536 passes); a topology may ask for fewer entries
// (experiment.Check).
func dimsRule(maxLen int, lo, hi int64) rule {
	allowed := fmt.Sprintf("1..%d entries, each %d..%d (1 too for a mesh under traffic.pattern dsm), at most %d nodes; exactly 2 entries for ibmesh", maxLen, lo, hi, maxNodes)
	return rule{allowed: allowed, cross: true, check: func(c *Config, v reflect.Value) string {
		n := v.Len()
		if n < 1 || n > maxLen {
			return fmt.Sprintf("%s has %d entries; allowed %s", clip(format(v)), n, allowed)
		}
		prod := int64(1)
		for i := 0; i < n; i++ {
			x := v.Index(i).Int()
			if x == 1 && c.Network.Topology == TopologyMesh && c.Traffic.Pattern == PatternDSM {
				continue // a DSM machine's speedup baseline: one processor on a 1-node mesh
			}
			if x < lo || x > hi {
				return fmt.Sprintf("entry %d is %d, out of range; allowed %s", i+1, x, allowed)
			}
			prod *= x
		}
		if prod > maxNodes {
			return fmt.Sprintf("%s has %d nodes; allowed at most %d", clip(format(v)), prod, maxNodes)
		}
		return ""
	}}
}

// maxCyclesRule: run.max_cycles ≥ warm-up + measurement window.
func maxCyclesRule() rule {
	allowed := fmt.Sprintf("run.warmup_cycles+run.measure_cycles..%d", int64(maxRun))
	return rule{allowed: allowed, cross: true, check: func(c *Config, v reflect.Value) string {
		lo := c.Run.WarmupCycles + c.Run.MeasureCycles // both already checked ≤ maxCycles
		if x := v.Int(); x < lo || x > maxRun {
			return fmt.Sprintf("%d is out of range; allowed %d..%d (run.warmup_cycles+run.measure_cycles..%d)", x, lo, int64(maxRun), int64(maxRun))
		}
		return ""
	}}
}

// DSMPrograms lists the programs of traffic.pattern dsm (the dsmprog
// registry); experiment sets it.
var DSMPrograms func() []string

// programRule is traffic.program's: under traffic.pattern dsm one of
// DSMPrograms, else one of the message programs r allows.
func programRule(r rule) rule {
	msg := r.check
	dsm := func(v reflect.Value) string {
		names := DSMPrograms()
		if slices.Contains(names, v.String()) {
			return ""
		}
		return fmt.Sprintf("%q is not a DSM program; allowed with traffic.pattern dsm: %s", clip(v.String()), strings.Join(names, " | "))
	}
	r.check = func(c *Config, v reflect.Value) string {
		if DSMPrograms != nil && dsm(v) == "" {
			return "" // which list applies is the pattern's (with)
		}
		return msg(c, v)
	}
	r.with = func(c *Config, v reflect.Value) string {
		if c.Traffic.Pattern == PatternDSM && DSMPrograms != nil {
			if v.String() == Default().Traffic.Program {
				return "" // left at its default: the DSM run's own default program
			}
			return dsm(v)
		}
		return msg(c, v)
	}
	allowed := r.allowed
	r.allowedFunc = func() string {
		if DSMPrograms == nil {
			return allowed
		}
		return allowed + "; with traffic.pattern dsm: " + strings.Join(DSMPrograms(), " | ")
	}
	return r
}

// TopologyNames lists the networks that can be built, in the order they
// were registered: the registry's (package experiment sets it). Nil, as in
// this package's own tests before they set it: any name is accepted here
// and left to the registry.
var TopologyNames func() []string

// topologyRule: one of TopologyNames.
func topologyRule() rule {
	r := rule{check: func(_ *Config, v reflect.Value) string {
		if TopologyNames == nil {
			return ""
		}
		names := TopologyNames()
		for _, a := range names {
			if v.String() == a {
				return ""
			}
		}
		return fmt.Sprintf("%q is not allowed; allowed: %s", clip(v.String()), strings.Join(names, " | "))
	}}
	r.allowedFunc = func() string {
		if TopologyNames == nil {
			return "a registered network"
		}
		return strings.Join(TopologyNames(), " | ")
	}
	return r
}

// clip shortens a value quoted in a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 37
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
