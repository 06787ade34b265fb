package experiment

import "github.com/hwcoll/hwcoll/internal/param"

// paramKeys maps the blocks' typed parameters to the config keys they are
// read from: blocks name their own fields and arguments (param.Error), and
// the errors a user reads name the key (docs/architecture.md §8).
var paramKeys = map[string]string{
	"crossbar.Params.Ports":           "network.ports",
	"crossbar.Params.XPPackets":       "network.xp_buffer_packets",
	"crossbar.Params.SwitchDelay":     "switch.delay_ns",
	"crossbar.Params.Iterations":      "network.iterations",
	"crossbar.Params.CombineUnits":    "network.combine_units",
	"crossbar.Params.CreditMode":      "network.credit_mode",
	"crossbar.Params.Org":             "network.organization",
	"credit.ParseMode(name)":          "network.credit_mode",
	"combine.Params.ElementsPerCycle": "combine.elements_per_cycle",
	"combine.Params.Spec":             "combine.op",
	"fattree.Params.K":                "network.ports",
	"fattree.Params.Nodes":            "network.nodes",
	"fattree.Params.LinkDelay":        "link.delay_ns",
	"fattree.Params.Retry":            "link.ber",
	"fattree.Builder":                 "network.tree_builder",
	"traffic.CheckFanout(f)":          "traffic.fanout",
	"traffic.NewPattern(n)":           "network.ports",
	"traffic.NewPattern(fanout)":      "traffic.fanout",
	"traffic.NewPattern(name)":        "traffic.pattern",
	"traffic.NewNodePattern(name)":    "traffic.pattern",
	"traffic.NewProcess(rate)":        "traffic.load",
	"traffic.NewProcess(name)":        "traffic.process",
	"swcoll.NewGroups(n)":             "network.nodes",
	"nic.NewShape(pktBytes)":          "packet.bytes",
	"nic.NewShape(msgBytes)":          "traffic.message_bytes",
	"router.Params.Switching":         "router.switching",
	"router.Params.VCs":               "router.vcs",
	"router.Params.BufFlits":          "router.vc_buffer_flits",
	"router.Params.PacketFlits":       "packet.bytes",
	"router.Params.FlitCycles":        "packet.flit_bytes",
	"router.Params.Delay":             "switch.delay_ns",
	"router.Params.Retry":             "link.ber",
	"tree.Params.Retry":               "link.ber",
	"torus.Params.Routing":            "router.routing",
	"torus.Params.Dims":               "network.dims",
	"torus.Params.LinkDelay":          "link.delay_ns",
	"routernet.Graph":                 "network.topology",
	"routernet.Params.LinkDelay":      "link.delay_ns",
	"routing.Escape":                  "router.escape",
	"ibmesh.Params.Dims":              "network.dims",
	"ibmesh.Params.VLs":               "network.vls",
	"ibmesh.Params.Router":            "router.switching",
	"tree.Params.Cycles":              "link.gbps",
	"tree.Params.Delay":               "switch.delay_ns",
	"tree.Params.BufPackets":          "router.vc_buffer_flits",
	"tree.Params.LinkDelay":           "link.delay_ns",
	"router.Params.Classes":           "dsm.virtual_networks",
	"router.Params.EjectPackets":      "dsm.ni_queue",
	"router.Params.Lanes":             "router.injection_fifos",
	"dsm.Params.LineWords":            "dsm.line_bytes",
	"dsm.Params.CacheLines":           "dsm.cache_bytes",
	"dsm.Params.Ways":                 "dsm.cache_ways",
	"dsm.Params.TBufs":                "dsm.transaction_buffers",
	"dsm.Params.Pointers":             "dsm.pointers",
	"dsm.Params.Classes":              "dsm.virtual_networks",
	"dsm.Params.Queue":                "dsm.ni_queue",
	"dsm.Params.CPI":                  "dsm.cpi",
}

// keyed rewrites a block's parameter error with config keys.
func keyed(err error) error {
	if err == nil {
		return nil
	}
	return param.Rename(err, func(p string) (string, bool) { k, ok := paramKeys[p]; return k, ok })
}

// keyedNet is keyed for a constructor's two results.
func keyedNet[T any](n T, err error) (T, error) { return n, keyed(err) }
