package experiment

import (
	"fmt"
	"io"

	"github.com/hwcoll/hwcoll/config"
)

// Options are what the command line adds to a config.
type Options struct {
	VCD   io.Writer // nil: no trace
	Trace string    // signal globs for the trace
}

// Run builds and runs the experiment of cfg. The error is bad input (one
// line naming the key); a run that fails its own checks reports it in
// Result.Error.
func Run(cfg config.Config, opt Options) (Result, error) {
	switch cfg.Network.Topology {
	case config.TopologySwitch:
		n, err := BuildSwitch(cfg)
		if err != nil {
			return Result{}, err
		}
		if opt.VCD != nil {
			if err := n.Trace(opt.VCD, opt.Trace); err != nil {
				return Result{}, err
			}
		}
		r := n.Run()
		if opt.VCD != nil {
			if err := n.Sim.EndTrace(); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	return Result{}, fmt.Errorf("network.topology: %q has no model yet; allowed now: switch", cfg.Network.Topology)
}
