package experiment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/irregular"
	"github.com/hwcoll/hwcoll/multistage"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// SwitchedNote goes into every min and irregular result: how hosts attach.
const SwitchedNote = "open-loop packet sources and sinks at the hosts (no NIC overheads); each host joins its switch through an adapter, a 2-port router (the injection and consumption channels), so a route crosses both adapters; injection FIFO of 4 packets per host"

// minNetlist is the netlist of cfg's multistage network.
func minNetlist(cfg config.Config) (RouterNetlist, error) {
	kind, err := multistage.ParseKind(cfg.Network.MinKind)
	if err != nil {
		return RouterNetlist{}, fmt.Errorf("network.min_kind: %v", err)
	}
	if k := cfg.Network.Ports; k == config.Default().Network.Ports && k > multistage.MaxRadix(kind) {
		// The default radix, left as it is by minDefaults: no switch
		// radix of this kind has network.nodes for a power.
		return RouterNetlist{}, fmt.Errorf("network.nodes: %d hosts is not a power of any switch radix %s %s MIN can have (2..%d); allowed: a power of network.ports, e.g. 256 (4^4)", cfg.Network.Nodes, article(kind.String()), kind, multistage.MaxRadix(kind))
	}
	if k := cfg.Network.Ports; k > multistage.MaxRadix(kind) {
		return RouterNetlist{}, fmt.Errorf("network.ports: %d; the switches of %s %s MIN have 2..%d ports a side (the router block has %d ports, one its local)", k, article(kind.String()), kind, multistage.MaxRadix(kind), routing.MaxPorts)
	}
	m, err := multistage.New(kind, cfg.Network.Ports, cfg.Network.Nodes, cfg.Router.VCs)
	if err != nil {
		return RouterNetlist{}, fmt.Errorf("network.nodes: %v", err)
	}
	spec, err := m.Spec(cfg.Router.Routing)
	if err != nil {
		return RouterNetlist{}, fmt.Errorf("router.routing: %v", err)
	}
	shape := fmt.Sprintf("%s MIN of %d hosts, %d stages of %d×%d switches", kind, m.Hosts, m.Stages, m.K, m.K)
	nl := switchedNet(&spec, m.Header, &routernet.Graph{Net: m.Net, Hosts: m.Hosts, Name: m.RouterName, Hops: m.Hops, Shape: shape})
	nl.Result = func(r *Result) { r.MinKind, r.Ports = cfg.Network.MinKind, cfg.Network.Ports } // k, as configured
	return nl, nil
}

// irregularGraph is cfg's irregular network: read from network.irregular_file,
// or random with the seed.
func irregularGraph(cfg config.Config) (*irregular.Graph, error) {
	if f := cfg.Network.IrregularFile; f != config.IrregularRandom {
		r, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("network.irregular_file: %v", err)
		}
		defer r.Close()
		g, err := irregular.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("network.irregular_file: %s: %v", f, err)
		}
		return g, nil
	}
	rnd := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x1e6a)) // its own stream: the graph does not shift the traffic's
	g, err := irregular.Random(cfg.Network.Switches, cfg.Network.Degree, 1, rnd)
	if err != nil {
		return nil, fmt.Errorf("network.degree: %v", err)
	}
	return g, nil
}

// irregularCheck refuses a file's route lines where the routing does not
// read them: only table and source routing take their routes from the
// file.
func irregularCheck(cfg config.Config) error {
	if cfg.Network.IrregularFile == config.IrregularRandom || cfg.Router.Routing == "table" || cfg.Router.Routing == "source" {
		return nil
	}
	g, err := irregularGraph(cfg)
	if err != nil || len(g.Routes) == 0 {
		return nil // a bad file is the build's to report
	}
	return fmt.Errorf("network.irregular_file: %s gives routes (line %d), which router.routing %s does not use; allowed: router.routing table | source, or a file without route lines",
		cfg.Network.IrregularFile, g.Routes[0].Line, cfg.Router.Routing)
}

// irregularNetlist is the netlist of cfg's irregular network.
func irregularNetlist(cfg config.Config) (RouterNetlist, error) {
	g, err := irregularGraph(cfg)
	if err != nil {
		return RouterNetlist{}, err
	}
	nw, err := irregular.NewNetwork(g, cfg.Router.VCs)
	if err != nil {
		return RouterNetlist{}, fmt.Errorf("network.irregular_file: %v", err)
	}
	spec, err := nw.Spec(cfg.Router.Routing)
	if err != nil {
		if strings.HasPrefix(err.Error(), "the routing table") { // the file's route lines
			return RouterNetlist{}, fmt.Errorf("network.irregular_file: %s: %v", cfg.Network.IrregularFile, err)
		}
		return RouterNetlist{}, fmt.Errorf("router.routing: %v", err)
	}
	shape := fmt.Sprintf("irregular network of %d switches (%d cables), %d hosts", g.Switches, len(g.Cables), nw.Hosts())
	return switchedNet(&spec, nw.Header, &routernet.Graph{Net: nw.Net, Hosts: nw.Hosts(), Name: nw.RouterName, Hops: nw.Hops, Shape: shape}), nil
}

// switchedNet is the netlist of a switch-based network; source routing
// has the sources write the route into the header.
func switchedNet(spec *routing.Spec, header func(*packet.Packet), g *routernet.Graph) RouterNetlist {
	if spec.Name != "source" {
		header = nil
	}
	return RouterNetlist{Make: func(sim *rtl.Sim, p routernet.Params) (*routernet.Net, error) {
		p.Spec = *spec
		return routernet.New(sim.Top(), "net", *g, p)
	}, Header: header}
}

func init() {
	for _, t := range []struct {
		name     string
		netlist  func(config.Config) (RouterNetlist, error)
		reads    func(config.Config) []string
		kinds    string // for a sweep's report
		weight   func(config.Config) float64
		check    func(config.Config) error
		defaults func(*config.Config)
	}{
		{config.TopologyMIN, minNetlist, minReads, "MINs",
			func(cfg config.Config) float64 { return 4 * float64(cfg.Network.Nodes) * 3 }, nil, minDefaults},
		{config.TopologyIrreg, irregularNetlist, irregularRunReads, "irregular networks",
			func(cfg config.Config) float64 { return 4 * float64(cfg.Network.Switches) * 2 }, irregularCheck, switchedDefaults},
	} {
		Register(Topology{
			Name:   t.name,
			Demo:   switchedDemos[t.name],
			Reads:  t.reads,
			Router: t.netlist,
			Build: func(cfg config.Config, tm config.Timing) (Network, error) {
				if err := refuseNIC(cfg); err != nil {
					return nil, err
				}
				program := cfg.Traffic.Pattern == config.PatternProgram
				if !program && !slices.Contains(traffic.NodePatterns, cfg.Traffic.Pattern) {
					return nil, fmt.Errorf("traffic.pattern: %s has no model on a %s yet; allowed: %s | program", cfg.Traffic.Pattern, cfg.Network.Topology, strings.Join(traffic.NodePatterns, " | "))
				}
				if program {
					return asNetwork(Elaborated(RoutedProgram(t.netlist))(cfg, tm))
				}
				return asNetwork(Elaborated(RoutedLoad(t.netlist))(cfg, tm))
			},
			Describe: func(r Result) string {
				return fmt.Sprintf("%s: %s routing, %s, %d VCs of %d flits, %d-flit packets",
					r.Shape, r.Routing, r.Switching, r.VCs, r.VCBufferFlits, r.PacketFlits)
			},
			Weight:    t.weight,
			Check:     t.check,
			Defaults:  t.defaults,
			Abilities: Abilities{Programs: true},
			Memory:    switchedMemory(t.name),
			Report:    func(rs []Result) string { return RoutersOf(rs, t.kinds) },
		})
	}
}
