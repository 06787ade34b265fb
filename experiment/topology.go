package experiment

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

// Network is a built experiment, ready to trace and run: a load run or a
// collective on any topology.
type Network interface {
	// Simulator is the network's kernel (run.go closes it after the run;
	// a signal handler calls its Stop).
	Simulator() *rtl.Sim
	Trace(w io.Writer, globs string) error
	Run() Result
}

// Capturer is a Network that records the packets on its links into a
// pcap file (Abilities.Pcap): links are globs over link paths, "" every
// link.
type Capturer interface {
	Capture(w io.Writer, links string) error
}

// LinkStater is a Network whose links may have bit errors and retry
// (Abilities.Retry): the errors and resends of its links, for the result.
type LinkStater interface {
	LinkStats() link.RetryStats
}

// Topology is what one value of network.topology offers the runner, the
// sweeps and the command line. A new network is its netlist package plus
// one Topology registered (Register, from an init function in one file of
// its own): nothing else in the command, the sweeps or the runner names
// it; they ask the registration. Build, Reads, Describe and Weight are
// required, the rest optional.
type Topology struct {
	Name string
	// Build makes cfg's experiment, elaborated, with tm = cfg.Timing()
	// (converted once, by Run); a bad config is an error of one line,
	// naming the key or a block's parameter (Run renames those to keys).
	// Elaborated(maker) is a Build from a function that makes the
	// network without elaborating it.
	Build func(cfg config.Config, tm config.Timing) (Network, error)
	// Reads lists the keys of the network and router sections Build
	// reads of cfg (network.topology aside); Check refuses the others when
	// they are set away from their defaults.
	Reads func(cfg config.Config) []string
	// Router, when set, is how a network of router blocks builds its
	// netlist: such a network also runs DSM programs (traffic.pattern
	// dsm), whose nodes attach to its routers' node ports.
	Router func(cfg config.Config) (RouterNetlist, error)
	// Describe says what a result ran on, e.g. "8-port oq-xp (min-free
	// credits, 4-packet buffers)", for hwcoll run's summary.
	Describe func(r Result) string
	// Weight is the rough cost of one packet-cycle of cfg relative to a
	// single switch port (the figures' job order).
	Weight func(cfg config.Config) float64

	// Abilities say what the networks can do beyond a load run on
	// perfect links; Check refuses the rest, naming the topologies that
	// can.
	Abilities Abilities
	// Check refuses what cfg asks of this topology that it cannot do,
	// before anything is built (one line naming the key).
	Check func(cfg config.Config) error
	// Memory estimates the state cfg's network takes, the key that sizes
	// it and what it is ("a 4096-node fat-tree"): Run refuses a network
	// the machine cannot hold before building it. Nil or 0: small.
	Memory func(cfg config.Config) (bytes uint64, key, what string)
	// Groups arranges traced signals for the .gtkw (nil: one group per
	// module).
	Groups func(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group
	// Summary says, for hwcoll run's summary, whether r ran to
	// completion (one collective, one multicast) rather than under load,
	// and how the work was done ("the routers' ALUs"). Nil: collective
	// patterns run to completion, through combine units or software.
	Summary func(r Result) (how string, completion bool)
	// Report describes the network a sweep's results ran on, for its
	// report (nil: SwitchesOf).
	Report func(rs []Result) string
	// Defaults resolves what cfg leaves to the topology (router.routing
	// auto and the like) to what the topology and its routing need;
	// Resolve calls it before anything is checked or built.
	Defaults func(cfg *config.Config)
	// Demo is the network's section of hwcoll demo (make run), nil for
	// none.
	Demo *Demo
}

// Abilities are what a topology's networks can do beyond a load run.
type Abilities struct {
	Retry    bool // link.ber > 0: bit errors and link-level retry (its Network a LinkStater)
	Faults   bool // faults: links that go down during the run
	Pcap     bool // --pcap: its Network a Capturer
	Programs bool // traffic.pattern program
	MsgLayer bool // nic.model msglayer: programs on the message layer's endpoints
}

var (
	topologies = map[string]Topology{}
	order      []string // registration order, for messages
)

// Register adds a topology; a name registered twice, or a registration
// without Build, Reads, Describe or Weight, is a programming error.
func Register(t Topology) {
	if _, dup := topologies[t.Name]; dup || t.Name == "" || t.Build == nil || t.Describe == nil || t.Weight == nil || t.Reads == nil {
		panic(fmt.Sprintf("experiment: topology %q registered twice or incomplete (Build, Reads, Describe and Weight are required)", t.Name))
	}
	t = dsmTopology(t)
	if t.Defaults != nil { // a Build called directly resolves as Run does
		build, defaults := t.Build, t.Defaults
		t.Build = func(cfg config.Config, tm config.Timing) (Network, error) {
			defaults(&cfg)
			return build(cfg, tm)
		}
	}
	topologies[t.Name] = t
	order = append(order, t.Name)
}

// Unregister removes a registered topology: for a test that registers one
// of its own (and must leave the registry as it found it).
func Unregister(name string) {
	if _, ok := topologies[name]; !ok {
		return
	}
	delete(topologies, name)
	order = slices.DeleteFunc(order, func(n string) bool { return n == name })
}

// TopologyOf returns the registered topology of cfg, or an error naming
// network.topology and the topologies built.
func TopologyOf(cfg config.Config) (Topology, error) {
	t, ok := topologies[cfg.Network.Topology]
	if !ok {
		return Topology{}, fmt.Errorf("network.topology: %q has no model yet; allowed now: %s", cfg.Network.Topology, strings.Join(Topologies(), " | "))
	}
	return t, nil
}

// Topologies lists the registered topology names in registration order.
func Topologies() []string { return slices.Clone(order) }

// able lists, in registration order, the topologies with an ability:
// "fattree, torus and mesh".
func able(has func(Abilities) bool) string {
	var names []string
	for _, n := range order {
		if has(topologies[n].Abilities) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// checkAbilities refuses what cfg asks that t's networks cannot do, naming
// the topologies that can.
func checkAbilities(cfg config.Config, t Topology) error {
	a, name := t.Abilities, t.Name
	switch {
	case cfg.Traffic.Pattern == config.PatternDSM && t.Router == nil:
		return fmt.Errorf("traffic.pattern: dsm runs on a network of router blocks, not on network.topology %s; allowed network.topology with it: %s", name, strings.Join(dsmTopologies(), " | "))
	case cfg.Link.BER > 0 && !a.Retry:
		return fmt.Errorf("link.ber: %g; bit errors and link-level retry are built for network.topology %s so far; allowed for %s: 0",
			cfg.Link.BER, able(func(a Abilities) bool { return a.Retry }), name)
	case len(cfg.Faults) > 0 && !a.Faults:
		return fmt.Errorf("faults: link faults are built for network.topology %s; not for %s", able(func(a Abilities) bool { return a.Faults }), name)
	case cfg.NIC.Model == config.NICMsgLayer && !a.MsgLayer:
		return fmt.Errorf("nic.model: msglayer endpoints are built on network.topology %s, not on %s; allowed there: none | overhead",
			able(func(a Abilities) bool { return a.MsgLayer }), name)
	case cfg.Traffic.Pattern == config.PatternProgram && !a.Programs:
		return fmt.Errorf("traffic.pattern: program runs on network.topology %s; not on %s", able(func(a Abilities) bool { return a.Programs }), name)
	}
	return nil
}

// Describe is the registered topology's description of r (the topology
// name if it is not registered).
func Describe(r Result) string {
	if t, ok := topologies[r.Topology]; ok {
		return t.Describe(r)
	}
	return r.Topology
}

// Weight is cfg's relative cost per packet-cycle (1 if its topology is not
// registered).
func Weight(cfg config.Config) float64 {
	if t, ok := topologies[cfg.Network.Topology]; ok {
		return t.Weight(cfg)
	}
	return 1
}

// Summary says whether r ran to completion and how its work was done
// (Topology.Summary), for hwcoll run's summary.
func Summary(r Result) (how string, completion bool) {
	if t, ok := topologies[r.Topology]; ok && t.Summary != nil {
		return t.Summary(r)
	}
	return combineSummary(r)
}

// combineSummary is the summary of a collective on switches: through
// their combine units, or in software through the NICs.
func combineSummary(r Result) (string, bool) {
	if !IsCollective(r.Pattern) {
		return "", false
	}
	if r.Multicast == config.MulticastSoftware {
		return "software, " + r.Algorithm + " tree through the NICs", true
	}
	return fmt.Sprintf("%d combine unit(s) per switch", r.CombineUnits), true
}

// NetworkOf describes the network a sweep's results ran on (the first
// result's topology's Report; SwitchesOf without one).
func NetworkOf(rs []Result) string {
	if len(rs) == 0 {
		return ""
	}
	if t, ok := topologies[rs[0].Topology]; ok && t.Report != nil {
		return t.Report(rs)
	}
	return SwitchesOf(rs)
}

// Groups arranges a run's traced signals for its GTKWave save file: the
// topology's own grouping (Topology.Groups), or one group per module.
func Groups(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group {
	if t, ok := topologies[cfg.Network.Topology]; ok && t.Groups != nil {
		return t.Groups(cfg, sigs)
	}
	return tb.ByModule(sigs)
}

func init() {
	config.TopologyNames = Topologies
}
