package experiment

import (
	"slices"
	"strconv"
)

// demoOQ is the tour's section of the OQ-router paper: its single switch
// (switchDemo) and the fat-trees built of it (fatTreeDemo).
const demoOQ = "The OQ-router paper: the output-queued crosspoint switch and fat-trees of it"

// switchDemo is the switch's part of the tour: the OQ-router paper's
// opening argument (§1–2), that input queuing loses throughput to
// head-of-line blocking while the output-queued crosspoint switch keeps
// up, shown at one load near saturation.
var switchDemo = &Demo{
	Section: demoOQ,
	Order:   10,
	Parts: []DemoPart{{
		Title:  "One 8-port switch, uniform traffic at load 0.9: output-queued crosspoints vs input FIFOs (head-of-line blocking) vs virtual output queues (§1–2)",
		Config: "switch-uniform.yaml",
		Base: []string{"name=switch-uniform", "seed=1", "network.ports=8", "network.organization=oq-xp",
			"network.xp_buffer_packets=4", "network.credit_mode=min-free", "traffic.pattern=uniform",
			"traffic.process=bernoulli", "traffic.load=0.5", "run.warmup_cycles=10000",
			"run.measure_cycles=50000", "run.max_cycles=5000000"},
		Set:       []string{"traffic.load=0.9"},
		RowHeader: "organization",
		Runs: []DemoRun{
			{Label: "oq-xp", Set: []string{"network.organization=oq-xp"}},
			{Label: "iq-fifo", Set: []string{"network.organization=iq-fifo"}},
			{Label: "voq", Set: []string{"network.organization=voq"}},
		},
		Columns: slices.Concat(DemoLoad, []DemoColumn{DemoStable}),
		Note:    "iq-fifo accepts well below the offered load: a packet at the head of an input FIFO blocks the packets behind it (the classical limit is about 0.62 for 8 inputs, 2−√2 ≈ 0.586 for many).",
	}},
}

// demoCount is a column of a count, with thousands separators.
func demoCount(header string, n func(r Result) uint64) DemoColumn {
	return DemoCol(header, true, func(r Result) string { return DemoGrouped(n(r)) })
}

// demoInt is a column of a small number.
func demoInt(header string, n func(r Result) int) DemoColumn {
	return DemoCol(header, true, func(r Result) string { return strconv.Itoa(n(r)) })
}
