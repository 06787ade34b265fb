package experiment

import (
	"slices"
	"strconv"
)

// fatTreeDemo is the fat-tree's part of the tour, as hwcoll demo has run
// it from the start (the same configs, so the same numbers): a short load
// sweep with its plots, hardware vs software multicast on the NAMD
// benchmark (the OQ-router paper §4), one reduction through the combine
// units (§3.2, Fig. 16) and a trace of one leaf switch.
var fatTreeDemo = &Demo{
	Section: demoOQ,
	Order:   11,
	Parts: []DemoPart{
		{
			// Short windows keep the sweep to a fraction of a second.
			Title: "Fat-tree sweep: 256 nodes, 32-port switches, uniform traffic (warm-up 3000 + window 10000 cycles)",
			Base: []string{"name=fattree-256n-32p", "network.nodes=256", "network.ports=32",
				"traffic.pattern=uniform", "run.warmup_cycles=3000", "run.measure_cycles=10000"},
			Loads: []float64{0.3, 0.6, 0.9},
		},
		{
			// 16 of the 256 nodes multicast 256-byte messages to random
			// groups of mean fanout 16 through their NICs (1300 ns
			// overheads), in hardware and with each software algorithm.
			Title: "Hardware vs software multicast: NAMD synthetic, 16 of 256 nodes multicast 256 B to mean fanout 16 (32-port fat-tree, NICs with 1300 ns overheads, load 0.005; §4)",
			Base: []string{"name=namd-256n-32p", "network.nodes=256", "network.ports=32",
				"traffic.pattern=namd", "traffic.fanout=16", "traffic.load=0.005",
				"run.warmup_cycles=5000", "run.measure_cycles=100000"},
			RowHeader: "multicast",
			Runs: []DemoRun{
				{Label: "hardware", Set: []string{"traffic.multicast=hardware"}},
				{Label: "software (binomial)", Set: []string{"traffic.multicast=software", "traffic.software=binomial"}},
				{Label: "software (sequential)", Set: []string{"traffic.multicast=software", "traffic.software=sequential"}},
			},
			Columns: []DemoColumn{
				DemoCol("avg latency", true, func(r Result) string { return DemoNum(r.LatencyAvgCycles) + " cyc" }),
				DemoCol("", true, func(r Result) string { return DemoNum(r.LatencyAvgNS) + " ns" }),
				DemoCol("p99 latency", true, func(r Result) string { return DemoNum(r.LatencyP99Cycles) + " cyc" }),
				DemoCol("multicasts", true, func(r Result) string { return strconv.FormatUint(r.MulticastsCompleted, 10) }),
				DemoStable,
			},
		},
		{
			// One 4 KiB int64 sum to node 0: a switch with one combine
			// unit stalls on each large packet, the hierarchical tree of
			// five does not (§3.2, Fig. 16).
			Title: "One reduction on the 256-node fat-tree: 4 KiB int64 sum to node 0 (§3.2, Fig. 16)",
			Base: []string{"name=reduce-4KiB", "network.nodes=256", "traffic.pattern=reduce",
				"traffic.message_bytes=4096"},
			RowHeader: "switches",
			Runs: []DemoRun{
				{Label: "8-port", Set: []string{"network.ports=8", "network.combine_units=1"}},
				{Label: "32-port", Set: []string{"network.ports=32", "network.combine_units=1"}},
				{Label: "32-port", Set: []string{"network.ports=32", "network.combine_units=5"}},
			},
			Columns: []DemoColumn{
				demoInt("combine units", func(r Result) int { return r.CombineUnits }),
				demoInt("levels", func(r Result) int { return r.Levels }),
				DemoCol("completion", true, func(r Result) string { return DemoGrouped(r.CompletionCycles) + " cyc" }),
				DemoCol("", true, func(r Result) string { return DemoNum(r.CompletionNS) + " ns" }),
			},
		},
		{
			Title: "Trace of one leaf switch: fat-tree of 64 nodes, 8-port switches, load 0.5",
			Base: []string{"name=fattree-64n-8p", "network.nodes=64", "network.ports=8",
				"traffic.pattern=uniform", "traffic.load=0.5", "run.warmup_cycles=1000", "run.measure_cycles=3000"},
			RowHeader: "fat-tree",
			Runs: []DemoRun{{
				Label: "64 nodes, 8-port",
				Trace: &DemoTrace{File: "leaf0.vcd", Glob: "top.leaf(0)*"},
			}},
			Columns: slices.Concat(DemoLoad[1:], []DemoColumn{DemoStable}),
		},
	},
}
