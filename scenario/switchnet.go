package scenario

import (
	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
)

// NewSwitchNet is experiment.NewSwitch: the single-switch netlist left
// unelaborated, so a caller can still choose kernel modes that must be set
// before Build (Sim.SetParallel).
func NewSwitchNet(cfg config.Config) (*experiment.SwitchNet, error) {
	return newSwitchNet(cfg, 0)
}

// newSwitchNet builds cfg's single-switch netlist unelaborated; periodPS,
// when not 0, overrides the clock period written to traces (cycle counts
// are unchanged).
func newSwitchNet(cfg config.Config, periodPS uint64) (*experiment.SwitchNet, error) {
	n, err := experiment.Unbuilt(experiment.Switch, cfg)
	if err != nil {
		return nil, err
	}
	if periodPS != 0 {
		n.Sim.SetPeriodPS(periodPS)
	}
	return n, nil
}
