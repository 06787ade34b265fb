package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/config"
)

// The keys of the network and router sections the topologies' Builds read
// (network.topology aside); their Reads add what their kinds of run read
// of the other sections. A key a run does not read that is set away from
// its default is bad input: a torus given network.nodes would otherwise
// run at its default network.dims, a load run given traffic.program would
// ignore it, and the user would read the results of a run they did not
// ask for.
var (
	switchKeys = []string{"network.ports", "network.inputs", "network.organization", "network.xp_buffer_packets",
		"network.credit_mode", "network.fanout_splitting", "network.iterations", "network.combine_units"}
	torusKeys = []string{"network.dims",
		"router.switching", "router.vcs", "router.vc_buffer_flits", "router.routing", "router.escape"}
	ibMeshKeys = []string{"network.dims", "network.vls", "network.vl_policy",
		"router.switching", "router.vc_buffer_flits"}
	bglTreeKeys = []string{"network.nodes", "router.vc_buffer_flits"}
	minKeys     = []string{"network.ports", "network.nodes", "network.min_kind",
		"router.switching", "router.vcs", "router.vc_buffer_flits", "router.routing"}
	irregularKeys = []string{"network.irregular_file", "network.switches", "network.degree",
		"router.switching", "router.vcs", "router.vc_buffer_flits", "router.routing"}
)

// always is a topology's Reads when it reads the same keys of every
// config.
func always(keys []string) func(config.Config) []string {
	return func(config.Config) []string { return keys }
}

// irregularReads: a network read from a file has the file's switches and
// cables, so network.switches and network.degree only shape a random one.
func irregularReads(cfg config.Config) []string {
	if cfg.Network.IrregularFile == config.IrregularRandom {
		return irregularKeys
	}
	return slices.DeleteFunc(slices.Clone(irregularKeys), func(k string) bool {
		return k == "network.switches" || k == "network.degree"
	})
}

// shapeSections are the config sections whose keys depend on the topology.
var shapeSections = []string{"network.", "router."}

// alwaysRead are the keys every run reads, or that choose what runs; a
// topology's Reads lists the others it reads of cfg.
var alwaysRead = []string{"name", "seed", "clock_mhz", "network.topology", "link.gbps", "link.delay_ns",
	"switch.delay_ns", "traffic.pattern", "run.max_cycles", "run.workers", "run.memory_limit"}

// loadRunKeys are a load run's settings. A run to completion (a
// collective, a program, a multicast on the InfiniBand mesh) has no load
// and no window, and leaves them be rather than refusing them, so that one
// config file serves a network's load runs and its collectives: they
// cannot be mistaken for a setting of the collective.
var loadRunKeys = []string{"traffic.load", "traffic.process", "run.warmup_cycles", "run.measure_cycles"}

// checkUnread refuses a key that t does not read of cfg and that cfg sets
// away from its default: one line naming the key, what was run and, for
// the network and router sections, what the topology reads instead.
func checkUnread(cfg config.Config, t Topology) error {
	read := t.Reads(cfg)
	toCompletion := !slices.Contains(read, "run.measure_cycles")
	for _, k := range config.Keys() {
		if slices.Contains(alwaysRead, k.Key) || slices.Contains(read, k.Key) || toCompletion && slices.Contains(loadRunKeys, k.Key) {
			continue
		}
		v, err := cfg.Get(k.Key)
		if err != nil || v == k.Default {
			continue
		}
		// network.inputs follows network.ports until it is set: it is
		// set away from the ports only when it differs from them.
		if k.Key == "network.inputs" && cfg.Network.Inputs == cfg.Network.Ports {
			continue
		}
		section := sectionOf(k.Key)
		if section == "" {
			return fmt.Errorf("%s: %s has no effect on %s on network.topology %s%s; leave it at its default (%s)",
				k.Key, v, runKind(cfg), t.Name, readWhen(k.Key), k.Default)
		}
		var reads []string
		for _, r := range read {
			if strings.HasPrefix(r, section) {
				reads = append(reads, r)
			}
		}
		instead := "no " + strings.TrimSuffix(section, ".") + " key"
		if len(reads) > 0 {
			instead = strings.Join(reads, ", ")
		}
		return fmt.Errorf("%s: %s has no effect on network.topology %s, which reads %s; leave it at its default (%s) or pick a topology that reads it",
			k.Key, v, t.Name, instead, k.Default)
	}
	return nil
}

// runKind names what cfg runs, for a message: "a uniform load run", "a
// program run", "an allreduce".
func runKind(cfg config.Config) string {
	p := cfg.Traffic.Pattern
	switch {
	case p == config.PatternProgram:
		return "a program run (traffic.pattern program)"
	case p == config.PatternDSM:
		return "a DSM run (traffic.pattern dsm)"
	case IsCollective(p):
		return article(p) + " " + p
	}
	return article(p) + " " + p + " load run"
}

// article is "a" or "an" before word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeio", rune(word[0])) || strings.HasPrefix(word, "u") && !strings.HasPrefix(word, "uni") {
		return "an"
	}
	return "a"
}

// readWhen says when a key of a run section is read, where that helps.
func readWhen(key string) string {
	switch {
	case strings.HasPrefix(key, "msglayer."):
		return " (read with nic.model msglayer)"
	case key == "link.resend_buffer" || key == "link.retry_timeout":
		return " (read when link.ber > 0)"
	case key == "combine.float_mode":
		return " (read with combine.type float64)"
	case key == "traffic.program":
		return " (read with traffic.pattern program or dsm)"
	case key == "dsm.pointers":
		return " (read with dsm.directory limited-broadcast or limited-no-broadcast)"
	case strings.HasPrefix(key, "dsm."):
		return " (read with traffic.pattern dsm)"
	case key == "nic.send_packet_ns" || key == "nic.recv_packet_ns":
		return " (read by the NICs of a program run)"
	case key == "nic.send_overhead_ns" || key == "nic.recv_overhead_ns":
		return " (read by NICs: nic.model overhead, namd, software collectives, program runs)"
	case key == "traffic.colors":
		return " (read by torus and mesh broadcasts in deposit-bit lines: traffic.multicast hardware, or traffic.program deposit-broadcast)"
	case key == "traffic.multicast":
		return " (read by fat-tree multicasts and collectives, torus and mesh broadcasts, the InfiniBand mesh)"
	}
	return ""
}

// The keys of the run sections families of runs read, for the
// topologies' Reads.

// loadKeys: an open-loop load run (traffic.pattern uniform and the other
// point-to-point patterns; multicast with its fanout).
func loadKeys(cfg config.Config) []string {
	k := []string{"traffic.load", "traffic.process", "run.warmup_cycles", "run.measure_cycles", "packet.bytes"}
	if cfg.Traffic.Pattern == config.PatternMulticast {
		k = append(k, "traffic.fanout")
	}
	return k
}

// retryKeys: links that may have bit errors (Abilities.Retry).
func retryKeys(cfg config.Config) []string {
	if cfg.Link.BER > 0 {
		return []string{"link.ber", "link.resend_buffer", "link.retry_timeout"}
	}
	return []string{"link.ber"}
}

// reduceKeys: a reduction's arithmetic (reduce, allreduce).
func reduceKeys(cfg config.Config) []string {
	p := cfg.Traffic.Pattern
	if p != config.PatternReduce && p != config.PatternAllreduce {
		return nil
	}
	k := []string{"combine.op", "combine.type"}
	if cfg.Combine.Type == "float64" {
		k = append(k, "combine.float_mode")
	}
	return k
}

// nicKeys: NICs with their overheads (nic.model overhead, namd, software
// collectives).
var nicKeys = []string{"nic.model", "nic.send_overhead_ns", "nic.recv_overhead_ns", "traffic.message_bytes"}

// programKeys: a program run on a network of router blocks (a broadcast on
// the torus is one): its kernel, its messages, and the NICs or the message
// layer it runs on.
func programKeys(cfg config.Config) []string {
	k := []string{"traffic.message_bytes", "packet.bytes", "nic.model"}
	if cfg.Traffic.Pattern == config.PatternProgram {
		k = append(k, "traffic.program")
		switch cfg.Traffic.Program {
		case "multi-multicast":
			k = append(k, "traffic.sources", "traffic.fanout")
		case "deposit-broadcast":
			k = append(k, "traffic.colors")
		}
	}
	if cfg.NIC.Model == config.NICMsgLayer {
		return append(k, "msglayer.protocol", "msglayer.eager_max_bytes", "msglayer.midsize_max_bytes", "msglayer.leads", "msglayer.high_priority_lead")
	}
	return append(k, "nic.send_overhead_ns", "nic.recv_overhead_ns", "nic.send_packet_ns", "nic.recv_packet_ns", "router.injection_fifos")
}

// RoutedReads is the Reads of a topology of router blocks whose shape and
// routing keys are shape: with flits, the watchdog, and the keys of its
// load or program run (RoutedLoad, RoutedProgram).
func RoutedReads(cfg config.Config, shape []string) []string { return routedKeys(cfg, shape) }

// routedKeys: what every run on a network of router blocks reads besides
// its shape and routing: flits, the watchdog, and load or program keys.
func routedKeys(cfg config.Config, shape []string) []string {
	k := append(slices.Clone(shape), "packet.flit_bytes", "run.watchdog_cycles")
	switch cfg.Traffic.Pattern {
	case config.PatternProgram:
		return append(k, programKeys(cfg)...)
	case config.PatternBroadcast: // a program of deposit-bit lines or messages
		return append(append(k, programKeys(cfg)...), "traffic.multicast")
	}
	return append(append(k, loadKeys(cfg)...), "faults")
}

func sectionOf(key string) string {
	for _, s := range shapeSections {
		if strings.HasPrefix(key, s) {
			return s
		}
	}
	return ""
}

// switchReads: a single switch's shape; its combine units and arithmetic
// for a collective, the load otherwise.
func switchReads(cfg config.Config) []string {
	k := slices.DeleteFunc(slices.Clone(switchKeys), func(k string) bool { return k == "network.combine_units" })
	if IsCollective(cfg.Traffic.Pattern) {
		k = append(k, "network.combine_units", "combine.elements_per_cycle", "traffic.message_bytes", "packet.bytes")
		return append(k, reduceKeys(cfg)...)
	}
	return append(k, loadKeys(cfg)...)
}

// fatTreeReads: the fat-tree's shape and links; then what its kind of run
// reads: NICs for namd and multicast through them, a software reduction,
// a collective in the combine units, or an open-loop load.
func fatTreeReads(cfg config.Config) []string {
	k := append([]string{"network.ports", "network.organization", "network.xp_buffer_packets", "network.credit_mode",
		"network.fanout_splitting", "network.iterations", "network.nodes"}, retryKeys(cfg)...)
	pat, soft := cfg.Traffic.Pattern, cfg.Traffic.Multicast == config.MulticastSoftware
	switch {
	case IsNICMulticast(cfg):
		k = append(append(k, loadKeys(cfg)...), nicKeys...)
		k = append(k, "network.tree_builder", "traffic.fanout", "traffic.groups", "traffic.multicast")
		if soft {
			k = append(k, "traffic.software")
		}
	case soft && pat == config.PatternReduce:
		k = append(append(append(k, nicKeys...), reduceKeys(cfg)...), "traffic.multicast", "packet.bytes")
	case IsCollective(pat):
		k = append(append(k, reduceKeys(cfg)...), "network.combine_units", "network.tree_builder",
			"combine.elements_per_cycle", "traffic.message_bytes", "traffic.multicast", "packet.bytes")
	case cfg.NIC.Model == config.NICOverhead:
		k = append(append(k, loadKeys(cfg)...), nicKeys...)
		k = append(k, "faults") // refused by the build, saying why
	default:
		k = append(append(k, loadKeys(cfg)...), "nic.model", "faults")
		if pat == config.PatternMulticast {
			k = append(k, "network.tree_builder", "traffic.groups", "traffic.multicast")
		}
	}
	return k
}

// routerShape is a network of router blocks' shape keys less those its
// switching or wrap make moot: wormhole VCs hold one flit, and only a
// torus escapes its rings.
func routerShape(cfg config.Config, keys []string) []string {
	return slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
		return k == "router.vc_buffer_flits" && cfg.Router.Switching == "wormhole" ||
			k == "router.escape" && cfg.Network.Topology != config.TopologyTorus
	})
}

// torusReads: a torus or mesh; its links may retry.
func torusReads(cfg config.Config) []string {
	shape := routerShape(cfg, torusKeys)
	switch cfg.Traffic.Pattern {
	case config.PatternBroadcast:
		k := routedKeys(cfg, shape)
		if cfg.Traffic.Multicast == config.MulticastHardware {
			k = append(k, "traffic.colors")
		}
		return append(k, retryKeys(cfg)...)
	case config.PatternBarrier, config.PatternAllreduce: // programs of messages (collectives.go)
		k := append(slices.Clone(shape), "packet.flit_bytes", "run.watchdog_cycles")
		return append(append(k, programKeys(cfg)...), retryKeys(cfg)...)
	}
	return append(routedKeys(cfg, shape), retryKeys(cfg)...)
}

// ibMeshReads: the InfiniBand mesh's one run, a multicast to completion.
func ibMeshReads(cfg config.Config) []string {
	k := append(routerShape(cfg, ibMeshKeys), retryKeys(cfg)...)
	// traffic.software is checked whatever the multicast (its one
	// software scheme is sequential), so that a config can name it for a
	// --set traffic.multicast=software.
	return append(k, "packet.bytes", "packet.flit_bytes", "traffic.message_bytes", "traffic.multicast", "traffic.software",
		"traffic.sources", "traffic.group_percent")
}

// bglTreeReads: the collective tree's one collective, with I/O traffic
// alongside when asked.
func bglTreeReads(cfg config.Config) []string {
	k := append(append(slices.Clone(bglTreeKeys), retryKeys(cfg)...), reduceKeys(cfg)...)
	k = append(k, "packet.flit_bytes", "traffic.message_bytes", "traffic.io_load")
	if cfg.Traffic.IOLoad > 0 {
		k = append(k, "traffic.process")
	}
	return k
}

// minReads and irregularRunReads: the switch-based networks.
func minReads(cfg config.Config) []string { return routedKeys(cfg, routerShape(cfg, minKeys)) }

func irregularRunReads(cfg config.Config) []string {
	return routedKeys(cfg, routerShape(cfg, irregularReads(cfg)))
}
