package experiment

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// Network is a built experiment, ready to trace and run: a load run or a
// collective on any topology.
type Network interface {
	sim() *rtl.Sim
	Trace(w io.Writer, globs string) error
	Run() Result
}

// Topology is what one value of network.topology offers the runner and the
// command line. A new network is its netlist package plus one Topology
// registered here (Register, from an init function): Run, hwcoll run's
// summary line and the figures' job order need nothing else.
type Topology struct {
	Name string
	// Build makes cfg's experiment, elaborated, with tm = cfg.Timing()
	// (converted once, by Run); a bad config is an error of one line,
	// naming the key or a block's parameter (Run renames those to keys).
	Build func(cfg config.Config, tm config.Timing) (Network, error)
	// Describe says what a result ran on, e.g. "8-port oq-xp (min-free
	// credits, 4-packet buffers)", for hwcoll run's summary.
	Describe func(r Result) string
	// Weight is the rough cost of one packet-cycle of cfg relative to a
	// single switch port (the figures' job order).
	Weight func(cfg config.Config) float64
	// Groups arranges traced signals for the .gtkw (optional; default one
	// group per module).
	Groups func(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group
	// Reads lists the keys of the network and router sections Build
	// reads of cfg (network.topology aside); Run refuses the others when
	// they are set away from their defaults (checkUnread).
	Reads func(cfg config.Config) []string
}

var (
	topologies = map[string]Topology{}
	order      []string // registration order, for messages
)

// Register adds a topology; a name registered twice is a programming error.
func Register(t Topology) {
	if _, dup := topologies[t.Name]; dup || t.Build == nil || t.Describe == nil || t.Weight == nil || t.Reads == nil {
		panic(fmt.Sprintf("experiment: topology %q registered twice or incomplete", t.Name))
	}
	topologies[t.Name] = t
	order = append(order, t.Name)
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

func init() {
	Register(Topology{
		Name:  config.TopologySwitch,
		Reads: always(switchKeys),
		Build: func(cfg config.Config, tm config.Timing) (Network, error) {
			if err := refuseNIC(cfg); err != nil {
				return nil, err
			}
			if err := refuseProgram(cfg); err != nil {
				return nil, err
			}
			if IsCollective(cfg.Traffic.Pattern) {
				return asNetwork(buildCollective(cfg, tm))
			}
			return asNetwork(buildSwitch(cfg, tm))
		},
		Describe: func(r Result) string {
			return fmt.Sprintf("%d-port %s (%s credits, %d-packet buffers)", r.Ports, r.Organization, r.CreditMode, r.XPBuffer)
		},
		Weight: func(cfg config.Config) float64 { return float64(cfg.Network.Ports) },
		Groups: func(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group {
			return SwitchGroups(cfg.Network.Ports, sigs) // one group per port
		},
	})
	Register(Topology{
		Name:  config.TopologyFatTree,
		Reads: always(fatTreeKeys),
		Build: func(cfg config.Config, tm config.Timing) (Network, error) {
			if err := faultsOnFatTree(cfg); err != nil {
				return nil, err
			}
			if err := refuseProgram(cfg); err != nil {
				return nil, err
			}
			if n, err := buildNIC(cfg, tm); n != nil || err != nil {
				return n, err
			}
			if IsCollective(cfg.Traffic.Pattern) {
				return asNetwork(buildCollective(cfg, tm))
			}
			return asNetwork(buildFatTree(cfg, tm))
		},
		Describe: func(r Result) string {
			return fmt.Sprintf("fat-tree: %d nodes, %d levels of %d-port %s switches (%s credits, %d-packet buffers)",
				r.Nodes, r.Levels, r.Ports, r.Organization, r.CreditMode, r.XPBuffer)
		},
		// Several hops per packet.
		Weight: func(cfg config.Config) float64 { return 4 * float64(cfg.Network.Nodes) },
	})
}

// refuseProgram refuses traffic.pattern program where no program runs.
func refuseProgram(cfg config.Config) error {
	if cfg.Traffic.Pattern == config.PatternProgram {
		return fmt.Errorf("traffic.pattern: program runs on network.topology torus, mesh, min and irregular; not on %s", cfg.Network.Topology)
	}
	return nil
}
