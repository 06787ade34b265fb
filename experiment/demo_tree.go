package experiment

import "slices"

// treeDemo is the BlueGene/L collective tree's part of the tour: the BG/L
// MPI paper's one number for it (§2), "a hardware latency of
// approximately 2 microseconds for a 64k-node system", which one 256-byte
// allreduce (one tree packet up to the root and back down) measures,
// beside smaller trees to show how it grows: by one hop up and one down a
// level, on top of one packet's time on a link.
var treeDemo = &Demo{
	Section: "The BG/L MPI paper: the BlueGene/L collective tree",
	Order:   20,
	Parts: []DemoPart{{
		Title:  "One 256-byte int64 allreduce (one tree packet) on 64, 4,096 and 65,536 nodes, combined in every router's ALU (§2)",
		Config: "bgl-tree.yaml",
		Base: []string{"name=bgl-tree", "seed=1", "clock_mhz=700", "network.nodes=65536",
			"link.gbps=2.8", "link.delay_ns=10", "switch.delay_ns=30", "router.vc_buffer_flits=16",
			"packet.flit_bytes=32", "traffic.pattern=allreduce", "traffic.message_bytes=256",
			"traffic.io_load=0", "combine.op=sum", "combine.type=int64", "run.max_cycles=10000000"},
		RowHeader: "tree",
		Runs: []DemoRun{
			{Label: "64 nodes", Set: []string{"network.nodes=64"}},
			{Label: "4,096 nodes", Set: []string{"network.nodes=4096"}},
			{Label: "65,536 nodes", Set: []string{"network.nodes=65536"}, Paper: "≈2 µs"},
		},
		Columns: slices.Concat([]DemoColumn{demoInt("levels", func(r Result) int { return r.Levels })},
			DemoCompletion, []DemoColumn{DemoPaper("the paper"), DemoWall}),
		Note: "Each level adds 56 cycles (a hop up and a hop down, 30 ns of router and 10 ns of wire each) to one packet's 520 cycles on a link: the whole machine's 17 levels take 1,439 cycles, 2.06 µs at 700 MHz.",
	}},
}
