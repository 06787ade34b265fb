package experiment

import (
	"fmt"
	"strings"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// SwitchGroups groups a switch netlist's traced signals per port for the
// .gtkw: group "port o" holds src(o) (its queue and link), the input side
// in(o), the output side out(o) (arbiter, the crosspoints xp(0..k-1) of
// output o, the link sender and its credits) and dst(o). Anything else goes
// to a last group.
func SwitchGroups(k int, sigs []rtl.TracedSignal) []vcd.Group {
	under := func(mod, root string) bool { return mod == root || strings.HasPrefix(mod, root+".") }
	used := make([]bool, len(sigs))
	var groups []vcd.Group
	for o := 0; o < k; o++ {
		g := vcd.Group{Name: fmt.Sprintf("port %d", o), Collapsed: o > 0}
		for _, root := range []string{rtl.Idx("top.src", o), rtl.Idx("top.sw.in", o), rtl.Idx("top.sw.out", o), rtl.Idx("top.dst", o)} {
			for j, s := range sigs {
				if !used[j] && under(s.Module, root) {
					used[j] = true
					// The alias keeps the path: a group mixes modules whose
					// signals share leaf names (valid, pkt); "/" because GTKWave shows an
					// alias only after its last ".".
					g.Signals = append(g.Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind, Alias: strings.ReplaceAll(strings.TrimPrefix(s.Path, "top."), ".", "/")})
				}
			}
		}
		if len(g.Signals) > 0 {
			groups = append(groups, g)
		}
	}
	rest := vcd.Group{Name: "other"}
	for j, s := range sigs {
		if !used[j] {
			rest.Signals = append(rest.Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind})
		}
	}
	if len(rest.Signals) > 0 {
		groups = append(groups, rest)
	}
	return groups
}
