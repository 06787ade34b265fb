package experiment

import (
	"slices"
	"strconv"

	"github.com/hwcoll/hwcoll/config"
)

// torusDemos are the direct networks' parts of the tour, by registration
// (torus.go registers both in one loop).
var torusDemos = map[string]*Demo{
	config.TopologyTorus: bglTorusDemo,
	config.TopologyMesh:  programsDemo,
}

// bglTorusDemo is the BlueGene/L torus's part: the BG/L MPI paper (§2, §4)
// says a packet can be deposited at every node it passes, so that a
// broadcast on a contiguous partition goes in lines rather than as
// point-to-point messages; it prints no number, so the table shows both on
// a midplane, with one router traced to watch the deposit-bit packets go
// through, land and leave again along the next dimension.
var bglTorusDemo = &Demo{
	Section: "The BG/L MPI paper: the BlueGene/L torus",
	Order:   30,
	Parts: []DemoPart{{
		Title:  "Broadcast from node 0 on a midplane (8×8×8 torus): deposit-bit lines (hardware) vs a binomial tree of messages (software) (§2, §4)",
		Config: "bgl-torus.yaml",
		Base: []string{"name=bgl-torus", "seed=1", "clock_mhz=700", "network.dims=64,32,32",
			"link.gbps=1.4", "link.delay_ns=10", "switch.delay_ns=60", "router.switching=vct",
			"router.vcs=4", "router.vc_buffer_flits=32", "router.routing=bgl", "router.escape=auto",
			"packet.bytes=256", "packet.flit_bytes=32", "traffic.pattern=uniform",
			"traffic.process=bernoulli", "traffic.load=0.05", "traffic.message_bytes=256",
			"traffic.multicast=hardware", "run.warmup_cycles=20000", "run.measure_cycles=80000",
		},
		// A 64 KiB binomial broadcast takes 11.8 M cycles: past the
		// default run.max_cycles, which a broadcast would derive from its
		// work; set, so that the table says what it ran.
		Set:       []string{"network.dims=8,8,8", "traffic.pattern=broadcast", "run.max_cycles=100000000"},
		RowHeader: "broadcast",
		Runs: []DemoRun{
			{
				Label: "deposit bit, 256 B",
				Set:   []string{"traffic.multicast=hardware", "traffic.message_bytes=256"},
				// Router (1,0,0) is on node 0's X line: the packet is
				// deposited there and passes on, and the node re-sends it
				// along Y.
				Trace: &DemoTrace{File: "bgl-torus-r100.vcd", Glob: "top.net.r(1,0,0).*"},
			},
			{Label: "binomial, 256 B", Set: []string{"traffic.multicast=software", "traffic.message_bytes=256"}, Versus: "deposit bit, 256 B"},
			{Label: "deposit bit, 64 KiB", Set: []string{"traffic.multicast=hardware", "traffic.message_bytes=65536"}},
			{Label: "binomial, 64 KiB", Set: []string{"traffic.multicast=software", "traffic.message_bytes=65536"}, Versus: "deposit bit, 64 KiB"},
		},
		Columns: slices.Concat([]DemoColumn{
			demoCount("packets sent", func(r Result) uint64 { return r.PacketsInjected }),
			demoCount("delivered", func(r Result) uint64 { return r.PacketsDelivered }),
		}, DemoCompletion, []DemoColumn{DemoVersus("vs deposit bit")}),
		Note: "A deposit-bit packet is sent once a line and lands at every node on it; the binomial tree sends one copy a node, each paying the NIC's 1300 ns overheads.",
	}},
}

// programsDemo is the mesh's part: the WORMulSim paper's Table 1, its
// simulator's run time for one-to-all and all-to-one on an 8×8 mesh, beside
// this model's wall time for the same programs (it prints no simulated
// times).
var programsDemo = &Demo{
	Section: demoWORMulSim,
	Order:   50,
	Parts: []DemoPart{{
		Title:  "One-to-all and all-to-one programs on the NICs of an 8×8 mesh (wormhole, dimension order), beside the run times of the paper's Table 1 (§7, a 99 MHz HP 735)",
		Config: "programs.yaml",
		Base: []string{"name=programs", "seed=1", "network.dims=8,8", "router.switching=wormhole",
			"router.vcs=2", "router.routing=dor", "packet.bytes=256", "packet.flit_bytes=32",
			"nic.send_overhead_ns=1300", "nic.recv_overhead_ns=1300", "nic.send_packet_ns=0",
			"nic.recv_packet_ns=0", "traffic.pattern=program", "traffic.program=one-to-all",
			"traffic.message_bytes=256", "run.max_cycles=100000000"},
		RowHeader: "program",
		Runs: []DemoRun{
			{Label: "one-to-all, 4 B", Set: []string{"traffic.program=one-to-all", "traffic.message_bytes=4"}, Paper: "0.17 s"},
			{Label: "one-to-all, 64 B", Set: []string{"traffic.program=one-to-all", "traffic.message_bytes=64"}, Paper: "2.16 s"},
			{Label: "one-to-all, 256 B", Set: []string{"traffic.program=one-to-all", "traffic.message_bytes=256"}, Paper: "8.30 s"},
			{Label: "one-to-all, 1 KiB", Set: []string{"traffic.program=one-to-all", "traffic.message_bytes=1024"}, Paper: "33.42 s"},
			{Label: "all-to-one, 4 B", Set: []string{"traffic.program=all-to-one", "traffic.message_bytes=4"}, Paper: "0.24 s"},
			{Label: "all-to-one, 64 B", Set: []string{"traffic.program=all-to-one", "traffic.message_bytes=64"}, Paper: "2.71 s"},
			{Label: "all-to-one, 256 B", Set: []string{"traffic.program=all-to-one", "traffic.message_bytes=256"}, Paper: "10.30 s"},
			{Label: "all-to-one, 1 KiB", Set: []string{"traffic.program=all-to-one", "traffic.message_bytes=1024"}, Paper: "43.27 s"},
		},
		Columns: slices.Concat([]DemoColumn{
			demoCount("packets", func(r Result) uint64 { return r.PacketsInjected }),
		}, DemoCompletion, []DemoColumn{DemoWall, DemoPaper("the paper's run")}),
		Note: "The paper gives its simulator's run time only; the completions are this model's (1300 ns overheads a message: one-to-all is bound by node 0's sends, all-to-one by its receives).",
	}, {
		Title:  "SPLASH-2 Radix and Barnes on the paper's 8×8 DSM (§5–§7: FLASH-like nodes, a full-map directory), small sizes (docs/results.md has Table 3's 1M keys and 8K bodies)",
		Config: "dsm.yaml",
		Base: []string{"name=dsm", "seed=1", "network.dims=8,8", "router.switching=vct", "router.vcs=2",
			"packet.flit_bytes=32", "traffic.pattern=dsm", "traffic.program=radix", "dsm.problem_size=0",
			"dsm.directory=full-map", "dsm.pointers=4", "dsm.consistency=sc", "dsm.virtual_networks=2", "dsm.cpi=1",
			"dsm.cache_bytes=1048576", "dsm.cache_ways=4", "dsm.line_bytes=64", "dsm.transaction_buffers=8",
			"dsm.handler_cycles=4", "dsm.memory_cycles=20"},
		RowHeader: "program",
		Runs: []DemoRun{
			{Label: "radix, 8K keys, rc", Set: []string{"traffic.program=radix", "dsm.problem_size=8192", "dsm.consistency=rc"}},
			{Label: "radix, 8K keys, sc", Set: []string{"traffic.program=radix", "dsm.problem_size=8192"}, Versus: "radix, 8K keys, rc"},
			{Label: "barnes, 512 bodies, sc", Set: []string{"traffic.program=barnes", "dsm.problem_size=512"}},
		},
		Columns: slices.Concat([]DemoColumn{
			demoCount("references", func(r Result) uint64 { return r.References }),
			DemoCol("misses", true, func(r Result) string { return strconv.FormatFloat(100*r.MissRate, 'f', 1, 64) + "%" }),
			DemoCol("verified", false, func(r Result) string { return strconv.FormatBool(r.Verified != nil && *r.Verified) }),
		}, DemoCompletion, []DemoColumn{DemoVersus("vs rc"), DemoWall}),
		Note: "Each processor runs its program as a coroutine; loads and stores go through its cache, misses through the directory protocol and the mesh. The answer is checked at the end (sorted keys; forces against a direct sum). Table 3 of the paper: 49,597 s for 1M keys and 22,560 s for 8K bodies on a 99 MHz HP 735.",
	}},
}
