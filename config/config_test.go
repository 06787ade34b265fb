package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireKeyError checks err is exactly one line, is (or wraps) an *Error
// for key, reads "<key>: ..." and contains every fragment.
func requireKeyError(t testingT, err error, key string, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	require.NotContains(t, msg, "\r")
	var ce *Error
	require.True(t, errors.As(err, &ce), "not a *config.Error: %v", err)
	require.Equal(t, key, ce.Key, msg)
	if key != "" {
		require.True(t, strings.HasPrefix(ce.Error(), key+": "), msg)
	}
	for _, f := range fragments {
		require.Contains(t, msg, f)
	}
}

type testingT interface {
	require.TestingT
	Helper()
}

// yamlFor writes "a.b: v" as nested YAML.
func yamlFor(key, value string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			b.WriteString(" " + value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestDefaultValidates(t *testing.T) {
	c := Default()
	require.NoError(t, c.Validate())
	require.Equal(t, "hwcoll", c.Name)
	require.Equal(t, int64(1), c.Seed)
	require.Equal(t, 250.0, c.ClockMHz)
	require.Equal(t, Network{Topology: "switch", Ports: 8, Inputs: 8, Organization: "oq-xp", XPBufferPackets: 4, CreditMode: "min-free", FanoutSplitting: "on", Iterations: 1, CombineUnits: 1, Nodes: 256, Dims: []int{8, 8}, VLs: 1, VLPolicy: "sl2vl", TreeBuilder: "greedy", MinKind: "omega", IrregularFile: "random", Switches: 16, Degree: 4}, c.Network)
	require.Equal(t, Link{Gbps: 10, DelayNS: 20, ResendBuffer: 8}, c.Link)
	require.Equal(t, Switch{DelayNS: 90}, c.Switch)
	require.Equal(t, Packet{Bytes: 256, FlitBytes: 32}, c.Packet)
	require.Equal(t, Router{Switching: "vct", VCs: VCsAuto, VCBufferFlits: 32, Routing: Auto, Escape: Auto, InjectionFIFOs: 1}, c.Router)
	require.Equal(t, NIC{SendOverheadNS: 1300, RecvOverheadNS: 1300, Model: "none"}, c.NIC)
	require.Equal(t, Traffic{Pattern: "uniform", Load: 0.5, Process: "bernoulli", Fanout: 4, MessageBytes: 256, Multicast: "hardware", Software: "binomial", Groups: 64, Sources: 1, GroupPercent: 100, Program: "one-to-all", Colors: 1}, c.Traffic)
	require.Equal(t, Run{WarmupCycles: 10000, MeasureCycles: 50000, MaxCycles: 5000000, WatchdogCycles: 100000}, c.Run)

	// Default returns a fresh Dims slice every time.
	c.Network.Dims[0] = 99
	require.Equal(t, []int{8, 8}, Default().Network.Dims)
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, in := range []string{"", "\n", "# only a comment\n", "---\n", "~", "null", "---\n...\n"} {
		c, err := Parse([]byte(in))
		require.NoError(t, err, "%q", in)
		require.Equal(t, Default(), c, "%q", in)
	}
}

func TestParsePartialOverridesOnlyWhatItNames(t *testing.T) {
	in := `
name: fat
seed: -7
network:
  topology: fattree
  xp_buffer_packets: 2
link:
  gbps: 2.5
traffic: {pattern: bitrev, load: 0.9}
run:
  max_cycles: 1e7   # integral floats are fine for integer keys
`
	c, err := Parse([]byte(in))
	require.NoError(t, err)
	want := Default()
	want.Name = "fat"
	want.Seed = -7
	want.Network.Topology = "fattree"
	want.Network.XPBufferPackets = 2
	want.Link.Gbps = 2.5
	want.Traffic.Pattern = "bitrev"
	want.Traffic.Load = 0.9
	want.Run.MaxCycles = 10_000_000
	require.Equal(t, want, c)
}

func TestParseFullFile(t *testing.T) {
	in := `
name: table1
seed: 42
clock_mhz: 250
network:
  topology: ibmesh
  ports: 5
  inputs: 5
  organization: voq
  xp_buffer_packets: 8
  combine_units: 3
  nodes: 256
  dims: [16, 16]
  vls: 4
  vl_policy: per-direction
link: {gbps: 10, delay_ns: 20}
switch: {delay_ns: 90}
packet: {bytes: 2048}
nic: {send_overhead_ns: 1300, recv_overhead_ns: 1000}
traffic:
  pattern: multicast
  load: 1
  process: poisson
  fanout: 16
  message_bytes: 8192
  multicast: software
run: {warmup_cycles: 0, measure_cycles: 1, max_cycles: 1}
`
	c, err := Parse([]byte(in))
	require.NoError(t, err)
	require.Equal(t, "ibmesh", c.Network.Topology)
	require.Equal(t, []int{16, 16}, c.Network.Dims)
	require.Equal(t, 4, c.Network.VLs)
	require.Equal(t, 1000.0, c.NIC.RecvOverheadNS)
	require.Equal(t, "software", c.Traffic.Multicast)
	require.Equal(t, Run{WarmupCycles: 0, MeasureCycles: 1, MaxCycles: 1, WatchdogCycles: 100000}, c.Run)
}

func TestParseNumberSyntax(t *testing.T) {
	for _, tc := range []struct {
		in   string
		get  func(Config) any
		want any
	}{
		{"seed: 0x10", func(c Config) any { return c.Seed }, int64(16)},
		{"seed: -9223372036854775808", func(c Config) any { return c.Seed }, int64(-9223372036854775808)},
		{"run: {max_cycles: 1_000_000}", func(c Config) any { return c.Run.MaxCycles }, int64(1_000_000)},
		{"run: {max_cycles: 5e6}", func(c Config) any { return c.Run.MaxCycles }, int64(5_000_000)},
		{"network: {ports: 16.0}", func(c Config) any { return c.Network.Ports }, 16},
		{"link: {gbps: 25}", func(c Config) any { return c.Link.Gbps }, 25.0},
		{"link: {gbps: 2.5e1}", func(c Config) any { return c.Link.Gbps }, 25.0},
		{"name: 2024", func(c Config) any { return c.Name }, "2024"},
		{"name: true", func(c Config) any { return c.Name }, "true"},
		{"name: ''", func(c Config) any { return c.Name }, ""},
		{"network: {dims: [64, 32, 32], topology: torus}", func(c Config) any { return c.Network.Dims }, []int{64, 32, 32}},
		{"network: {dims: [2]}", func(c Config) any { return c.Network.Dims }, []int{2}},
		{"network:\n  dims:\n    - 4\n    - 4\n    - 4\n", func(c Config) any { return c.Network.Dims }, []int{4, 4, 4}},
		{"network:\n", func(c Config) any { return c.Network }, Default().Network}, // empty section keeps defaults
	} {
		c, err := Parse([]byte(tc.in))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, tc.get(c), tc.in)
	}
}

func TestInputsFollowPorts(t *testing.T) {
	for _, tc := range []struct {
		in            string
		ports, inputs int
	}{
		{"network: {ports: 32}", 32, 32},
		{"network: {ports: 32, inputs: 2}", 32, 2},
		{"network: {inputs: 2, ports: 32}", 32, 2},
		{"network: {inputs: 8, ports: 32}", 32, 8}, // explicit, even if equal to the default
		{"network: {inputs: 4}", 8, 4},
	} {
		c, err := Parse([]byte(tc.in))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.ports, c.Network.Ports, tc.in)
		require.Equal(t, tc.inputs, c.Network.Inputs, tc.in)
	}

	c := Default()
	require.NoError(t, c.Set("network.ports=16"))
	require.Equal(t, 16, c.Network.Inputs)
	require.NoError(t, c.Set("network.inputs=2"))
	require.NoError(t, c.Set("network.ports=32"))
	require.Equal(t, 2, c.Network.Inputs)
	require.Equal(t, 32, c.Network.Ports)

	// A parsed file with explicit inputs keeps them under a later --set.
	c, err := Parse([]byte("network: {inputs: 2}"))
	require.NoError(t, err)
	require.NoError(t, c.Set("network.ports=16"))
	require.Equal(t, 2, c.Network.Inputs)
}

func TestParseMergeAndAliases(t *testing.T) {
	c, err := Parse([]byte("link: &l {delay_ns: 30}\nswitch: {<<: *l}\n"))
	require.NoError(t, err)
	require.Equal(t, 30.0, c.Switch.DelayNS)

	c, err = Parse([]byte("link: &l {delay_ns: 30}\nswitch:\n  delay_ns: 40\n  <<: *l\n"))
	require.NoError(t, err)
	require.Equal(t, 40.0, c.Switch.DelayNS, "explicit keys override merged ones")

	c, err = Parse([]byte("link: {delay_ns: &d 33}\nswitch: {delay_ns: *d}\nnetwork: {dims: &dd [4, 4], topology: torus}\n"))
	require.NoError(t, err)
	require.Equal(t, 33.0, c.Switch.DelayNS)

	_, err = Parse([]byte("link: &l {gbps: 3}\nswitch: {<<: *l}\n"))
	requireKeyError(t, err, "switch.gbps", "unknown key", "allowed keys in switch: delay_ns")

	_, err = Parse([]byte("network: &a {<<: *a}"))
	requireKeyError(t, err, "network.<<", "merge")

	// an alias bomb through merges fails fast
	bomb := "link: {<<: [&a {delay_ns: 1}"
	for _, x := range []string{"a", "b", "c", "d", "e"} {
		bomb += ", &" + x + "x {<<: [" + strings.Repeat("*"+x+",", 9) + "*" + x + "]}"
		bomb = strings.Replace(bomb, "&"+x+"x", "&"+string(rune(x[0]+1)), 1)
	}
	bomb += "]}"
	_, err = Parse([]byte(bomb))
	requireKeyError(t, err, "link", "merge keys expand to too many entries")

	_, err = Parse([]byte("network: {<<: 5}"))
	requireKeyError(t, err, "network.<<", "merge needs a mapping")
}

// badInputs: every entry must fail with exactly one line naming key.
var badInputs = []struct {
	in, key string
	frags   []string
}{
	// unknown keys at each level
	{"foo: 1", "foo", []string{"unknown key; allowed keys: name, seed, clock_mhz, network, link, switch, router, packet, nic, msglayer, traffic, combine, dsm, run"}},
	{"network:\n  topolgy: torus", "network.topolgy", []string{"unknown key (did you mean network.topology?); allowed keys in network: topology, ports, inputs,"}},
	{"link: {speed: 10}", "link.speed", []string{"unknown key", "allowed keys in link: gbps, delay_ns"}},
	{"network: {\"a.b\": 1}", "network.a.b", []string{"unknown key; allowed keys in network: topology,"}},
	{"Network: {ports: 8}", "Network", []string{"unknown key (did you mean network?); allowed keys: name,"}},
	{"?\n?", `""`, []string{"duplicate key (lines 1 and 2)"}},
	{"network: {'': 1}", `network.""`, []string{"unknown key; allowed keys in network"}},
	{"network: {'a b': 1}", `network."a b"`, []string{"unknown key"}},
	{"run: {cycles: 10}", "run.cycles", []string{"allowed keys in run: warmup_cycles, measure_cycles, max_cycles"}},
	{"network: {ports: {x: 1}}", "network.ports", []string{"expected an integer; got a mapping"}},
	{"? [a]\n: 1", "", []string{"config: keys must be names; got a list as a key"}},
	{"network:\n  ? {a: 1}\n  : 1", "network", []string{"keys must be names; got a mapping as a key"}},
	{"network:\n  ports: 8\n  ports: 16", "network.ports", []string{"duplicate key (lines 2 and 3)"}},

	// wrong types
	{"seed: abc", "seed", []string{`"abc" is not an integer`}},
	{"seed: 99999999999999999999", "seed", []string{"out of range for a 64-bit integer"}},
	{"seed: 18446744073709551615", "seed", []string{"out of range for a 64-bit integer"}},
	{"seed: !!int abc", "seed", []string{"is not an integer"}},
	{"seed: .inf", "seed", []string{"is not an integer"}},
	{"name: [a]", "name", []string{"expected a string; got a list"}},
	{"name:", "name", []string{"missing value; expected a string"}},
	{"network: {ports: 2.5}", "network.ports", []string{"2.5 is not an integer"}},
	{"network: {ports: true}", "network.ports", []string{"true is not an integer"}},
	{"network: {ports: '8'}", "network.ports", []string{`"8" is not an integer`}},
	{"network: {ports: }", "network.ports", []string{"missing value; expected an integer"}},
	{"network: {ports: [8]}", "network.ports", []string{"expected an integer; got a list"}},
	{"link: {gbps: abc}", "link.gbps", []string{`"abc" is not a number`}},
	{"link: {gbps: true}", "link.gbps", []string{"true is not a number"}},
	{"link: {gbps: {a: 1}}", "link.gbps", []string{"expected a number; got a mapping"}},
	{"network: {dims: 8}", "network.dims", []string{"expected a list of integers"}},
	{"network: {dims: [8, x]}", "network.dims", []string{`entry 2: "x" is not an integer`}},
	{"network: {dims: [8, ~]}", "network.dims", []string{"entry 2: missing value"}},
	{"network: {dims: [8, [1]]}", "network.dims", []string{"entry 2: expected an integer; got a list"}},
	{"network: [1, 2]", "network", []string{"expected a mapping with keys topology, ports", "got a list"}},
	{"network: fattree", "network", []string{`got "fattree"`}},
	{"[1, 2]", "", []string{"config: expected a mapping with keys name, seed", "got a list"}},
	{"just text", "", []string{`got "just text"`}},

	// enums
	{"network: {topology: tree}", "network.topology", []string{`"tree" is not allowed; allowed: switch | fattree | torus | mesh | ibmesh | bgltree`}},
	{"network: {organization: OQ-XP}", "network.organization", []string{"allowed: oq-xp | iq-fifo | voq"}},
	{"network: {vl_policy: none}", "network.vl_policy", []string{"allowed: sl2vl | per-direction"}},
	{"traffic: {pattern: foo}", "traffic.pattern", []string{`"foo" is not allowed; allowed: uniform | transpose | bitrev | complement | shuffle | hotspot | tornado | neighbor | multicast | reduce | allreduce | barrier | broadcast | namd`}},
	{"traffic: {process: uniform}", "traffic.process", []string{"allowed: bernoulli | poisson"}},
	{"traffic: {multicast: yes}", "traffic.multicast", []string{`"yes" is not allowed; allowed: hardware | software`}},
	{"network: {vls: 3}", "network.vls", []string{"3 is not allowed; allowed: 1 | 2 | 4"}},

	// ranges
	{"clock_mhz: 0", "clock_mhz", []string{"0 is out of range; allowed (0, 10000]"}},
	{"clock_mhz: 10001", "clock_mhz", []string{"allowed (0, 10000]"}},
	{"clock_mhz: .nan", "clock_mhz", []string{"NaN is out of range"}},
	{"network: {ports: 1}", "network.ports", []string{"1 is out of range; allowed 2..256"}},
	{"network: {ports: 257}", "network.ports", []string{"allowed 2..256"}},
	{"network: {inputs: 0}", "network.inputs", []string{"0 is out of range; allowed 1..8 (network.ports)"}},
	{"network: {inputs: 9}", "network.inputs", []string{"9 is out of range; allowed 1..8"}},
	{"network: {ports: 16, inputs: 17}", "network.inputs", []string{"allowed 1..16"}},
	{"network: {xp_buffer_packets: 0}", "network.xp_buffer_packets", []string{"allowed 1..1024"}},
	{"network: {xp_buffer_packets: 1025}", "network.xp_buffer_packets", []string{"allowed 1..1024"}},
	{"network: {combine_units: 0}", "network.combine_units", []string{"allowed 1..64"}},
	{"network: {combine_units: 65}", "network.combine_units", []string{"allowed 1..64"}},
	{"network: {nodes: 1}", "network.nodes", []string{"allowed 2..1048576"}},
	{"network: {nodes: 1048577}", "network.nodes", []string{"allowed 2..1048576"}},
	{"network: {dims: []}", "network.dims", []string{"[] has 0 entries; allowed 1..3 entries"}},
	{"network: {dims: [2, 2, 2, 2]}", "network.dims", []string{"[2,2,2,2] has 4 entries"}},
	{"network: {dims: [8, 1]}", "network.dims", []string{"entry 2 is 1, out of range; allowed 1..3 entries, each 2..1024"}},
	{"network: {dims: [1025]}", "network.dims", []string{"entry 1 is 1025"}},
	{"network: {dims: [1024, 1024, 2]}", "network.dims", []string{"[1024,1024,2] has 2097152 nodes; allowed at most 1048576"}},
	{"link: {gbps: 0}", "link.gbps", []string{"0 is out of range; allowed (0, 10000]"}},
	{"link: {gbps: -1}", "link.gbps", []string{"-1 is out of range"}},
	{"link: {gbps: .inf}", "link.gbps", []string{"+Inf is out of range"}},
	{"link: {delay_ns: -1}", "link.delay_ns", []string{"-1 is out of range; allowed 0..1000000000"}},
	{"switch: {delay_ns: 1e10}", "switch.delay_ns", []string{"1e+10 is out of range; allowed 0..1000000000"}},
	{"packet: {bytes: 7}", "packet.bytes", []string{"allowed 8..65536"}},
	{"packet: {bytes: 65537}", "packet.bytes", []string{"allowed 8..65536"}},
	{"nic: {send_overhead_ns: -0.5}", "nic.send_overhead_ns", []string{"allowed 0..1000000000"}},
	{"nic: {recv_overhead_ns: .nan}", "nic.recv_overhead_ns", []string{"NaN is out of range"}},
	{"traffic: {load: 0}", "traffic.load", []string{"0 is out of range; allowed (0, 1]"}},
	{"traffic: {load: 1.01}", "traffic.load", []string{"allowed (0, 1]"}},
	{"traffic: {load: -0.1}", "traffic.load", []string{"allowed (0, 1]"}},
	{"traffic: {fanout: 0}", "traffic.fanout", []string{"allowed 1..1048576"}},
	{"traffic: {message_bytes: 0}", "traffic.message_bytes", []string{"allowed 1..1073741824"}},
	{"run: {warmup_cycles: -1}", "run.warmup_cycles", []string{"allowed 0..1000000000000"}},
	{"run: {measure_cycles: 0}", "run.measure_cycles", []string{"allowed 1..1000000000000"}},
	{"run: {max_cycles: 59999}", "run.max_cycles", []string{"59999 is out of range; allowed 60000..10000000000000 (run.warmup_cycles+run.measure_cycles"}},
	{"run: {max_cycles: 10000000000001}", "run.max_cycles", []string{"out of range"}},

	// YAML syntax: one line with the line number, no key
	{"network:\n  ports: [1,\n", "", []string{"yaml: line"}},
	{"a: [", "", []string{"yaml: line 1:"}},
	{"network:\n\tports: 8\n", "", []string{"yaml: line 2:"}},
	{"name: a\n---\nname: b\n", "", []string{"exactly one YAML document"}},
	{"name: a\n---\n[\n", "", []string{"yaml: line"}},
	{"name: *nope", "", []string{"yaml: line 1: unknown anchor 'nope' referenced"}},
	{"name: a\nseed: *nope", "", []string{"yaml: line 2: unknown anchor"}},
	{"name: a\nseed: \x06", "", []string{"yaml: line 2: control characters are not allowed"}},
	{"name: a\n\nseed: \xff", "", []string{"yaml: line 3:"}},
	{"]]", "", []string{"yaml: line 1: did not find expected node content"}},
}

func TestParseBadInputs(t *testing.T) {
	for _, tc := range badInputs {
		t.Run(tc.in, func(t *testing.T) {
			c, err := Parse([]byte(tc.in))
			requireKeyError(t, err, tc.key, tc.frags...)
			require.Equal(t, Config{}, c)
		})
	}
}

// Every enumerated key rejects a value not in its list and accepts every
// value in it, via YAML and via Set.
func TestEveryEnum(t *testing.T) {
	n := 0
	for _, k := range Keys() {
		if k.Type != "string" || !strings.Contains(k.Allowed, " | ") {
			continue
		}
		n++
		_, err := Parse([]byte(yamlFor(k.Key, "bogus")))
		requireKeyError(t, err, k.Key, "is not allowed; allowed: "+k.Allowed)
		c := Default()
		requireKeyError(t, c.Set(k.Key+"=bogus"), k.Key, "allowed: "+k.Allowed)
		for _, v := range strings.Split(k.Allowed, " | ") {
			in := yamlFor(k.Key, v)
			if k.Key == "network.topology" && v == "ibmesh" {
				in += "  dims: [4, 4]\n"
			}
			if k.Key == "nic.model" && v == "msglayer" { // a program run on a torus or mesh only
				in += "network: {topology: torus}\ntraffic: {pattern: program}\n"
			}
			_, err := Parse([]byte(in))
			require.NoError(t, err, in)
			c := Default()
			require.NoError(t, c.Set(k.Key+"="+v))
		}
	}
	require.Equal(t, 22, n) // + combine.op, combine.type, combine.float_mode, msglayer.protocol, dsm.directory, dsm.consistency
}

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want func(*Config)
	}{
		{[]string{"network.ports=32"}, func(c *Config) { c.Network.Ports, c.Network.Inputs = 32, 32 }},
		{[]string{" network.ports = 32 "}, func(c *Config) { c.Network.Ports, c.Network.Inputs = 32, 32 }},
		{[]string{"link.gbps=2.5"}, func(c *Config) { c.Link.Gbps = 2.5 }},
		{[]string{"link.gbps=3"}, func(c *Config) { c.Link.Gbps = 3 }},
		{[]string{"network.dims=[4,4,4]"}, func(c *Config) { c.Network.Dims = []int{4, 4, 4} }},
		{[]string{"network.dims=[4, 4, 4]"}, func(c *Config) { c.Network.Dims = []int{4, 4, 4} }},
		{[]string{"network.dims=4,4,4"}, func(c *Config) { c.Network.Dims = []int{4, 4, 4} }},
		{[]string{"network.dims=64x32x32"}, func(c *Config) { c.Network.Dims = []int{64, 32, 32} }},
		{[]string{"network.dims=16"}, func(c *Config) { c.Network.Dims = []int{16} }},
		{[]string{"name=my run = 2"}, func(c *Config) { c.Name = "my run = 2" }},
		{[]string{"name=true"}, func(c *Config) { c.Name = "true" }},
		{[]string{"name= spaced "}, func(c *Config) { c.Name = " spaced " }},
		{[]string{"name="}, func(c *Config) { c.Name = "" }},
		{[]string{"seed=-5"}, func(c *Config) { c.Seed = -5 }},
		{[]string{"run.max_cycles=5e6"}, func(c *Config) { c.Run.MaxCycles = 5_000_000 }},
		{[]string{"run.max_cycles=1_000_000"}, func(c *Config) { c.Run.MaxCycles = 1_000_000 }},
		{[]string{"traffic.pattern=namd", "traffic.fanout=16"}, func(c *Config) { c.Traffic.Pattern, c.Traffic.Fanout = "namd", 16 }},
		{[]string{"network.topology=ibmesh", "network.vls=4"}, func(c *Config) { c.Network.Topology, c.Network.VLs = "ibmesh", 4 }},
		// cross-key rules are left to Validate, so the order of --set does not matter
		{[]string{"network.inputs=16", "network.ports=16"}, func(c *Config) { c.Network.Ports, c.Network.Inputs, c.Network.inputsSet = 16, 16, true }},
	} {
		c := Default()
		for _, s := range tc.set {
			require.NoError(t, c.Set(s), s)
		}
		want := Default()
		tc.want(&want)
		if !want.Network.inputsSet {
			c.Network.inputsSet = false
		}
		require.Equal(t, want, c, tc.set)
		require.NoError(t, c.Validate(), tc.set)
	}
}

func TestSetErrors(t *testing.T) {
	for _, tc := range []struct {
		set, key string
		frags    []string
	}{
		{"network.ports", "network.ports", []string{"missing '='; expected key=value"}},
		{"", "", []string{`--set "": expected key=value`}},
		{"=5", "", []string{`--set "=5": empty key`}},
		{"network.foo=1", "network.foo", []string{"unknown key; allowed keys in network: topology, ports"}},
		{"network.prots=1", "network.prots", []string{"did you mean network.ports?"}},
		{"foo=1", "foo", []string{"unknown key; allowed keys: name, seed"}},
		{"foo.bar=1", "foo.bar", []string{"unknown key; allowed keys: name, seed"}},
		{"netwrk.ports=1", "netwrk.ports", []string{"unknown key (did you mean network?); allowed keys: name, seed"}},
		{"network.a.b=1", "network.a.b", []string{"unknown key; allowed keys in network: topology"}},
		{"network..ports=1", "network..ports", []string{"unknown key; allowed keys in network: topology"}},
		{".=1", ".", []string{"unknown key; allowed keys: name"}},
		{"network=1", "network", []string{"is a section, not a value; set one of: network.topology, network.ports"}},
		{"network.ports.x=1", "network.ports.x", []string{"network.ports is a value and has no sub-keys"}},
		{"network.ports=", "network.ports", []string{"missing value; expected an integer"}},
		{"network.ports=abc", "network.ports", []string{`"abc" is not an integer`}},
		{"network.ports=true", "network.ports", []string{"true is not an integer"}},
		{"network.ports=8.5", "network.ports", []string{"8.5 is not an integer"}},
		{"network.ports=[8]", "network.ports", []string{"expected an integer; got a list"}},
		{"network.ports=1", "network.ports", []string{"1 is out of range; allowed 2..256"}},
		{"network.ports=a: b", "network.ports", []string{"expected an integer; got a mapping"}},
		{"link.gbps=fast", "link.gbps", []string{`"fast" is not a number`}},
		{"link.gbps=false", "link.gbps", []string{"false is not a number"}},
		{"link.gbps=0", "link.gbps", []string{"allowed (0, 10000]"}},
		{"traffic.load=2", "traffic.load", []string{"allowed (0, 1]"}},
		{"network.dims=[4,4", "network.dims", []string{`"[4,4" is not a list of integers`, "yaml: line 1"}},
		{"network.dims=4,x", "network.dims", []string{`entry 2: "x" is not an integer`}},
		{"network.dims=,", "network.dims", []string{`"," is not a list of integers`}},
		{"network.dims=4,,4", "network.dims", []string{"entry 2: missing value"}},
		{"network.dims=4x", "network.dims", []string{"entry 2: missing value"}},
		{"network.dims=4;4", "network.dims", []string{`entry 1: "4;4" is not an integer`}},
		{"network.dims=", "network.dims", []string{"missing value"}},
		{"network.ports=# none", "network.ports", []string{"missing value; expected an integer"}},
		{"traffic.pattern=foo", "traffic.pattern", []string{`"foo" is not allowed; allowed: uniform |`}},
		{"network.vls=3", "network.vls", []string{"allowed: 1 | 2 | 4"}},
	} {
		c := Default()
		err := c.Set(tc.set)
		require.Error(t, err, tc.set)
		requireKeyError(t, err, tc.key, tc.frags...)
		require.Equal(t, Default(), c, "a failed Set leaves the config unchanged: %q", tc.set)
	}

	// cross-key rules surface in Validate
	c := Default()
	require.NoError(t, c.Set("network.inputs=9"))
	requireKeyError(t, c.Validate(), "network.inputs", "allowed 1..8")
	require.NoError(t, c.Set("run.max_cycles=100"))
	require.NoError(t, c.Set("network.inputs=8"))
	requireKeyError(t, c.Validate(), "run.max_cycles", "100 is out of range; allowed 60000..")
}

func TestGet(t *testing.T) {
	c := Default()
	v, err := c.Get("network.dims")
	require.NoError(t, err)
	require.Equal(t, "[8,8]", v)
	v, err = c.Get("traffic.load")
	require.NoError(t, err)
	require.Equal(t, "0.5", v)
	_, err = c.Get("network.nope")
	requireKeyError(t, err, "network.nope", "unknown key")
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("network:\n  ports: 32\n"), 0o644))
	c, err := Load(good)
	require.NoError(t, err)
	require.Equal(t, 32, c.Network.Ports)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("network:\n  ports: 1\n"), 0o644))
	_, err = Load(bad)
	require.EqualError(t, err, bad+": network.ports: 1 is out of range; allowed 2..256")
	var ce *Error
	require.True(t, errors.As(err, &ce))
	require.Equal(t, "network.ports", ce.Key)

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "missing.yaml")
	require.NotContains(t, err.Error(), "\n")
}

func TestErrorIsOneLine(t *testing.T) {
	e := &Error{Key: "a\nb", Msg: "line one\nline two\r\n\tthree"}
	require.Equal(t, "a b: line one line two three", e.Error())
	require.Equal(t, "just a message", (&Error{Msg: "just\na message"}).Error())
}

// The message layer's keys: nic.model msglayer only for a program run on
// a torus or mesh, the bool key in YAML and --set, the protocol table in
// order, the high-priority lead only with bgl's VC 3.
func TestMsgLayerKeys(t *testing.T) {
	ok := func(sets ...string) Config {
		c := Default()
		for _, s := range append([]string{"network.topology=torus", "traffic.pattern=program", "nic.model=msglayer"}, sets...) {
			require.NoError(t, c.Set(s), s)
		}
		require.NoError(t, c.Validate(), "%v", sets)
		return c
	}
	c := ok("msglayer.high_priority_lead=true", "router.routing=bgl", "router.vcs=4", "msglayer.protocol=rendezvous")
	require.True(t, c.MsgLayer.HighPriorityLead)
	require.Equal(t, "rendezvous", c.MsgLayer.Protocol)
	v, err := c.Get("msglayer.high_priority_lead")
	require.NoError(t, err)
	require.Equal(t, "true", v)
	require.Equal(t, MsgLayer{Protocol: "auto", EagerMaxBytes: 1024, MidsizeMaxBytes: 16384, Leads: 4}, Default().MsgLayer)

	y, err := Parse([]byte("network: {topology: mesh}\ntraffic: {pattern: program}\nnic: {model: msglayer}\nmsglayer: {high_priority_lead: false, leads: 0}\n"))
	require.NoError(t, err)
	require.Equal(t, 0, y.MsgLayer.Leads)

	bad := func(key string, frag string, sets ...string) {
		c := Default()
		var err error
		for _, s := range sets {
			if err = c.Set(s); err != nil {
				break
			}
		}
		if err == nil {
			err = c.Validate()
		}
		requireKeyError(t, err, key, frag)
	}
	bad("nic.model", "not traffic.pattern uniform", "network.topology=torus", "nic.model=msglayer")
	bad("msglayer.protocol", "allowed: auto | eager | single | midsize | rendezvous", "msglayer.protocol=fast")
	bad("msglayer.high_priority_lead", "is not true or false", "msglayer.high_priority_lead=maybe")
	bad("msglayer.high_priority_lead", "router.routing bgl", "network.topology=torus", "traffic.pattern=program", "nic.model=msglayer", "msglayer.high_priority_lead=true")
	bad("msglayer.midsize_max_bytes", "allowed 1024..16777216", "msglayer.midsize_max_bytes=512")
	bad("msglayer.leads", "allowed 0..65536", "msglayer.leads=-1")
	_, err = Parse([]byte("msglayer: {high_priority_lead: [1]}\n"))
	requireKeyError(t, err, "msglayer.high_priority_lead", "expected true or false")
}

// A list of fault paths splits at the commas between entries, not inside
// a path's coordinates.
func TestSetKeepsCoordinatesTogether(t *testing.T) {
	c := Default()
	require.NoError(t, c.Set("faults=top.net.r(1,0).out(1)@0,top.net.r(2)(0).out(1)@9"))
	require.Equal(t, []string{"top.net.r(1,0).out(1)@0", "top.net.r(2)(0).out(1)@9"}, c.Faults)
}
