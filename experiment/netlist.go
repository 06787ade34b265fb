package experiment

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/fattree"
	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/routernet"
)

// Netlist is what every network of switches or routers offers a run: its
// nodes joined by credit links, its credit invariant and own errors, its
// links' retry counts, and links that go down. The fat-tree of crossbar
// switches and every network of router blocks (routernet: tori, meshes,
// MINs, irregular networks) are Netlists.
type Netlist interface {
	Nodes() int
	// ConnectNode joins node i's sender (into the network) and receiver
	// (out of it).
	ConnectNode(i int, tx *link.Sender, rx *link.Receiver)
	// Hops is the switches or routers a packet from src to dst crosses.
	Hops(src, dst int) int
	// CheckCredits checks the credit invariant on every link.
	CheckCredits() error
	// Err is the first protocol error a block recorded.
	Err() error
	LinkStats() link.RetryStats
	// Fail takes the links down from their cycles on (a path that names
	// no link is an error saying what would); Dropped is then every
	// block's log of the packets discarded for want of a route.
	Fail(links []fault.Link) error
	Dropped() []*fault.Log
}

var (
	_ Netlist = (*fattree.Net)(nil)
	_ Netlist = (*routernet.Net)(nil)
)

// install takes down cfg's faults on net and keeps the logs of what its
// blocks discard.
func (f *faultNet) install(cfg config.Config, net Netlist) error {
	if len(cfg.Faults) == 0 {
		return nil
	}
	links, err := parseFaults(cfg)
	if err != nil {
		return err
	}
	if err := net.Fail(links); err != nil {
		return fmt.Errorf("faults: %v", err)
	}
	f.links, f.logs = links, net.Dropped()
	return nil
}
