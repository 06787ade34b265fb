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

// Parse reads "PATH@CYCLE" (the config's form of a fault). PATH may give
// a block's indices in one pair of parentheses, r(1,0), as --trace does
// (Canon).
func Parse(s string) (Link, error) {
	path, at, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok || path == "" || at == "" {
		return Link{}, fmt.Errorf("%q is not PATH@CYCLE (e.g. top.net.r(1)(0).out(1)@20000)", s)
	}
	if i := unbalanced(path); i >= 0 {
		what := "closes nothing"
		if path[i] == '(' {
			what = "is never closed"
		}
		return Link{}, fmt.Errorf("%q: the %q at byte %d of the path %s (e.g. top.net.r(1)(0).out(1)@20000)", s, path[i], i+1, what)
	}
	c, err := strconv.ParseUint(strings.ReplaceAll(strings.TrimSpace(at), "_", ""), 10, 64)
	if err != nil {
		return Link{}, fmt.Errorf("%q: cycle %q is not a cycle number (0 or more)", s, at)
	}
	return Link{Path: strings.TrimSpace(path), At: c}, nil
}

// ParseAll reads every fault of the config's list. An entry whose
// parentheses stay open is joined to the next: a comma inside
// parentheses separates a block's indices, not faults (as in --trace,
// rtl.SplitGlobs), but the list arrives cut there when it was written
// with commas (--set faults=top.net.r(1,0).out(1)@0, or the YAML flow
// list [top.net.r(1,0).out(1)@0]). Entries are numbered as joined: the
// faults the user wrote.
func ParseAll(list []string) ([]Link, error) {
	out := make([]Link, 0, len(list))
	for i, s := range rejoin(list) {
		f, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %v", i+1, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// rejoin joins each entry that leaves a parenthesis open to the entries
// after it, with the commas they were cut at, until it closes.
func rejoin(list []string) []string {
	var out []string
	open := false
	for _, s := range list {
		if open {
			out[len(out)-1] += "," + s
		} else {
			out = append(out, s)
		}
		open = depth(out[len(out)-1]) > 0
	}
	return out
}

// depth is how many parentheses s leaves open (negative: closes more
// than it opened).
func depth(s string) int {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			d++
		case ')':
			d--
		}
	}
	return d
}

// unbalanced is the index of the first parenthesis of p that has no
// partner (a ')' closing nothing, or the last '(' left open), else -1.
func unbalanced(p string) int {
	var open []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '(':
			open = append(open, i)
		case ')':
			if len(open) == 0 {
				return i
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return open[len(open)-1]
	}
	return -1
}

// Canon is path as the networks name their blocks: each index in its own
// parentheses, r(1)(0), the way rtl.Idx writes them. The coordinate form
// r(1,0) that --trace accepts (rtl.SplitGlobs) is the same block, so a
// comma inside parentheses becomes ")("; spaces inside them are dropped.
func Canon(path string) string {
	path = strings.TrimSpace(path)
	if !strings.ContainsAny(path, ", ") {
		return path
	}
	var b strings.Builder
	d := 0
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '(':
			d++
		case c == ')' && d > 0:
			d--
		case c == ',' && d > 0:
			b.WriteString(")(")
			continue
		case c == ' ' && d > 0:
			continue
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// samePath is the key two paths naming one output port share: Canon,
// without the top module's name (which the networks accept either way).
func samePath(p string) string { return strings.TrimPrefix(Canon(p), "top.") }

// Twice is the error for entries i and j of links (0-based, i < j) naming
// one link: by one output port, however spelled, or by the output ports
// at its two ends (a link dies both ways, so either names all of it).
func Twice(links []Link, i, j int) error {
	how := ""
	if samePath(links[i].Path) != samePath(links[j].Path) {
		how = " from its two ends (a link dies both ways)"
	}
	return fmt.Errorf("entries %d (%s) and %d (%s) name the same link%s; a link goes down once: keep one entry", i+1, links[i], j+1, links[j], how)
}

// Repeated is Twice for the first two entries of links naming the same
// output port, or nil. That each end of a link is named at most once
// needs the network (its Fail).
func Repeated(links []Link) error {
	seen := make(map[string]int, len(links))
	for j, f := range links {
		k := samePath(f.Path)
		if i, ok := seen[k]; ok {
			return Twice(links, i, j)
		}
		seen[k] = j
	}
	return nil
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
