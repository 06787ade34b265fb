package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "malformed.yaml")
	require.NoError(t, os.WriteFile(malformed, []byte("network:\n  ports: [8\n  inputs: 2\n"), 0o644))
	badValue := filepath.Join(dir, "badvalue.yaml")
	require.NoError(t, os.WriteFile(badValue, []byte("network:\n  organization: crossbar\n"), 0o644))
	missing := filepath.Join(dir, "nonexistent.yaml")
	vcdFile := filepath.Join(dir, "t.vcd")
	badJSONL := writeFile(t, dir, "bad.jsonl", "{\"name\":\"a\",\"offered_load\":0.1}\n{\"name\":\n")
	unknownJSONL := writeFile(t, dir, "unknown.jsonl", "{\"bogus\":1}\n")
	emptyJSONL := writeFile(t, dir, "empty.jsonl", "\n")
	badIrregular := writeFile(t, dir, "net.txt", "switches 4\n0 1\n0 9\n")
	downward := writeFile(t, dir, "down.txt", "switches 4\n0 1\n1 2\n3 0\nroute 1 0 2\n") // found by FuzzParse: a panic before
	routed := writeFile(t, dir, "routed.txt", "switches 4\n0 1\n1 2\n2 3\nroute 1 0 1\n")

	cases := []struct {
		name string
		args []string
		want []string // substrings of the one line
	}{
		{"unknown command", []string{"frobnicate"}, []string{`"frobnicate"`, "tb", "demo"}},
		{"flag before command", []string{"--verbose"}, []string{"--verbose"}},
		{"unknown flag", []string{"tb", "run", "creditlink", "--bogus"}, []string{"--bogus", "--seed"}},
		{"unknown flag with value", []string{"config", "--frob=3"}, []string{"--frob"}},
		{"tb without subcommand", []string{"tb"}, []string{"list", "run"}},
		{"tb unknown subcommand", []string{"tb", "walk"}, []string{`"walk"`}},
		{"tb run without name", []string{"tb", "run"}, []string{"NAME", "creditlink", "pipeline", "arbiter"}},
		{"tb run without name, with flags", []string{"tb", "run", "--seed", "3"}, []string{"NAME"}},
		{"unknown scenario", []string{"tb", "run", "nosuch"}, []string{`"nosuch"`, "creditlink", "pipeline", "arbiter"}},
		{"two names", []string{"tb", "run", "creditlink", "pipeline"}, []string{`"pipeline"`}},
		{"seed not a number", []string{"tb", "run", "creditlink", "--seed", "x"}, []string{"--seed", `"x"`}},
		{"seed negative", []string{"tb", "run", "--seed=-4", "creditlink"}, []string{"--seed", `"-4"`}},
		{"cycles negative", []string{"tb", "run", "creditlink", "--cycles", "-1"}, []string{"--cycles", `"-1"`}},
		{"cycles zero", []string{"tb", "run", "creditlink", "--cycles", "0"}, []string{"--cycles", `"0"`}},
		{"cycles missing value", []string{"tb", "run", "creditlink", "--cycles"}, []string{"--cycles", "needs a value"}},
		{"json not a bool", []string{"tb", "run", "creditlink", "--json=maybe"}, []string{"--json", `"maybe"`}},
		{"bad trace glob", []string{"tb", "run", "creditlink", "--vcd", vcdFile, "--trace", "a b"}, []string{"--trace", `"a b"`}},
		{"trace without vcd", []string{"tb", "run", "creditlink", "--trace", "top.*"}, []string{"--trace", "--vcd"}},
		{"trace selects nothing", []string{"tb", "run", "creditlink", "--vcd", vcdFile, "--trace", "nosuch.*"}, []string{"--trace", `"nosuch.*"`}},
		{"vcd in missing directory", []string{"tb", "run", "creditlink", "--vcd", filepath.Join(dir, "no", "t.vcd")}, []string{"--vcd", "no/t.vcd"}},
		{"vcd is a directory", []string{"tb", "run", "creditlink", "--vcd", dir}, []string{"--vcd", "directory"}},
		{"tb list argument", []string{"tb", "list", "extra"}, []string{`"extra"`}},
		{"set without =", []string{"config", "--set", "network.ports"}, []string{"--set", "network.ports", "="}},
		{"set out of range", []string{"config", "--set", "network.ports=1"}, []string{"network.ports", "1", "2..256"}},
		{"set unknown key", []string{"config", "--set", "network.bogus=3"}, []string{"network.bogus"}},
		{"set bad enum", []string{"run", "--set", "traffic.pattern=zigzag"}, []string{"traffic.pattern", "zigzag", "uniform"}},
		{"bit errors on a lone switch", []string{"run", "--set", "link.ber=1e-6"}, []string{"link.ber", "fattree", "allowed for switch: 0"}},
		{"bit errors too high", []string{"run", "--set", "link.ber=0.5"}, []string{"link.ber", "0.5"}},
		{"bit errors under wormhole", []string{"run", "--set", "network.topology=torus", "--set", "router.switching=wormhole", "--set", "link.ber=1e-6"}, []string{"router.switching", "wormhole", "vct"}},
		{"fault without a cycle", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(0)(0).out(1)"}, []string{"faults", "entry 1", "PATH@CYCLE"}},
		{"fault at a negative cycle", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(0)(0).out(1)@-5"}, []string{"faults", "not a cycle number"}},
		{"fault on no link", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(9)(9).out(1)@0"}, []string{"faults", "names no router-to-router link", "top.net.r(0)(0).out(1)"}},
		{"fault on a mesh edge", []string{"run", "--set", "network.topology=mesh", "--set", "faults=top.net.r(7)(0).out(1)@0"}, []string{"faults", "names no router-to-router link"}},
		{"min radix too large", []string{"run", "--set", "network.topology=min", "--set", "network.ports=16"}, []string{"network.ports", "an omega", "2..7"}},
		{"min hosts not a power", []string{"run", "--set", "network.topology=min", "--set", "router.routing=updown", "--set", "network.ports=4", "--set", "network.nodes=100"}, []string{"network.nodes", "100 hosts is not a power of 4"}},
		{"key the topology does not read", []string{"run", "--set", "network.topology=torus", "--set", "network.nodes=4096"}, []string{"network.nodes", "4096", "no effect on network.topology torus", "network.dims"}},
		{"router key on a fat-tree", []string{"run", "--set", "network.topology=fattree", "--set", "router.vcs=4"}, []string{"router.vcs", "network.topology fattree", "no router key"}},
		{"min routed by dor", []string{"run", "--set", "network.topology=min", "--set", "network.ports=2", "--set", "router.routing=dor"}, []string{"router.routing", `"dor" does not route a MIN`, "updown | table | source"}},
		{"irregular routed by dor", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=dor"}, []string{"router.routing", "updown | table | source"}},
		{"irregular file missing", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=updown", "--set", "network.irregular_file=" + missing}, []string{"network.irregular_file", "nonexistent.yaml"}},
		{"irregular file and a random network's size", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=updown", "--set", "network.irregular_file=" + filepath.Join("..", "..", "irregular", "testdata", "random16.txt"), "--set", "network.switches=32"}, []string{"network.switches", "no effect on network.topology irregular", "network.irregular_file"}},
		{"irregular table with no way on", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=table", "--set", "network.irregular_file=" + downward}, []string{"network.irregular_file", "no route from switch 1 toward switch 0 past switch 2"}},
		{"irregular file bad line", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=updown", "--set", "network.irregular_file=" + badIrregular}, []string{"network.irregular_file", "line 3", "switch 9"}},
		{"irregular degree 1", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=table", "--set", "network.degree=1"}, []string{"network.degree", "degree 1 cannot connect 16 switches"}},
		{"irregular collective", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=table", "--set", "traffic.pattern=allreduce"}, []string{"traffic.pattern", "allreduce", "uniform"}},
		{"program on a fat-tree", []string{"run", "--set", "network.topology=fattree", "--set", "traffic.pattern=program"}, []string{"traffic.pattern", "program runs on network.topology min, irregular, torus and mesh", "fattree"}},
		{"program unknown", []string{"run", "--set", "traffic.pattern=program", "--set", "traffic.program=scatter"}, []string{"traffic.program", `"scatter"`, "one-to-all"}},
		{"program too many destinations", []string{"run", "--set", "network.topology=mesh", "--set", "traffic.pattern=program", "--set", "traffic.program=multi-multicast", "--set", "traffic.fanout=64"}, []string{"traffic.fanout", "64 destinations on 64 nodes", "1..63"}},
		{"program too many sources", []string{"run", "--set", "network.topology=mesh", "--set", "traffic.pattern=program", "--set", "traffic.program=multi-multicast", "--set", "traffic.sources=65"}, []string{"traffic.sources", "65 sources on 64 nodes"}},
		{"fault on a node link", []string{"run", "--set", "network.topology=fattree", "--set", "faults=top.leaf(0).out(0)@0"}, []string{"faults", "node links cannot fail", "top.leaf(0).out(4)"}},
		{"fault on a lone switch", []string{"run", "--set", "faults=top.sw.out(1)@0"}, []string{"faults", "fattree, torus and mesh", "not for switch"}},
		{"fault under a collective", []string{"run", "--set", "network.topology=fattree", "--set", "traffic.pattern=allreduce", "--set", "faults=top.leaf(0).out(4)@0"}, []string{"faults", "point-to-point", "allreduce"}},
		// Errors from a derived value name the keys the user set.
		{"packet longer than the VC buffer", []string{"run", "--set", "network.topology=torus", "--set", "packet.bytes=2048"}, []string{"router.vc_buffer_flits", "64-flit packet (packet.bytes / packet.flit_bytes)"}},
		{"MIN hosts no radix divides", []string{"run", "--set", "network.topology=min", "--set", "network.nodes=100"}, []string{"network.nodes", "100 hosts is not a power", "2..7"}},
		// Faults make sense.
		{"fault past the run", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(1)(0).out(1)@5000000"}, []string{"faults", "cycle 5000000 is past the run", "0..4999999"}},
		{"the same fault twice", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(1,0).out(1)@0,top.net.r(1)(0).out(1)@500"}, []string{"faults", "entries 1", "name the same link"}},
		{"a fault from both ends", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(0)(0).out(1)@0,top.net.r(1)(0).out(2)@500"}, []string{"faults", "from its two ends"}},
		{"a fault from both ends of a fat-tree link", []string{"run", "--set", "network.topology=fattree", "--set", "faults=top.leaf(0).out(4)@0,top.mid(1)(0).out(0)@0"}, []string{"faults", "from its two ends"}},
		{"a fault path never closed", []string{"run", "--set", "network.topology=torus", "--set", "faults=top.net.r(1.out(1)@0"}, []string{"faults", "never closed"}},
		// Every key is read or refused, in every section.
		{"program key on a load run", []string{"run", "--set", "network.topology=torus", "--set", "traffic.program=all-to-one"}, []string{"traffic.program", "no effect on a uniform load run on network.topology torus", "traffic.pattern program"}},
		{"sources on uniform load", []string{"run", "--set", "network.topology=mesh", "--set", "traffic.sources=3"}, []string{"traffic.sources", "no effect on a uniform load run"}},
		{"NIC overhead on an open-loop run", []string{"run", "--set", "network.topology=torus", "--set", "nic.send_overhead_ns=500"}, []string{"nic.send_overhead_ns", "read by NICs"}},
		{"NIC work per packet on an open-loop run", []string{"run", "--set", "network.topology=fattree", "--set", "network.nodes=16", "--set", "nic.send_packet_ns=10"}, []string{"nic.send_packet_ns", "program run"}},
		{"NIC overhead under the message layer", []string{"run", "--config", "../../configs/bgl-torus.yaml", "--set", "network.dims=4,4", "--set", "traffic.pattern=program", "--set", "nic.model=msglayer", "--set", "nic.recv_overhead_ns=100"}, []string{"nic.recv_overhead_ns", "program run"}},
		{"msglayer key without the message layer", []string{"run", "--set", "network.topology=torus", "--set", "traffic.pattern=program", "--set", "msglayer.protocol=eager"}, []string{"msglayer.protocol", "read with nic.model msglayer"}},
		{"combine rate on the collective tree", []string{"run", "--set", "network.topology=bgltree", "--set", "network.nodes=64", "--set", "traffic.pattern=allreduce", "--set", "combine.elements_per_cycle=4"}, []string{"combine.elements_per_cycle", "an allreduce on network.topology bgltree"}},
		{"float mode with integers", []string{"run", "--set", "traffic.pattern=allreduce", "--set", "combine.float_mode=naive"}, []string{"combine.float_mode", "read with combine.type float64"}},
		{"combine op on a barrier", []string{"run", "--set", "traffic.pattern=barrier", "--set", "combine.op=max"}, []string{"combine.op", "a barrier"}},
		{"escape on a mesh", []string{"run", "--set", "network.topology=mesh", "--set", "router.escape=bubble"}, []string{"router.escape", "network.topology mesh", "router.routing"}},
		{"buffer depth under wormhole", []string{"run", "--set", "network.topology=torus", "--set", "router.switching=wormhole", "--set", "router.vc_buffer_flits=8"}, []string{"router.vc_buffer_flits", "network.topology torus"}},
		{"faults on a program run", []string{"run", "--set", "network.topology=torus", "--set", "traffic.pattern=program", "--set", "faults=top.net.r(0)(0).out(1)@5"}, []string{"faults", "program run"}},
		{"retry settings on perfect links", []string{"run", "--set", "network.topology=torus", "--set", "link.resend_buffer=4"}, []string{"link.resend_buffer", "read when link.ber > 0"}},
		{"sources past the nodes", []string{"run", "--set", "network.topology=ibmesh", "--set", "network.dims=4,4", "--set", "traffic.pattern=multicast", "--set", "traffic.sources=17"}, []string{"traffic.sources", "17 sources on 16 nodes", "0..16"}},
		{"routes in a file under updown", []string{"run", "--set", "network.topology=irregular", "--set", "router.routing=updown", "--set", "network.irregular_file=" + routed}, []string{"network.irregular_file", "gives routes (line 5)", "router.routing updown does not use"}},
		{"config prints nothing run refuses", []string{"config", "--set", "network.topology=torus", "--set", "traffic.program=all-to-one"}, []string{"traffic.program", "no effect"}},
		{"fault with NICs", []string{"run", "--set", "network.topology=fattree", "--set", "nic.model=overhead", "--set", "faults=top.leaf(0).out(4)@0"}, []string{"faults", "nic.model none"}},
		{"fault with look-ahead credits", []string{"run", "--set", "network.topology=fattree", "--set", "network.credit_mode=per-crosspoint", "--set", "faults=top.leaf(0).out(4)@0"}, []string{"faults", "per-crosspoint"}},
		{"fault on a voq fat-tree", []string{"run", "--set", "network.topology=fattree", "--set", "network.organization=voq", "--set", "faults=top.leaf(0).out(4)@0"}, []string{"faults", "network.organization oq-xp"}},
		{"fault list of maps", []string{"run", "--set", "network.topology=torus", "--set", "faults=[{a: 1}]"}, []string{"faults", "entry 1", "expected a string"}},
		{"resend buffer zero", []string{"run", "--set", "network.topology=torus", "--set", "link.ber=1e-6", "--set", "link.resend_buffer=0"}, []string{"link.resend_buffer", "0"}},
		{"set missing value", []string{"config", "--set"}, []string{"--set", "needs a value"}},
		{"cross-key error", []string{"config", "--set", "network.inputs=9"}, []string{"network.inputs", "9"}},
		{"nonexistent config file", []string{"config", "--config", missing}, []string{"--config", "nonexistent.yaml"}},
		{"malformed YAML", []string{"config", "--config", malformed}, []string{"malformed.yaml", "line"}},
		{"bad value in file", []string{"run", "--config", badValue}, []string{"badvalue.yaml", "network.organization", "crossbar"}},
		{"config extra argument", []string{"config", "show"}, []string{`"show"`}},
		{"config keys with a flag", []string{"config", "keys", "--json"}, []string{"config keys"}},
		{"run argument", []string{"run", "x.yaml"}, []string{`"x.yaml"`, "--config"}},
		{"run bad trace glob", []string{"run", "--vcd", vcdFile, "--trace", "a:b"}, []string{"--trace", `"a:b"`}},
		{"deposit without bgl", []string{"run", "--set", "network.topology=torus", "--set", "traffic.pattern=broadcast"}, []string{"router.routing", "dor", "deposit bit", "bgl", "traffic.multicast: software"}},
		{"deposit program without vct", []string{"run", "--set", "network.topology=torus", "--set", "traffic.pattern=program", "--set", "traffic.program=deposit-broadcast",
			"--set", "router.routing=bgl", "--set", "router.vcs=4", "--set", "router.escape=none", "--set", "router.switching=wormhole"}, []string{"router.switching", "wormhole", "vct"}},
		{"sweep without loads", []string{"sweep"}, []string{"--loads"}},
		{"sweep bad loads", []string{"sweep", "--loads", "0.1,x"}, []string{"--loads", `"x"`}},
		{"sweep bad range", []string{"sweep", "--loads", "0.5:0.1:0.1"}, []string{"--loads", "TO"}},
		{"sweep zero step", []string{"sweep", "--loads", "0.1:0.5:0"}, []string{"--loads", "STEP"}},
		{"sweep load out of range", []string{"sweep", "--loads", "0.5,1.5"}, []string{"traffic.load", "1.5"}},
		{"sweep bad jobs", []string{"sweep", "--loads", "0.5", "--jobs", "0"}, []string{"--jobs", `"0"`}},
		{"sweep shard index too big", []string{"sweep", "--loads", "0.5", "--shard", "2/2"}, []string{"--shard", `"2/2"`, "0..1"}},
		{"sweep shard count zero", []string{"sweep", "--loads", "0.5", "--shard", "0/0"}, []string{"--shard", `"0/0"`, "at least 1"}},
		{"sweep shard count negative", []string{"sweep", "--loads", "0.5", "--shard", "0/-2"}, []string{"--shard", "at least 1"}},
		{"sweep shard negative", []string{"sweep", "--loads", "0.5", "--shard", "-1/2"}, []string{"--shard", "0..1"}},
		{"sweep shard malformed", []string{"sweep", "--loads", "0.5", "--shard", "3"}, []string{"--shard", `"3"`, "i/n"}},
		{"sweep shard not a number", []string{"sweep", "--loads", "0.5", "--shard", "a/4"}, []string{"--shard", `"a"`}},
		{"sweep shard missing value", []string{"sweep", "--loads", "0.5", "--shard"}, []string{"--shard", "needs a value"}},
		{"sweep out is a file", []string{"sweep", "--loads", "0.5", "--out", malformed}, []string{"--out", "malformed.yaml"}},
		{"merge without files", []string{"merge"}, []string{"merge", "FILE"}},
		{"merge missing file", []string{"merge", missing}, []string{"merge", "nonexistent.yaml"}},
		{"merge malformed file", []string{"merge", malformed}, []string{"merge", "malformed.yaml", "line 1"}},
		{"merge bad JSON", []string{"merge", badJSONL}, []string{"merge", "bad.jsonl", "line 2"}},
		{"merge unknown field", []string{"merge", unknownJSONL}, []string{"merge", "unknown.jsonl", "bogus"}},
		{"merge empty file", []string{"merge", emptyJSONL}, []string{"merge", "no results"}},
		{"merge directory", []string{"merge", dir}, []string{"merge", dir}},
		{"merge unknown flag", []string{"merge", "--bogus", emptyJSONL}, []string{"--bogus", "--out"}},
		{"demo argument", []string{"demo", "now"}, []string{`"now"`}},
		{"demo bad out", []string{"demo", "--out", filepath.Join(malformed, "sub")}, []string{"--out"}},
		{"help unknown", []string{"help", "nosuch"}, []string{`"nosuch"`}},
		// issue 42: refusals that must not cost a file, and messages that help.
		{"torus routed west-first with a vcd", []string{"run", "--set", "network.topology=torus", "--set", "router.routing=west-first", "--vcd", vcdFile}, []string{"router.routing", "west-first", "dor, duato, bgl"}},
		{"trace selects nothing on a torus", []string{"run", "--set", "network.topology=torus", "--set", "network.dims=4,4", "--vcd", vcdFile, "--trace", "top.sw.out(3)*"},
			[]string{"--trace", `"top.sw.out(3)*"`, "selects no signal of this torus network", "top.net.r(0)(0).in(0).rx.valid", "a module's path such as top.net.r(0)(0)"}},
		{"trace selects nothing on a switch", []string{"run", "--vcd", vcdFile, "--trace", "top.net.*"}, []string{"--trace", "switch network", "top.sw."}},
		{"trace with an unclosed parenthesis", []string{"run", "--set", "network.topology=torus", "--set", "network.dims=4,4", "--vcd", vcdFile, "--trace", "top.net.r(1,2.*"},
			[]string{"--trace", `the "(" at character 10 is never closed`, "top.net.r(0)(0)."}},
		{"trace with a stray closing parenthesis", []string{"tb", "run", "creditlink", "--vcd", vcdFile, "--trace", "top.link)*"}, []string{"--trace", `the ")" at character 9 closes no "("`, "top.link."}},
		{"trace list with one bad pattern", []string{"run", "--vcd", vcdFile, "--trace", "top.sw.*,a:b,top.sw.in(0)*"}, []string{"--trace", `"a:b"`, "bad character ':'"}},
		{"tb trace list with one bad pattern", []string{"tb", "run", "creditlink", "--vcd", vcdFile, "--trace", "top.*,a b"}, []string{"--trace", `"a b"`}},
		{"pcap-links bad glob", []string{"run", "--set", "network.topology=torus", "--pcap", vcdFile, "--pcap-links", "top.net.r(0)(0).out(1),a b"}, []string{"--pcap-links", `"a b"`}},
		{"pcap-links selects nothing", []string{"run", "--set", "network.topology=torus", "--set", "network.dims=4,4", "--pcap", vcdFile, "--pcap-links", "top.sw.*"}, []string{"--pcap-links", `"top.sw.*"`, "selects no link"}},
		{"pcap on a lone switch", []string{"run", "--pcap", vcdFile}, []string{"--pcap", "not for switch"}},
		{"empty vcd", []string{"run", "--vcd", ""}, []string{"run: --vcd needs a file name"}},
		{"empty vcd with =", []string{"run", "--vcd="}, []string{"run: --vcd needs a file name"}},
		{"empty pcap", []string{"run", "--set", "network.topology=torus", "--pcap", ""}, []string{"run: --pcap needs a file name"}},
		{"empty config", []string{"run", "--config", ""}, []string{"run: --config needs a file name"}},
		{"tb empty vcd", []string{"tb", "run", "creditlink", "--vcd", ""}, []string{"tb run: --vcd needs a file name"}},
		{"sweep empty out", []string{"sweep", "--loads", "0.5", "--out", ""}, []string{"sweep: --out needs a file name"}},
		{"merge empty out", []string{"merge", "--out", "", emptyJSONL}, []string{"merge: --out needs a file name"}},
		{"sweep list key in the comma form", []string{"sweep", "--loads", "0.5", "--set", "network.topology=torus", "--vary", "network.dims=8,8"}, []string{"network.dims=8", "given twice", "network.dims=4x4,8x8"}},
		{"sweep list key in brackets", []string{"sweep", "--loads", "0.5", "--set", "network.topology=torus", "--vary", "network.dims=[4,4],[8,8]"}, []string{"network.dims", "network.dims=4x4,8x8"}},
		{"sweep list key out of range", []string{"sweep", "--loads", "0.5", "--set", "network.topology=torus", "--vary", "network.dims=4x1"}, []string{"network.dims", "entry 2 is 1"}},
		{"bad msglayer protocol", []string{"run", "--config", "../../configs/bgl-torus.yaml", "--set", "traffic.pattern=program",
			"--set", "nic.model=msglayer", "--set", "msglayer.protocol=fast"}, []string{"msglayer.protocol", `"fast"`, "auto | eager | single | midsize | rendezvous"}},
		{"msglayer off a program run", []string{"run", "--config", "../../configs/bgl-torus.yaml", "--set", "nic.model=msglayer"},
			[]string{"nic.model", "traffic.pattern program", "none | overhead"}},
		{"msglayer single for a long message", []string{"run", "--config", "../../configs/bgl-torus.yaml", "--set", "network.dims=4,4",
			"--set", "traffic.pattern=program", "--set", "nic.model=msglayer", "--set", "msglayer.protocol=single", "--set", "traffic.message_bytes=1000"},
			[]string{"msglayer.protocol", "single-packet protocol", "1000 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runApp(c.args...)
			requireOneLineError(t, r, c.want...)
			require.Empty(t, r.stdout)
		})
	}
	// Nothing was traced by the failing runs.
	_, err := os.Stat(vcdFile)
	require.True(t, os.IsNotExist(err), "a rejected run left %s behind", vcdFile)
}

// TestRunAndSweep: the single switch and the fat-tree run; other topologies and the parts
// not built yet are refused with one line and exit status 2.
func TestRunAndSweep(t *testing.T) {
	dir := t.TempDir()
	torus := writeFile(t, dir, "torus.yaml", "network: {topology: ibmesh, dims: [4, 4]}\ntraffic: {pattern: transpose}\n")
	short := []string{"--set", "run.warmup_cycles=1000", "--set", "run.measure_cycles=5000"}

	r := runApp(append([]string{"run", "--json", "--set", "traffic.load=0.3"}, short...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	for _, k := range []string{"name", "seed", "cycles", "offered_load", "accepted_load", "delivered_load",
		"latency_avg_cycles", "latency_p50_cycles", "latency_p99_cycles", "latency_max_cycles", "latency_avg_ns",
		"packets_injected", "packets_delivered", "completion_cycles", "completion_ns", "stable", "wall_seconds", "sim_cycles_per_second"} {
		require.Contains(t, res, k)
	}
	require.Equal(t, true, res["stable"])
	// A 5000-cycle window: over seeds 1..20 the switch at 0.3 accepted
	// 0.251–0.347 (±0.05 left 0.001), so ±0.07. The default seed: deterministic.
	require.InDelta(t, 0.3, res["accepted_load"], 0.07)

	vcdFile := filepath.Join(dir, "sw.vcd")
	r = runApp(append([]string{"run", "--vcd", vcdFile, "--trace", "top.sw.out(1)*"}, short...)...)
	require.Equal(t, 0, r.code, r.stderr)
	f, err := os.Open(vcdFile)
	require.NoError(t, err)
	parsed, err := vcd.Parse(f)
	f.Close()
	require.NoError(t, err)
	require.NotEmpty(t, parsed.History("top.sw.out(1).xp(0).occupancy"))
	gtkw, err := os.ReadFile(filepath.Join(dir, "sw.gtkw"))
	require.NoError(t, err)
	require.Contains(t, string(gtkw), "sw.vcd")

	r = runApp("run", "--config", torus)
	requireOneLine(t, r, "hwcoll: ", `traffic.pattern: transpose has no model on network.topology ibmesh; allowed: multicast`)
	ft := append([]string{"run", "--set", "network.topology=fattree", "--set", "network.nodes=16", "--set", "network.ports=4",
		"--set", "traffic.pattern=complement", "--set", "traffic.load=0.5"}, short...)
	r = runApp(ft...)
	require.Equal(t, 0, r.code, r.stderr)
	first, _, _ := strings.Cut(r.stdout, "\n")
	require.Contains(t, first, "fat-tree", r.stdout)
	require.Contains(t, r.stdout, "nic.model none")
	r = runApp(append(ft, "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	res = nil
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, true, res["stable"])
	require.Equal(t, "fattree", res["topology"])
	// Over seeds 1..20 the 16-node fat-tree at 0.5 accepted 0.471–0.536
	// (±0.05 left 0.014), so ±0.07.
	require.InDelta(t, 0.5, res["accepted_load"], 0.07)
	r = runApp("run", "--set", "network.topology=fattree", "--set", "network.nodes=48")
	requireOneLine(t, r, "hwcoll: ", "network.nodes: 48 nodes cannot be a fat-tree")

	r = runApp("run", "--set", "traffic.multicast=software")
	requireOneLine(t, r, "hwcoll: ", "traffic.multicast: software has no effect on a uniform load run on network.topology switch", "read by fat-tree multicasts")
	r = runApp("run", "--pcap", filepath.Join(dir, "x.pcap"))
	requireOneLine(t, r, "hwcoll: ", "--pcap: packet capture is built for network.topology torus, mesh and ibmesh; not for switch")
	_, err = os.Stat(filepath.Join(dir, "x.pcap"))
	require.True(t, os.IsNotExist(err), "a refused capture leaves no file")
	r = runApp("run", "--pcap-links", "top.*")
	requireOneLine(t, r, "hwcoll: ", "run: --pcap-links needs --pcap FILE")
	r = runApp("run", "--set", "network.topology=torus", "--set", "network.dims=3,3", "--set", "run.warmup_cycles=100",
		"--set", "run.measure_cycles=500", "--pcap", filepath.Join(dir, "t.pcap"), "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"pcap_packets":`)
	st, err := os.Stat(filepath.Join(dir, "t.pcap"))
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(24), "header and packets")

	r = runApp(append([]string{"sweep", "--loads", "0.2,0.4", "--json", "--jobs", "2"}, short...)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2)
	r1 := runApp(append([]string{"sweep", "--loads", "0.2,0.4", "--json", "--jobs", "1"}, short...)...)
	strip := func(s string) string {
		return regexp.MustCompile(`"(wall_seconds|sim_cycles_per_second|packet_hops_per_second)":[0-9.e+-]+`).ReplaceAllString(s, "")
	}
	require.Equal(t, strip(r1.stdout), strip(r.stdout), "--jobs does not change results")
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestNoArgumentsPrintsUsageOnStderr(t *testing.T) {
	r := runApp()
	require.Equal(t, 2, r.code)
	require.Empty(t, r.stdout)
	for _, cmd := range []string{"tb list", "tb run", "demo", "config", "config keys", "run", "sweep", "merge", "help"} {
		require.Contains(t, r.stderr, "hwcoll "+cmd)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := runApp(args...)
		require.Equal(t, 0, r.code, args)
		require.Empty(t, r.stderr)
		require.Equal(t, usageText, r.stdout)
	}
	for _, args := range [][]string{{"help", "tb", "run"}, {"tb", "run", "-h"}, {"tb", "run", "creditlink", "--help"}} {
		r := runApp(args...)
		require.Equal(t, 0, r.code, args)
		require.Contains(t, r.stdout, "--cycles N")
		require.Contains(t, r.stdout, "--trace GLOB")
	}
	r := runApp("config", "-h")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "config keys")
}

func TestTbList(t *testing.T) {
	r := runApp("tb", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var names []string
	col := -1
	for _, l := range lines {
		f := strings.Fields(l)
		require.GreaterOrEqual(t, len(f), 2, "name and description: %q", l)
		names = append(names, f[0])
		// the descriptions start in one column
		c := len(f[0]) + strings.Index(l[len(f[0]):], f[1])
		if col < 0 {
			col = c
		}
		require.Equal(t, col, c, "description column of %q", l)
	}
	var want []string
	for _, s := range scenario.All() {
		want = append(want, s.Name)
	}
	require.Equal(t, want, names)
	require.Subset(t, names, []string{"creditlink", "pipeline", "arbiter"})
}

func TestFlagsBeforeOrAfterName(t *testing.T) {
	a := runApp("tb", "run", "creditlink", "--seed", "3", "--json")
	b := runApp("tb", "run", "--seed", "3", "creditlink", "--json")
	c := runApp("tb", "run", "--seed=3", "--json", "--", "creditlink")
	for _, r := range []result{a, b, c} {
		require.Equal(t, 0, r.code, r.stderr)
		var rep tb.Report
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
		require.Equal(t, uint64(3), rep.Seed)
		require.Equal(t, "creditlink", rep.Name)
	}
}

func TestConfigPrintsEffectiveConfigAndTiming(t *testing.T) {
	r := runApp("config", "--set", "network.ports=16", "--set", "link.gbps=2.5")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "ports: 16")
	require.Contains(t, r.stdout, "packet_cycles:")
	// The YAML is a config file: loading it gives the same configuration.
	p := writeFile(t, t.TempDir(), "eff.yaml", r.stdout)
	cfg, err := config.Load(p)
	require.NoError(t, err)
	require.Equal(t, 16, cfg.Network.Ports)
	require.Equal(t, 2.5, cfg.Link.Gbps)
	again := runApp("config", "--config", p)
	require.Equal(t, 0, again.code, again.stderr)
	require.Equal(t, r.stdout, again.stdout)

	j := runApp("config", "--json", "--config", p, "--set", "clock_mhz=500")
	require.Equal(t, 0, j.code, j.stderr)
	var out struct {
		Config config.Config  `json:"config"`
		Timing map[string]any `json:"timing"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &out))
	require.Equal(t, 16, out.Config.Network.Ports)
	want := cfg
	require.NoError(t, want.Set("clock_mhz=500"))
	tm := want.Timing()
	require.EqualValues(t, tm.PeriodPS, out.Timing["period_ps"])
	require.EqualValues(t, tm.PacketCycles, out.Timing["packet_cycles"])
	require.EqualValues(t, tm.SwitchDelayCycles, out.Timing["switch_delay_cycles"])
}

func TestConfigKeysIsTheReference(t *testing.T) {
	r := runApp("config", "keys")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, config.Reference(), r.stdout)
	for _, k := range config.Keys() {
		require.Contains(t, r.stdout, "`"+k.Key+"`")
	}
}

func TestParseLoads(t *testing.T) {
	got, err := parseLoads("0.1:0.5:0.1")
	require.NoError(t, err)
	require.Equal(t, []float64{0.1, 0.2, 0.3, 0.4, 0.5}, got)
	got, err = parseLoads("0.25, 0.5,1")
	require.NoError(t, err)
	require.Equal(t, []float64{0.25, 0.5, 1}, got)
	got, err = parseLoads("0.7:0.7:0.1")
	require.NoError(t, err)
	require.Equal(t, []float64{0.7}, got)
	for _, bad := range []string{"", "a", "0.1:0.2", "0.1:0.2:0.1:4", "1:0:0.1", "0:1:-1", "0:1:1e-9", "NaN"} {
		_, err := parseLoads(bad)
		require.Error(t, err, bad)
	}
}

func TestPanicIsAnInternalError(t *testing.T) {
	boom := scenario.Scenario{Name: "boom", Desc: "panics", Build: func(scenario.Params) (*tb.Harness, error) {
		panic("kaboom\nsecond line")
	}}
	r := runWith([]scenario.Scenario{boom}, nil, "tb", "run", "boom")
	require.Equal(t, 3, r.code)
	require.Equal(t, "hwcoll: internal error: kaboom second line (this is a bug in hwcoll; please report it with the command line that triggered it)\n", r.stderr)
	require.NotContains(t, r.stderr, "goroutine")
}

// --trace picks routers by their coordinates: r(1,2) is the router the
// netlist names r(1)(2), and r(*,0) a line of them, in one list with
// other patterns.
func TestRunTraceByCoordinate(t *testing.T) {
	dir := t.TempDir()
	vcdFile := filepath.Join(dir, "t.vcd")
	r := runApp("run", "--config", filepath.Join("..", "..", "configs", "bgl-torus.yaml"), "--set", "network.dims=4,4",
		"--set", "run.warmup_cycles=1000", "--set", "run.measure_cycles=5000",
		"--vcd", vcdFile, "--trace", "top.net.r(1,2).*,top.net.r(*,0).out(1).valid")
	require.Equal(t, 0, r.code, r.stderr)
	f, err := os.Open(vcdFile)
	require.NoError(t, err)
	parsed, err := vcd.Parse(f)
	f.Close()
	require.NoError(t, err)
	routers := map[string]bool{}
	for _, v := range parsed.Vars {
		if rest, ok := strings.CutPrefix(v.Name, "top.net."); ok {
			r, _, _ := strings.Cut(rest, ".")
			routers[r] = true
		}
	}
	require.Equal(t, map[string]bool{"r(1)(2)": true, "r(0)(0)": true, "r(1)(0)": true, "r(2)(0)": true, "r(3)(0)": true}, routers)
	require.NotEmpty(t, parsed.History("top.net.r(1)(2).out(1).valid"))
}
