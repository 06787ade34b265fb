package experiment

import (
	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/multistage"
	"github.com/hwcoll/hwcoll/routing"
)

// Resolve is cfg with what it leaves to its topology resolved
// (Topology.Defaults: router.routing auto, router.vcs 0, router.escape
// auto, and defaults that topology cannot run), so that every topology
// runs with only network.topology set. Run, Check, Build and Unbuilt
// resolve; hwcoll config prints the resolved config. Resolving twice
// changes nothing.
func Resolve(cfg config.Config) config.Config {
	if t, ok := topologies[cfg.Network.Topology]; ok && t.Defaults != nil {
		t.Defaults(&cfg)
	}
	return cfg
}

// directDefaults: a torus or mesh routes in dimension order; bgl escapes
// by bubbles; the VCs are the fewest the routing needs, at least 2.
func directDefaults(cfg *config.Config) {
	if cfg.Router.Routing == config.Auto {
		cfg.Router.Routing = "dor"
	}
	if cfg.Router.Escape == config.Auto && cfg.Network.Topology == config.TopologyTorus { // a mesh has no rings to escape
		cfg.Router.Escape = "dateline"
		if cfg.Router.Routing == "bgl" {
			cfg.Router.Escape = "bubble"
		}
	}
	if cfg.Router.VCs == config.VCsAuto {
		cfg.Router.VCs = directVCs(*cfg)
	}
}

// directVCs is the fewest VCs, from 2, that cfg's routing function accepts
// on its network (2 if none does: the build then says why).
func directVCs(cfg config.Config) int {
	escape := cfg.Router.Escape
	if escape == config.Auto {
		escape = "dateline" // a mesh's: it has no rings, so none is used
	}
	spec, err := routing.Lookup(cfg.Router.Routing)
	esc, eerr := routing.ParseEscape(escape)
	if err != nil || eerr != nil || spec.Check == nil {
		return 2
	}
	for v := 2; v <= routing.MaxVCs; v++ {
		rn, err := routing.NewNet(cfg.Network.Dims, cfg.Network.Topology == config.TopologyTorus, esc, v)
		if err != nil {
			return 2
		}
		if spec.Check(rn) == nil {
			return v
		}
	}
	return 2
}

// switchedDefaults: MINs and irregular networks route up*/down* on 2 VCs.
func switchedDefaults(cfg *config.Config) {
	if cfg.Router.Routing == config.Auto {
		cfg.Router.Routing = "updown"
	}
	if cfg.Router.VCs == config.VCsAuto {
		cfg.Router.VCs = 2
	}
}

// minDefaults: a MIN of the default network.ports (8, too many for its
// switches) has the largest switches of its kind that keep network.nodes
// a power of their radix: 4×4 (2×2 for a bmin) at the default 256 hosts.
func minDefaults(cfg *config.Config) {
	switchedDefaults(cfg)
	def := config.Default().Network.Ports
	kind, err := multistage.ParseKind(cfg.Network.MinKind)
	if err != nil || cfg.Network.Ports != def || def <= multistage.MaxRadix(kind) {
		return
	}
	for k := multistage.MaxRadix(kind); k >= 2; k-- {
		if isPower(cfg.Network.Nodes, k) {
			cfg.Network.Ports = k
			if cfg.Network.Inputs == def {
				cfg.Network.Inputs = k // follows the ports, as when they are set
			}
			return
		}
	}
}

// isPower reports whether n is a power (≥ 1) of k.
func isPower(n, k int) bool {
	if n < k {
		return false
	}
	for n%k == 0 {
		n /= k
	}
	return n == 1
}

// patternDefault: a topology that cannot run the default uniform load
// runs its own kind instead (the InfiniBand mesh a multicast, the
// collective tree an allreduce).
func patternDefault(pattern string) func(cfg *config.Config) {
	return func(cfg *config.Config) {
		if cfg.Traffic.Pattern == config.Default().Traffic.Pattern {
			cfg.Traffic.Pattern = pattern
		}
	}
}
