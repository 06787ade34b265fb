package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hwcoll/hwcoll/config"
)

// Demo is a network's contribution to the tour `hwcoll demo` (make run)
// gives of the source papers: a few small runs of what its paper is about.
// It is data: the configs to run and how to tabulate them. The command
// runs them (the independent ones in parallel, as a sweep's points), prints
// one short table a part and names the files to open. The tour's order
// and sections come from the registrations (Tour), so a network that
// registers a Demo is in the tour and one that does not is not.
type Demo struct {
	// Section is the heading of the tour section the parts go in, one a
	// paper: networks of one paper (the WORMulSim paper's mesh programs,
	// MIN and irregular network) name the same Section and share it.
	Section string
	// Order places the parts in the tour: sections in the order of their
	// lowest Order, the parts of a section by Order, then as listed.
	Order int
	Parts []DemoPart
}

// DemoPart is one table of the tour: runs of the registered topology on
// the embedded defaults with network.topology, Base, Set and each run's
// Set applied, one row a run. Parts of a section with the same Title print
// as one table (their Columns must match): the WORMulSim paper's MIN and
// irregular network at one load.
type DemoPart struct {
	Title string // the line above the table: what is run, after which paper
	// Config is the file in configs/ that Base reproduces (a test holds
	// them equal), so that a row is `hwcoll run --config configs/Config`
	// with Set and the run's Set; "" when Base stands alone.
	Config string
	Base   []string // key=value, on the defaults (network.topology is the registration's)
	Set    []string // key=value every run of the part adds to Base
	Runs   []DemoRun
	// RowHeader heads the column of the runs' labels.
	RowHeader string
	// Loads, when set, makes the part a load sweep of Base and Set at
	// these loads, run and printed as hwcoll sweep does (its table,
	// results.csv, results.jsonl and the plots in the demo's directory);
	// Runs and Columns are then unused. One part of the tour at most.
	Loads   []float64
	Columns []DemoColumn // after the run's Label; the command adds a result column
	Note    string       // printed under the table: what to look at
	// Topology is the registration the part came from (set by Tour).
	Topology string
}

// DemoRun is one row of a part.
type DemoRun struct {
	Label string   // the first cell
	Set   []string // key=value on top of the part's
	Paper string   // the paper's figure for this row, for a DemoPaper column ("" none)
	// Versus is the Label of the row of the same part this one is
	// compared with (a DemoVersus column); "" none.
	Versus string
	Trace  *DemoTrace // run traced: a VCD and its .gtkw in the demo's directory
	Pcap   *DemoPcap  // run captured: a pcap in the demo's directory
}

// DemoTrace is a traced run: File is the VCD's name in the demo's
// directory (the .gtkw goes beside it), Glob selects the signals (--trace).
type DemoTrace struct{ File, Glob string }

// DemoPcap is a captured run (Abilities.Pcap): File is the capture's name
// in the demo's directory, Links selects the links (--pcap-links; "" all).
type DemoPcap struct{ File, Links string }

// TsharkUserDLT is the tshark option that decodes a capture's link type
// 147 (DLT_USER0) as InfiniBand (README "Packet captures").
const TsharkUserDLT = `uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""`

// DemoColumn is a column of a part's table.
type DemoColumn struct {
	Header string
	Right  bool // right-aligned (numbers)
	Cell   func(c DemoCell) string
}

// DemoCell is what a cell is made from: its row's run and result, and the
// result of the row it is compared with (nil without Run.Versus).
type DemoCell struct {
	Run    DemoRun
	Result Result
	Versus *Result
}

// DemoSection is one section of the tour: its heading and parts in order.
type DemoSection struct {
	Title string
	Parts []DemoPart
}

// Tour is the demo's sections from the registered topologies' Demos, in
// Order; each part knows its Topology.
func Tour() []DemoSection {
	type entry struct {
		order, seq int
		part       DemoPart
		section    string
	}
	var all []entry
	for _, name := range order {
		d := topologies[name].Demo
		if d == nil {
			continue
		}
		for _, p := range d.Parts {
			p.Topology = name
			all = append(all, entry{d.Order, len(all), p, d.Section})
		}
	}
	first := map[string]int{}
	for _, e := range all {
		if o, ok := first[e.section]; !ok || e.order < o {
			first[e.section] = e.order
		}
	}
	slices.SortStableFunc(all, func(a, b entry) int {
		if fa, fb := first[a.section], first[b.section]; fa != fb {
			return fa - fb
		}
		if a.section != b.section {
			return strings.Compare(a.section, b.section)
		}
		return a.order - b.order
	})
	var out []DemoSection
	for _, e := range all {
		if len(out) == 0 || out[len(out)-1].Title != e.section {
			out = append(out, DemoSection{Title: e.section})
		}
		s := &out[len(out)-1]
		s.Parts = append(s.Parts, e.part)
	}
	return out
}

// Sets is every key=value of run i of the part, in the order applied:
// network.topology, Base, Set, the run's Set.
func (p DemoPart) Sets(i int) []string {
	s := append([]string{"network.topology=" + p.Topology}, p.Base...)
	s = append(s, p.Set...)
	if i >= 0 && i < len(p.Runs) {
		s = append(s, p.Runs[i].Set...)
	}
	return s
}

// RunConfig is run i's config: the defaults with Sets(i) applied; an error
// is a bad demo (the tests run every one).
func (p DemoPart) RunConfig(i int) (config.Config, error) {
	cfg := config.Default()
	for _, s := range p.Sets(i) {
		if err := cfg.Set(s); err != nil {
			return cfg, fmt.Errorf("%s demo %q: %v", p.Topology, p.Title, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s demo %q: %v", p.Topology, p.Title, err)
	}
	return cfg, nil
}

// Command is the command line that repeats run i (without the trace and
// capture flags), or for i = -1 the part's load sweep: hwcoll run or
// sweep, with --config and the part's and run's sets when the part has a
// Config, else every set.
func (p DemoPart) Command(i int) []string {
	args := []string{"hwcoll", "run"}
	sets := p.Sets(i)
	if p.Config != "" {
		args = append(args, "--config", "configs/"+p.Config)
		sets = slices.Clone(p.Set)
		if i >= 0 && i < len(p.Runs) {
			sets = append(sets, p.Runs[i].Set...)
		}
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if i < 0 && len(p.Loads) > 0 {
		loads := make([]string, len(p.Loads))
		for k, l := range p.Loads {
			loads[k] = strconv.FormatFloat(l, 'g', -1, 64)
		}
		args[1] = "sweep"
		args = append(args, "--loads", strings.Join(loads, ","))
	}
	return args
}

// Versus is the index of the row run i is compared with, -1 for none.
func (p DemoPart) Versus(i int) int {
	if v := p.Runs[i].Versus; v != "" {
		for j, r := range p.Runs {
			if r.Label == v {
				return j
			}
		}
	}
	return -1
}

// The columns the parts share.

// DemoCol is a column of one Result field, formatted.
func DemoCol(header string, right bool, cell func(r Result) string) DemoColumn {
	return DemoColumn{Header: header, Right: right, Cell: func(c DemoCell) string { return cell(c.Result) }}
}

var (
	// DemoCompletion is the completion in cycles and in time.
	DemoCompletion = []DemoColumn{
		DemoCol("completion", true, func(r Result) string { return DemoGrouped(r.CompletionCycles) + " cyc" }),
		DemoCol("", true, func(r Result) string { return DemoDuration(r.CompletionNS) }),
	}
	// DemoWall is the run's wall time on this machine (the build not
	// included).
	DemoWall = DemoCol("wall here", true, func(r Result) string { return DemoSeconds(r.WallSeconds) })
	// DemoStable is whether a load run kept up (Result.Stable).
	DemoStable = DemoCol("stable", false, func(r Result) string { return strconv.FormatBool(r.Stable) })
	// DemoLoad is the offered and accepted load and the average latency of a
	// load run.
	DemoLoad = []DemoColumn{
		DemoCol("offered", true, func(r Result) string { return strconv.FormatFloat(r.OfferedLoad, 'f', 2, 64) }),
		DemoCol("accepted", true, func(r Result) string { return strconv.FormatFloat(r.AcceptedLoad, 'f', 3, 64) }),
		DemoCol("avg latency", true, func(r Result) string { return DemoNum(r.LatencyAvgCycles) + " cyc" }),
		DemoCol("", true, func(r Result) string { return DemoDuration(r.LatencyAvgNS) }),
		DemoCol("p99 latency", true, func(r Result) string { return DemoNum(r.LatencyP99Cycles) + " cyc" }),
	}
)

// DemoPaper is the column of the rows' Paper figures.
func DemoPaper(header string) DemoColumn {
	return DemoColumn{Header: header, Right: true, Cell: func(c DemoCell) string { return c.Run.Paper }}
}

// DemoVersus is the completion of a row over that of the row it is
// compared with: "6.3×" (slower), "" for a row compared with none.
func DemoVersus(header string) DemoColumn {
	return DemoColumn{Header: header, Right: true, Cell: func(c DemoCell) string {
		if c.Versus == nil || c.Versus.CompletionCycles == 0 {
			return ""
		}
		return strconv.FormatFloat(float64(c.Result.CompletionCycles)/float64(c.Versus.CompletionCycles), 'f', 1, 64) + "×"
	}}
}

// DemoGrouped writes n with thousands separators: 1,578,933.
func DemoGrouped(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// DemoNum writes x with up to one decimal: 12, 12.5 (as the command's
// tables do).
func DemoNum(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// DemoDuration writes a simulated time given in ns in the unit that
// reads best: 880 ns, 2.06 µs, 16.9 ms.
func DemoDuration(ns float64) string {
	switch {
	case ns < 1e3:
		return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
	case ns < 1e6:
		return strconv.FormatFloat(ns/1e3, 'g', 3, 64) + " µs"
	default:
		return strconv.FormatFloat(ns/1e6, 'g', 3, 64) + " ms"
	}
}

// DemoSeconds writes a wall time: 812µs, 12.3ms, 1.25s (as the command's
// tables do).
func DemoSeconds(s float64) string {
	switch {
	case s <= 0:
		return "0s"
	case s < 1e-3:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3gms", s*1e3)
	default:
		return fmt.Sprintf("%.3gs", s)
	}
}
