package crossbar

import (
	"fmt"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/fault"
)

// WatchFaults prepares the switch for routes that change while it runs
// (Table.SetUnicastFrom): every input gets a log of the packets it
// discards for want of a route. The output-queued crosspoint switch only,
// with min-free or per-link credits (per-crosspoint look-ahead would have
// the sender route by a table the packet may find changed).
func (s *Switch) WatchFaults() error {
	if s.P.Org != OQXP && s.P.Org != "" {
		return fmt.Errorf("routes that change need the %s organization; not %s", OQXP, s.P.Org)
	}
	if s.P.CreditMode == credit.PerCrosspoint {
		return fmt.Errorf("routes that change need min-free or per-link credits; per-crosspoint look-ahead routes by the next switch's table")
	}
	for i := range s.ins {
		in := &s.ins[i]
		if in.drops == nil {
			in.drops = &fault.Log{}
		}
	}
	return nil
}

// Dropped is every input's log of discarded packets (after WatchFaults).
func (s *Switch) Dropped() []*fault.Log {
	var logs []*fault.Log
	for i := range s.ins {
		in := &s.ins[i]
		if in.drops != nil {
			logs = append(logs, in.drops)
		}
	}
	return logs
}
