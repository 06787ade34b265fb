package experiment

import (
	"slices"
	"strconv"
	"strings"
)

// The networks results ran on, described for a sweep's report
// (Topology.Report): what every result shares is named, what differs
// left out.

// same is f of the results when every one gives the same, "" otherwise.
func same(rs []Result, f func(Result) string) string {
	for _, x := range rs {
		if f(x) != f(rs[0]) {
			return ""
		}
	}
	return f(rs[0])
}

// SwitchesOf describes results on networks of crosspoint switches, e.g.
// "8-port oq-xp switches with 4-packet buffers".
func SwitchesOf(rs []Result) string {
	var desc []string
	if v := same(rs, func(x Result) string { return strconv.Itoa(x.Ports) }); v != "" {
		desc = append(desc, v+"-port")
	}
	if v := same(rs, func(x Result) string { return x.Organization }); v != "" {
		desc = append(desc, v)
	}
	desc = append(desc, "switches")
	if v := same(rs, func(x Result) string { return strconv.Itoa(x.XPBuffer) }); v != "" {
		desc = append(desc, "with "+v+"-packet buffers")
	}
	return strings.Join(desc, " ")
}

// RoutersOf describes results on networks of VC routers: the shape (the
// results' dims and topology, e.g. "8×8 torus", or every shape in the
// order they first appear, e.g. "64, 64×32 and 8×8×8 tori", when a sweep
// varies network.dims; with kinds, e.g. "MINs", the results' common
// Shape or "MINs of VC routers"), then what every result shares of
// switching, VCs and buffers.
func RoutersOf(rs []Result, kinds string) string {
	var shapes []string
	for _, x := range rs {
		if x.Topology != rs[0].Topology || len(x.Dims) == 0 {
			continue // another network of the sweep (the tree beside the torus)
		}
		var dims []string
		for _, k := range x.Dims {
			dims = append(dims, strconv.Itoa(k))
		}
		if d := strings.Join(dims, "×"); !slices.Contains(shapes, d) {
			shapes = append(shapes, d)
		}
	}
	net := rs[0].Topology + " of VC routers"
	if len(shapes) > 0 {
		net = shapes[0] + " " + net
	}
	if n := len(shapes); n > 1 {
		net = strings.Join(shapes[:n-1], ", ") + " and " + shapes[n-1] + " " + plural(rs[0].Topology) + " of VC routers"
	}
	if kinds != "" {
		net = kinds + " of VC routers"
		if v := same(rs, func(x Result) string { return x.Shape }); v != "" {
			net = v + ", VC routers"
		}
	}
	var desc []string
	if v := same(rs, func(x Result) string { return x.Switching }); v != "" {
		desc = append(desc, v)
	}
	vcs := same(rs, func(x Result) string { return strconv.Itoa(x.VCs) })
	buf := same(rs, func(x Result) string { return strconv.Itoa(x.VCBufferFlits) })
	switch {
	case vcs != "" && buf != "":
		desc = append(desc, vcs+" VCs of "+buf+" flits")
	case vcs != "":
		desc = append(desc, vcs+" VCs")
	case buf != "":
		desc = append(desc, buf+"-flit VCs")
	}
	if len(desc) > 0 {
		net += " (" + strings.Join(desc, ", ") + ")"
	}
	return net
}

// plural is a topology's name for several networks ("tori", "meshes").
func plural(topology string) string {
	switch topology {
	case "torus":
		return "tori"
	case "mesh":
		return "meshes"
	}
	return topology + "s"
}

// dimsNodes is the number of nodes of cfg's network.dims.
func dimsNodes(dims []int) uint64 {
	n := uint64(1)
	for _, k := range dims {
		n *= uint64(k)
	}
	return n
}

// fmtDims writes dims as the config does, e.g. [4,4,4].
func fmtDims(dims []int) string {
	parts := make([]string, len(dims))
	for i, k := range dims {
		parts[i] = strconv.Itoa(k)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
