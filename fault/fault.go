// Package fault is link failure: which links go down and when (the config's
// `faults` list), and the log of the packets a network discards because no
// route to their destination is left.
//
// A fault names a network link by the path of one of its two output ports
// (as the waveform shows it, e.g. top.net.r(1)(0).out(1)) and the cycle it
// goes down; the physical link dies both ways. From that cycle on no
// routing decision sends a packet onto it; a packet already committed to it
// (allocated the output, or queued in its crosspoint) still crosses, as the
// link layer drains what it holds. Routing avoids the dead link where the
// routing function leaves a route; a packet with none is discarded where it
// stands and logged here, so a run never waits for it.
package fault

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hwcoll/hwcoll/packet"
)

// Link is one link fault: the link with output port Path goes down at
// cycle At.
type Link struct {
	Path string
	At   uint64
}

// Parse reads "PATH@CYCLE" (the config's form of a fault).
func Parse(s string) (Link, error) {
	path, at, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok || path == "" || at == "" {
		return Link{}, fmt.Errorf("%q is not PATH@CYCLE (e.g. top.net.r(1)(0).out(1)@20000)", s)
	}
	c, err := strconv.ParseUint(strings.ReplaceAll(strings.TrimSpace(at), "_", ""), 10, 64)
	if err != nil {
		return Link{}, fmt.Errorf("%q: cycle %q is not a cycle number (0 or more)", s, at)
	}
	return Link{Path: strings.TrimSpace(path), At: c}, nil
}

// ParseAll reads every fault of the config's list.
func ParseAll(list []string) ([]Link, error) {
	out := make([]Link, 0, len(list))
	for i, s := range list {
		f, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %v", i+1, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func (f Link) String() string { return fmt.Sprintf("%s@%d", f.Path, f.At) }

// Drop is a packet discarded because no route to its destination was
// left: when, and where (the block's path).
type Drop struct {
	At    uint64
	Where string
	Pkt   packet.Packet
}

// Keep is how many drops Merge lists; PerBlock how many each block's Log
// keeps whole (it counts all of them), so that a network discarding
// everywhere holds a bounded sample, not a record per packet.
const (
	Keep     = 64
	PerBlock = 8
)

// Log is the drops of one block (a router, a switch input): each block
// has its own, so parallel evaluation needs no lock.
type Log struct {
	N        uint64 // packets dropped
	Measured uint64 // of those, packets born in the measurement window
	// KeepAll keeps every drop, not only the first Keep (testbenches that
	// account for every packet).
	KeepAll bool
	recs    []Drop
}

// Add logs that the block at where dropped p at cycle at.
func (l *Log) Add(at uint64, where string, p *packet.Packet) {
	l.N++
	if p.Measured {
		l.Measured++
	}
	if len(l.recs) < PerBlock || l.KeepAll {
		d := Drop{At: at, Where: where, Pkt: *p}
		d.Pkt.Payload = nil
		l.recs = append(l.recs, d)
	}
}

// Drops is the drops kept (the first PerBlock, or all with KeepAll).
func (l *Log) Drops() []Drop { return l.recs }

// Merge collects the drops the logs kept into one list, earliest first
// (ties by packet id), at most Keep of them, and the counts of all drops.
func Merge(logs []*Log) (all []Drop, n, measured uint64) {
	for _, l := range logs {
		if l == nil {
			continue
		}
		n += l.N
		measured += l.Measured
		all = append(all, l.recs...)
	}
	sortDrops(all)
	if len(all) > Keep {
		all = all[:Keep]
	}
	return all, n, measured
}

func sortDrops(d []Drop) {
	slices.SortFunc(d, func(a, b Drop) int {
		if c := cmp.Compare(a.At, b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.Pkt.ID, b.Pkt.ID)
	})
}
