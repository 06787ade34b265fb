package experiment

import (
	"slices"

	"github.com/hwcoll/hwcoll/config"
)

// demoWORMulSim is the tour's section of the WORMulSim paper: programs on
// the mesh's NICs (programsDemo), and its multistage and irregular
// networks at one load (switchedDemos).
const demoWORMulSim = "The WORMulSim paper: programs on a mesh, a MIN and an irregular network"

// demoIndirect is the one table the MIN and the irregular network share.
const demoIndirect = "An omega MIN and an irregular network, uniform traffic at load 0.3, up*/down* routing (§3.3–3.4)"

// demoIndirectColumns are that table's columns.
var demoIndirectColumns = slices.Concat(DemoLoad, []DemoColumn{DemoStable, DemoWall})

// switchedDemos are the parts of the networks of router blocks that
// topology_switched.go registers in one loop.
var switchedDemos = map[string]*Demo{
	config.TopologyMIN: {
		Section: demoWORMulSim,
		Order:   51,
		Parts: []DemoPart{{
			Title:  demoIndirect,
			Config: "min-omega.yaml",
			Base: []string{"name=min-omega", "seed=1", "network.min_kind=omega", "network.ports=2",
				"network.nodes=64", "router.switching=vct", "router.vcs=2", "router.vc_buffer_flits=32",
				"router.routing=updown", "packet.bytes=256", "packet.flit_bytes=32",
				"traffic.pattern=uniform", "traffic.process=bernoulli", "traffic.load=0.3",
				"run.warmup_cycles=5000", "run.measure_cycles=20000", "run.max_cycles=60000"},
			RowHeader: "network",
			Runs:      []DemoRun{{Label: "omega MIN, 64 hosts, 6 stages of 2×2"}},
			Columns:   demoIndirectColumns,
		}},
	},
	config.TopologyIrreg: {
		Section: demoWORMulSim,
		Order:   52,
		Parts: []DemoPart{{
			Title:  demoIndirect,
			Config: "irregular.yaml",
			Base: []string{"name=irregular", "seed=1", "network.irregular_file=random", "network.switches=16",
				"network.degree=4", "router.switching=vct", "router.vcs=2", "router.vc_buffer_flits=32",
				"router.routing=updown", "packet.bytes=256", "packet.flit_bytes=32",
				"traffic.pattern=uniform", "traffic.process=bernoulli", "traffic.load=0.3",
				"run.warmup_cycles=5000", "run.measure_cycles=20000", "run.max_cycles=60000"},
			RowHeader: "network",
			Runs:      []DemoRun{{Label: "irregular, 16 switches of ≤4 cables"}},
			Columns:   demoIndirectColumns,
			Note:      "Each host joins its switch through an adapter (a 2-port router), as in the paper; up*/down* never turns up after down, so it needs no escape VC.",
		}},
	},
}
