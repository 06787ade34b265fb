package experiment

import (
	"fmt"
	"github.com/hwcoll/hwcoll/link"
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

// linkStater is a network whose links may have errors and retry.
type linkStater interface{ linkStats() link.RetryStats }

// capturer is a network that can record the packets on its links.
type capturer interface {
	Capture(w io.Writer, links string) error
}

// Run builds and runs the experiment of cfg. The error is bad input (one
// line naming the key); a run that fails its own checks reports it in
// Result.Error.
func Run(cfg config.Config, opt Options) (Result, error) {
	t, err := checkTopology(cfg)
	if err != nil {
		return Result{}, err
	}
	return run(cfg, t, opt)
}

// Check says what Run would refuse of cfg before building anything: a
// topology with no model, or a network or router key set away from its
// default that the topology does not read (one line naming the key).
func Check(cfg config.Config) error {
	_, err := checkTopology(cfg)
	return err
}

func checkTopology(cfg config.Config) (Topology, error) {
	t, err := TopologyOf(cfg)
	if err != nil {
		return Topology{}, err
	}
	return t, checkUnread(cfg, t)
}

// run is Run once cfg's keys are known to be read by its topology t.
func run(cfg config.Config, t Topology, opt Options) (Result, error) {
	if err := checkMemory(cfg); err != nil {
		return Result{}, err
	}
	readyHeap(cfg)
	if cfg.Link.BER > 0 && !retryTopology(cfg.Network.Topology) {
		return Result{}, fmt.Errorf("link.ber: %g; bit errors and link-level retry are built for network.topology fattree, torus, mesh, ibmesh and bgltree so far; allowed for %s: 0", cfg.Link.BER, cfg.Network.Topology)
	}
	// The config is converted to cycles once, here; blocks get cycles.
	n, err := func() (Network, error) {
		defer quietBuild(cfg)() // given back even if the build panics
		return t.Build(cfg, cfg.Timing())
	}()
	if err != nil {
		return Result{}, keyed(err)
	}
	sim := n.sim()
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
		c, ok := n.(capturer)
		if !ok {
			return Result{}, fmt.Errorf("--pcap: packet capture is built for network.topology torus, mesh and ibmesh; not for %s", cfg.Network.Topology)
		}
		if err := c.Capture(opt.Pcap, opt.PcapLinks); err != nil {
			return Result{}, err
		}
	}
	if opt.Started != nil {
		opt.Started(sim)
	}
	r := n.Run()
	if l, ok := n.(linkStater); ok {
		r.setLinkStats(l.linkStats())
	}
	if opt.VCD != nil {
		if err := sim.EndTrace(); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (c *CollectiveNet) sim() *rtl.Sim { return c.Sim }

// retryTopology reports whether topology t's links can have bit errors.
func retryTopology(t string) bool {
	switch t {
	case config.TopologyFatTree, config.TopologyTorus, config.TopologyMesh, config.TopologyIBMesh, config.TopologyBGLTree:
		return true
	}
	return false
}
