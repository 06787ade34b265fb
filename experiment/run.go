package experiment

import (
	"fmt"
	"io"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// Options are what the command line adds to a config.
type Options struct {
	VCD   io.Writer // nil: no trace
	Trace string    // signal globs for the trace
	// Traced, when set, receives the traced signals before the run (for a
	// .gtkw save file); Started receives the simulator (a signal handler
	// calls its Stop).
	Traced  func([]rtl.TracedSignal) error
	Started func(*rtl.Sim)
	// Pcap, when set, receives a packet capture of the links PcapLinks
	// (globs over link paths, e.g. top.net.r(1)(2).out(3); "" = every
	// link): torus and mesh runs (see TorusNet.Capture).
	Pcap      io.Writer
	PcapLinks string
}

// Run builds and runs the experiment of cfg. The error is bad input (one
// line naming the key); a run that fails its own checks reports it in
// Result.Error.
func Run(cfg config.Config, opt Options) (Result, error) {
	cfg = Resolve(cfg)
	t, err := checkTopology(cfg)
	if err != nil {
		return Result{}, err
	}
	return run(cfg, t, opt)
}

// Check says what Run would refuse of cfg before building anything: a
// topology with no model, a network or router key set away from its
// default that the topology does not read, or an ability or a setting the
// topology does not have (one line naming the key).
func Check(cfg config.Config) error {
	_, err := checkTopology(Resolve(cfg))
	return err
}

func checkTopology(cfg config.Config) (Topology, error) {
	t, err := TopologyOf(cfg)
	if err != nil {
		return Topology{}, err
	}
	if err := checkAbilities(cfg, t); err != nil {
		return Topology{}, err
	}
	if err := checkUnread(cfg, t); err != nil {
		return Topology{}, err
	}
	if t.Check != nil {
		if err := t.Check(cfg); err != nil {
			return Topology{}, err
		}
	}
	return t, nil
}

// run is Run once cfg's keys are known to be read by its topology t.
func run(cfg config.Config, t Topology, opt Options) (Result, error) {
	if err := checkMemory(cfg); err != nil {
		return Result{}, err
	}
	if opt.Pcap != nil && !t.Abilities.Pcap {
		return Result{}, fmt.Errorf("--pcap: packet capture is built for network.topology %s; not for %s", able(func(a Abilities) bool { return a.Pcap }), t.Name)
	}
	readyHeap(cfg)
	// The config is converted to cycles once, here; blocks get cycles.
	n, err := func() (Network, error) {
		defer quietBuild(cfg)() // given back even if the build panics
		return t.Build(cfg, cfg.Timing())
	}()
	if err != nil {
		return Result{}, keyed(err)
	}
	sim := n.Simulator()
	defer sim.Close()
	if opt.VCD != nil {
		if err := n.Trace(opt.VCD, opt.Trace); err != nil {
			return Result{}, err
		}
		if opt.Traced != nil {
			if err := opt.Traced(sim.TracedSignals()); err != nil {
				return Result{}, err
			}
		}
	}
	if opt.Pcap != nil {
		c, ok := n.(Capturer)
		if !ok {
			panic(fmt.Sprintf("experiment: topology %s has Abilities.Pcap but its %T is no Capturer", t.Name, n))
		}
		if err := c.Capture(opt.Pcap, opt.PcapLinks); err != nil {
			return Result{}, err
		}
	}
	if opt.Started != nil {
		opt.Started(sim)
	}
	r := n.Run()
	if w := sim.Goroutines(); cfg.Run.Workers == 0 && w > 1 {
		r.Workers = w // run.workers: 0 split the network
	}
	if l, ok := n.(LinkStater); ok {
		r.setLinkStats(l.LinkStats())
	}
	if opt.VCD != nil {
		if err := sim.EndTrace(); err != nil {
			return r, err
		}
	}
	return r, nil
}
