package experiment

import "slices"

// ibMeshDemo is the InfiniBand mesh's part of the tour: the IBA-multicast
// paper's finding (§4) that multicast by the switches' multicast
// forwarding tables beats its unicast scheme (one copy per member from the
// source), for one source and for many; the one-source multicast is
// captured as real InfiniBand packets that tshark decodes.
var ibMeshDemo = &Demo{
	Section: "The IBA-multicast paper: multicast on a 16×16 InfiniBand mesh",
	Order:   40,
	Parts: []DemoPart{{
		Title:  "1 KiB multicast: hardware (the subnet manager's multicast forwarding tables) vs the paper's unicast scheme (one copy per member) (§4)",
		Config: "ib-mesh.yaml",
		Base: []string{"name=ib-mesh", "seed=1", "network.dims=16,16", "network.vls=1",
			"network.vl_policy=sl2vl", "router.switching=vct", "router.vc_buffer_flits=16",
			"packet.bytes=256", "packet.flit_bytes=32", "traffic.pattern=multicast",
			"traffic.sources=1", "traffic.group_percent=100", "traffic.message_bytes=1024",
			"traffic.multicast=hardware", "traffic.software=sequential", "run.max_cycles=100000000"},
		RowHeader: "multicast",
		Runs: []DemoRun{
			{
				Label: "1 source to all, hardware",
				Set:   []string{"traffic.multicast=hardware"},
				// Every link: each of the message's 4 packets crosses the
				// 255 links of the XY tree and the 255 links to the hosts.
				Pcap: &DemoPcap{File: "ib-mesh.pcap"},
			},
			{Label: "1 source to all, unicast", Set: []string{"traffic.multicast=software"}, Versus: "1 source to all, hardware"},
			{Label: "102 sources to 40 %, hardware", Set: []string{"traffic.sources=102", "traffic.group_percent=40", "traffic.multicast=hardware"}},
			{Label: "102 sources to 40 %, unicast", Set: []string{"traffic.sources=102", "traffic.group_percent=40", "traffic.multicast=software"},
				Versus: "102 sources to 40 %, hardware"},
		},
		Columns: slices.Concat([]DemoColumn{
			demoCount("packets sent", func(r Result) uint64 { return r.PacketsInjected }),
			demoCount("delivered", func(r Result) uint64 { return r.PacketsDelivered }),
		}, DemoCompletion, []DemoColumn{DemoVersus("vs hardware")}),
		Note: "Hardware multicast sends each packet once and the switches replicate it; the unicast scheme sends one copy per member, one after another from the source.",
	}},
}
