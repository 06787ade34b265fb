package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// unreadBases are small runs of every topology and of every kind of run
// each has (load, multicast, collectives, NICs, programs, the message
// layer), from the defaults.
var unreadBases = []struct {
	name string
	sets []string
}{
	{config.TopologySwitch, []string{"traffic.load=0.5"}},
	{config.TopologySwitch, []string{"traffic.pattern=multicast"}},
	{config.TopologySwitch, []string{"traffic.pattern=allreduce"}},
	{config.TopologySwitch, []string{"traffic.pattern=barrier"}},
	{config.TopologyFatTree, []string{"network.nodes=16"}},
	{config.TopologyFatTree, []string{"network.nodes=16", "traffic.pattern=multicast"}},
	{config.TopologyFatTree, []string{"network.nodes=16", "traffic.pattern=namd", "traffic.load=0.1", "run.measure_cycles=5000"}},
	{config.TopologyFatTree, []string{"network.nodes=16", "nic.model=overhead", "traffic.load=0.1"}},
	{config.TopologyFatTree, []string{"network.nodes=16", "traffic.pattern=allreduce"}},
	{config.TopologyFatTree, []string{"network.nodes=16", "traffic.pattern=reduce", "traffic.multicast=software"}},
	{config.TopologyMIN, []string{"network.ports=2", "network.nodes=16", "router.routing=updown"}},
	{config.TopologyMIN, []string{"network.ports=2", "network.nodes=16", "router.routing=updown", "traffic.pattern=program"}},
	{config.TopologyIrreg, []string{"router.routing=updown"}},
	{config.TopologyIrreg, []string{"router.routing=updown", "network.irregular_file=" + irregularFile}},
	{config.TopologyTorus, []string{"network.dims=4,4"}},
	{config.TopologyTorus, []string{"network.dims=4,4", "traffic.pattern=program"}},
	{config.TopologyTorus, []string{"network.dims=4,4", "traffic.pattern=broadcast", "traffic.multicast=software"}},
	{config.TopologyTorus, []string{"network.dims=4,4", "traffic.pattern=program", "nic.model=msglayer"}},
	{config.TopologyMesh, []string{"network.dims=4,4"}},
	{config.TopologyMesh, []string{"network.dims=3,3", "traffic.pattern=dsm", "traffic.program=lock-contention", "dsm.problem_size=3"}},
	{config.TopologyMIN, []string{"network.ports=2", "network.nodes=8", "router.routing=updown", "traffic.pattern=dsm", "traffic.program=migratory", "dsm.problem_size=2", "dsm.directory=limited-no-broadcast"}},
	{config.TopologyIBMesh, []string{"network.dims=4,4", "traffic.pattern=multicast", "traffic.sources=1", "traffic.message_bytes=1024"}},
	{config.TopologyBGLTree, []string{"network.nodes=64", "traffic.pattern=allreduce"}},
}

const irregularFile = "../irregular/testdata/random16.txt"

// unreadValues are values away from the default for every key a run may
// not read, each valid on its own.
var unreadValues = map[string]string{
	"network.ports": "4", "network.inputs": "1", "network.organization": "voq",
	"network.xp_buffer_packets": "2", "network.credit_mode": "per-link", "network.fanout_splitting": "off",
	"network.iterations": "2", "network.combine_units": "2", "network.nodes": "64", "network.dims": "4,2",
	"network.vls": "2", "network.vl_policy": "per-direction", "network.tree_builder": "simple",
	"network.min_kind": "butterfly", "network.irregular_file": irregularFile,
	"network.switches": "8", "network.degree": "3",
	"router.switching": "wormhole", "router.vcs": "3", "router.vc_buffer_flits": "16", "router.injection_fifos": "3",
	"router.routing": "west-first", "router.escape": "bubble",
	"link.ber": "1e-6", "link.resend_buffer": "4", "link.retry_timeout": "100",
	"packet.bytes": "128", "packet.flit_bytes": "16",
	"nic.send_overhead_ns": "500", "nic.recv_overhead_ns": "700", "nic.model": "overhead",
	"nic.send_packet_ns": "10", "nic.recv_packet_ns": "20",
	"msglayer.protocol": "eager", "msglayer.eager_max_bytes": "2048", "msglayer.midsize_max_bytes": "32768",
	"msglayer.leads": "2", "msglayer.high_priority_lead": "true",
	"traffic.load": "0.3", "traffic.process": "poisson", "traffic.fanout": "3", "traffic.message_bytes": "512",
	"traffic.multicast": "software", "traffic.software": "sequential", "traffic.groups": "8",
	"traffic.io_load": "0.1", "traffic.sources": "2", "traffic.group_percent": "50", "traffic.program": "all-to-one", "traffic.colors": "3",
	"combine.elements_per_cycle": "4", "combine.op": "max", "combine.type": "int32", "combine.float_mode": "naive",
	"dsm.problem_size": "2", "dsm.directory": "limited-broadcast", "dsm.pointers": "2", "dsm.consistency": "rc",
	"dsm.virtual_networks": "1", "dsm.cpi": "2", "dsm.cache_bytes": "65536", "dsm.cache_ways": "2", "dsm.line_bytes": "32",
	"dsm.transaction_buffers": "4", "dsm.handler_cycles": "3", "dsm.memory_cycles": "10", "dsm.ni_queue": "8",
	"dsm.run_ahead": "8", "dsm.watch_line": "3",
	"run.warmup_cycles": "200", "run.measure_cycles": "1500", "run.watchdog_cycles": "5000",
	"faults": "top.net.r(0)(0).out(1)@100",
}

// A key that a run does not read is refused when set away from its
// default, in one line naming the key and what was run; and each refusal
// is right: run anyway, with the check skipped, the key changes nothing in
// the results (an independent check of every topology's Reads).
func TestUnreadKeysAreRefused(t *testing.T) {
	for _, k := range config.Keys() {
		if !slices.Contains(alwaysRead, k.Key) {
			require.Contains(t, unreadValues, k.Key, "a new key needs a value here")
		}
	}
	covered := map[string]bool{}
	for _, b := range unreadBases {
		covered[b.name] = true
	}
	for _, name := range Topologies() {
		require.True(t, covered[name], "%s has no base run here", name)
	}
	for _, b := range unreadBases {
		name, sets := b.name, b.sets
		top := topologies[name]
		base := config.Default()
		for _, s := range append([]string{"network.topology=" + name}, sets...) {
			require.NoError(t, base.Set(s), s)
		}
		if slices.Contains(top.Reads(base), "run.measure_cycles") && base.Run.MeasureCycles == config.Default().Run.MeasureCycles {
			require.NoError(t, base.Set("run.warmup_cycles=100"))
			require.NoError(t, base.Set("run.measure_cycles=1000"))
		}
		require.NoError(t, base.Validate())
		want, err := Run(base, Options{})
		require.NoError(t, err, "%s %v", name, sets)
		require.Empty(t, want.Error, "%s %v", name, sets)
		for _, k := range config.Keys() {
			if slices.Contains(alwaysRead, k.Key) {
				continue
			}
			cfg := base
			require.NoError(t, cfg.Set(k.Key+"="+unreadValues[k.Key]), k.Key)
			read := top.Reads(cfg)
			toCompletion := !slices.Contains(read, "run.measure_cycles")
			if cfg.Validate() != nil || slices.Contains(read, k.Key) || checkAbilities(cfg, top) != nil {
				continue
			}
			if toCompletion && slices.Contains(loadRunKeys, k.Key) {
				// Left be; and rightly: the run does not change.
				got, err := Run(cfg, Options{})
				require.NoError(t, err, "%s on %s %v", k.Key, name, sets)
				require.Equal(t, comparable(want), comparable(got), "%s changes a %s run %v", k.Key, name, sets)
				continue
			}
			_, err := Run(cfg, Options{})
			require.Error(t, err, "%s on %s %v", k.Key, name, sets)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, k.Key+": "), msg)
			require.Contains(t, msg, "network.topology "+name)
			require.NotContains(t, msg, "\n")

			got, err := run(cfg, top, Options{})
			if err != nil {
				continue // the build refuses it too
			}
			require.Equal(t, comparable(want), comparable(got), "%s changes a %s run %v: add it to the topology's Reads", k.Key, name, sets)
		}
	}
}

// comparable is r without what differs between identical runs.
func comparable(r Result) Result {
	r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS = 0, 0, 0
	return r
}
