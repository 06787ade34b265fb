package experiment

import "github.com/hwcoll/hwcoll/config"

// Maker makes cfg's network, not yet elaborated, with tm = cfg.Timing()
// converted once by the caller. Every network of this package has one
// (Switch, FatTree, FatTreeNIC, Collective, NICMulticast, SoftReduce,
// Tree, Torus); Build, Unbuilt and Elaborated do the rest the same way for
// all of them.
type Maker[N Network] func(cfg config.Config, tm config.Timing) (N, error)

// Build makes cfg's network with mk and elaborates it on run.workers
// goroutines; a bad config is an error of one line naming the key.
func Build[N Network](mk Maker[N], cfg config.Config) (N, error) {
	cfg = Resolve(cfg)
	return keyedNet(Elaborated(mk)(cfg, cfg.Timing()))
}

// Unbuilt makes cfg's network with mk without elaborating it, so that a
// caller can still choose kernel modes (SetParallel) or hook blocks
// before it calls the simulator's Build; errors name the key.
func Unbuilt[N Network](mk Maker[N], cfg config.Config) (N, error) {
	cfg = Resolve(cfg)
	return keyedNet(mk(cfg, cfg.Timing()))
}

// Elaborated is mk followed by elaboration (run.workers goroutines): the
// shape of a Topology's Build.
func Elaborated[N Network](mk Maker[N]) Maker[N] {
	return func(cfg config.Config, tm config.Timing) (N, error) {
		n, err := mk(cfg, tm)
		if err != nil {
			var none N
			return none, err
		}
		k := 1
		if sp, ok := any(n).(splitter); ok {
			k = sp.partitionsPerGoroutine()
		}
		if err := buildSplit(cfg, n.Simulator(), k); err != nil {
			var none N
			return none, err
		}
		return n, nil
	}
}
