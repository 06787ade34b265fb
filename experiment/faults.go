package experiment

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/fault"
)

// Unreachable is a packet a network discarded because no route to its
// destination was left (the config's faults): the JSON `unreachable` list.
type Unreachable struct {
	ID    uint64 `json:"id"`
	Src   uint32 `json:"src"`
	Dst   uint32 `json:"dst"`
	Born  uint64 `json:"born_cycle"`
	Cycle uint64 `json:"cycle"` // when it was discarded
	Where string `json:"where"` // the block that discarded it
}

// faultNet is what the load runs keep of a network whose links go down:
// the logs of its discarding blocks.
type faultNet struct {
	links []fault.Link
	logs  []*fault.Log
}

// parseFaults reads the config's faults list (its syntax was validated).
func parseFaults(cfg config.Config) ([]fault.Link, error) {
	links, err := fault.ParseAll(cfg.Faults)
	if err != nil {
		return nil, fmt.Errorf("faults: %v", err)
	}
	return links, nil
}

// measuredLost is the measured packets discarded so far: the drain waits
// for them no longer.
func (f *faultNet) measuredLost() uint64 {
	var n uint64
	for _, l := range f.logs {
		n += l.Measured
	}
	return n
}

// report puts the faults and the discarded packets into r (loadResult
// counted the measured ones as drained).
func (f *faultNet) report(r *Result) {
	if len(f.links) == 0 {
		return
	}
	drops, n, measured := fault.Merge(f.logs)
	r.LinkFaults, r.PacketsUnreachable, r.MeasuredUnreach = len(f.links), n, measured
	for _, d := range drops {
		r.Unreachable = append(r.Unreachable, Unreachable{ID: d.Pkt.ID, Src: d.Pkt.Src, Dst: d.Pkt.Dst, Born: d.Pkt.Born, Cycle: d.At, Where: d.Where})
	}
}

// faultsOnFatTree refuses link faults on a fat-tree run they are not built
// for, naming what is allowed.
func faultsOnFatTree(cfg config.Config) error {
	switch {
	case len(cfg.Faults) == 0:
	case cfg.NIC.Model != config.NICNone:
		return fmt.Errorf("faults: link faults on a fat-tree are built for open-loop sources; allowed: nic.model %s, not %s", config.NICNone, cfg.NIC.Model)
	case cfg.Network.CreditMode == config.CreditPerCrosspoint:
		return fmt.Errorf("faults: per-crosspoint look-ahead routes by the next switch's table, which a fault changes under a packet on its way; allowed: network.credit_mode %s | %s", config.CreditMinFree, config.CreditPerLink)
	case cfg.Network.Organization != config.OrgOQXP:
		return fmt.Errorf("faults: link faults on a fat-tree are built for its crosspoint switches; allowed: network.organization %s, not %s", config.OrgOQXP, cfg.Network.Organization)
	}
	return nil
}
