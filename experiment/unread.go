package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/config"
)

// The keys of the network and router sections each topology's Build reads
// (network.topology aside). A key of those sections that the topology does
// not read and that is set away from its default is bad input: a torus
// given network.nodes would otherwise run at its default network.dims, and
// the user would read the results of a network they did not ask for.
var (
	switchKeys = []string{"network.ports", "network.inputs", "network.organization", "network.xp_buffer_packets",
		"network.credit_mode", "network.fanout_splitting", "network.iterations", "network.combine_units"}
	fatTreeKeys = []string{"network.ports", "network.organization", "network.xp_buffer_packets", "network.credit_mode",
		"network.fanout_splitting", "network.iterations", "network.combine_units", "network.nodes", "network.tree_builder"}
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

// checkUnread refuses a key of the network or router section that t does
// not read and that cfg sets away from its default: one line naming the
// key and what the topology reads instead.
func checkUnread(cfg config.Config, t Topology) error {
	read := t.Reads(cfg)
	for _, k := range config.Keys() {
		section := sectionOf(k.Key)
		if section == "" || k.Key == "network.topology" || slices.Contains(read, k.Key) {
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

func sectionOf(key string) string {
	for _, s := range shapeSections {
		if strings.HasPrefix(key, s) {
			return s
		}
	}
	return ""
}
