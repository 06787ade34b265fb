package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/sweep"
)

// configFlags are the flags every config-driven command takes.
type configFlags struct {
	path string
	sets listFlag
}

func (c *configFlags) register(fs *flagSet) {
	fs.StringVar(&c.path, "config", "", "YAML config file")
	fs.Var(&c.sets, "set", "key=value override (repeatable)")
}

// load builds the effective config: defaults, then the file, then each
// --set in order, then the cross-key checks.
func (c *configFlags) load() (config.Config, error) {
	cfg := config.Default()
	if c.path != "" {
		var err error
		cfg, err = config.Load(c.path)
		if err != nil {
			var ce *config.Error
			if errors.As(err, &ce) {
				return cfg, usagef("%v", err) // "FILE: key: message"
			}
			return cfg, usagef("--config: %v", err) // cannot read the file
		}
	}
	for _, s := range c.sets {
		if err := cfg.Set(s); err != nil {
			return cfg, usagef("--set: %v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// config prints the effective configuration, or the key reference.
func (a *app) config(args []string) error {
	fs := newFlagSet("config")
	var cf configFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		if pos[0] != "keys" {
			return usagef("config: unexpected argument %q; usage: %s", pos[0], synopsis("config"))
		}
		if len(pos) > 1 {
			return usagef("config keys: unexpected argument %q", pos[1])
		}
		if n := fs.NFlag(); n > 0 {
			return usagef("config keys: takes no flags; it prints the reference of every key")
		}
		fmt.Fprint(a.stdout, config.Reference())
		return nil
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	t := cfg.Timing()
	if *asJSON {
		return writeJSON(a.stdout, struct {
			Config config.Config `json:"config"`
			Timing timingJSON    `json:"timing"`
		}{cfg, newTimingJSON(cfg, t)})
	}
	var y strings.Builder
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return &internalError{msg: fmt.Sprintf("encoding the config as YAML: %v", err)}
	}
	enc.Close()
	fmt.Fprintf(a.stdout, "# effective configuration (hwcoll config); load it with --config\n%s", y.String())
	fmt.Fprintf(a.stdout, "# derived timing, in cycles of the %s MHz clock:\n", fmtFloat(cfg.ClockMHz))
	tj := newTimingJSON(cfg, t)
	for _, kv := range [][2]string{
		{"period_ps", strconv.FormatUint(tj.PeriodPS, 10)},
		{"link_bytes_per_cycle", fmt.Sprintf("%s (%d/%d)", fmtFloat(tj.LinkBytesPerCycle), tj.LinkBytesNum, tj.LinkBytesDen)},
		{"packet_cycles", strconv.FormatUint(tj.PacketCycles, 10)},
		{"link_delay_cycles", strconv.FormatUint(tj.LinkDelayCycles, 10)},
		{"switch_delay_cycles", strconv.FormatUint(tj.SwitchDelayCycles, 10)},
		{"send_overhead_cycles", strconv.FormatUint(tj.SendOverheadCycles, 10)},
		{"recv_overhead_cycles", strconv.FormatUint(tj.RecvOverheadCycles, 10)},
	} {
		fmt.Fprintf(a.stdout, "#   %-21s %s\n", kv[0]+":", kv[1])
	}
	return nil
}

// timingJSON is config.Timing with JSON names.
type timingJSON struct {
	ClockMHz           float64 `json:"clock_mhz"`
	PeriodPS           uint64  `json:"period_ps"`
	LinkBytesPerCycle  float64 `json:"link_bytes_per_cycle"`
	LinkBytesNum       uint64  `json:"link_bytes_num"`
	LinkBytesDen       uint64  `json:"link_bytes_den"`
	PacketCycles       uint64  `json:"packet_cycles"`
	LinkDelayCycles    uint64  `json:"link_delay_cycles"`
	SwitchDelayCycles  uint64  `json:"switch_delay_cycles"`
	SendOverheadCycles uint64  `json:"send_overhead_cycles"`
	RecvOverheadCycles uint64  `json:"recv_overhead_cycles"`
}

func newTimingJSON(c config.Config, t config.Timing) timingJSON {
	tj := timingJSON{
		ClockMHz:           c.ClockMHz,
		PeriodPS:           t.PeriodPS,
		LinkBytesNum:       t.LinkBytesNum,
		LinkBytesDen:       t.LinkBytesDen,
		PacketCycles:       t.PacketCycles,
		LinkDelayCycles:    t.LinkDelayCycles,
		SwitchDelayCycles:  t.SwitchDelayCycles,
		SendOverheadCycles: t.SendOverheadCycles,
		RecvOverheadCycles: t.RecvOverheadCycles,
	}
	if t.LinkBytesDen > 0 {
		tj.LinkBytesPerCycle = float64(t.LinkBytesNum) / float64(t.LinkBytesDen)
	}
	return tj
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// runCmd is `hwcoll run`: it parses and validates everything, then meets
// the missing network models.
func (a *app) runCmd(args []string) error {
	fs := newFlagSet("run")
	var cf configFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	vcdPath := fs.String("vcd", "", "VCD file to write")
	trace := fs.String("trace", "", "signals to trace")
	pcap := fs.String("pcap", "", "pcap file to write")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("run", pos); err != nil {
		return err
	}
	if err := checkTraceFlags(*vcdPath, *trace, "run"); err != nil {
		return err
	}
	if *pcap != "" {
		return usagef("run: --pcap: packet capture is not built yet; use --vcd for a waveform")
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	return a.runExperiment(cfg, *asJSON, *vcdPath, *trace)
}

// sweep is `hwcoll sweep`: one experiment per load, in increasing load
// order; --shard i/n keeps the points with index ≡ i (mod n) of that order.
func (a *app) sweep(args []string) error {
	fs := newFlagSet("sweep")
	var cf configFlags
	cf.register(fs)
	loadsFlag := fs.String("loads", "", "loads: L1,L2,... or FROM:TO:STEP")
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	out := fs.String("out", "", "directory for results.jsonl, results.csv and plots")
	shardFlag := fs.String("shard", "", "i/n: run only the points with index ≡ i (mod n)")
	jobs := newUint(fs, "jobs", uint64(runtime.GOMAXPROCS(0)), 1, 4096, "experiments run at once")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("sweep", pos); err != nil {
		return err
	}
	if *loadsFlag == "" {
		return usagef("sweep: missing --loads (e.g. --loads 0.1,0.5,0.9 or --loads 0.1:0.9:0.1)")
	}
	loads, err := parseLoads(*loadsFlag)
	if err != nil {
		return usagef("sweep: --loads %q: %v", *loadsFlag, err)
	}
	var shard sweep.Shard
	if *shardFlag != "" {
		if shard, err = sweep.ParseShard(*shardFlag); err != nil {
			return usagef("sweep: --shard %q: %v", *shardFlag, err)
		}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	sort.Float64s(loads) // the order of the output and of the shards
	var cfgs []config.Config
	for i, l := range loads {
		c := cfg
		if err := c.Set("traffic.load=" + fmtFloat(l)); err != nil {
			return usagef("sweep: --loads: %v", err)
		}
		if shard.Has(i) {
			cfgs = append(cfgs, c)
		}
	}
	if *out != "" {
		if err := prepareOut(*out); err != nil {
			return usagef("sweep: --out %s: %v", *out, err)
		}
	}
	return a.runSweep(cfgs, int(jobs.get()), *asJSON, *out)
}

// prepareOut creates the output directory and checks that it takes files,
// before any run, so a bad --out fails at once.
func prepareOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".hwcoll-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// merge is `hwcoll merge FILE...`: the results.jsonl of shards become the
// output of the whole sweep.
func (a *app) merge(args []string) error {
	fs := newFlagSet("merge")
	out := fs.String("out", "", "directory for results.jsonl, results.csv and plots")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("merge: no input; usage: %s", synopsis("merge"))
	}
	var all []experiment.Result
	for _, p := range pos {
		res, err := sweep.ReadFile(p)
		if err != nil {
			return usagef("merge: %v", err)
		}
		all = append(all, res...)
	}
	if len(all) == 0 {
		return usagef("merge: no results in %s", strings.Join(pos, ", "))
	}
	sweep.Order(all)
	if *out == "" {
		return sweep.WriteJSONL(a.stdout, all)
	}
	if err := prepareOut(*out); err != nil {
		return usagef("merge: --out %s: %v", *out, err)
	}
	return a.writeOut("merge", *out, all)
}

const maxLoads = 10000

// parseLoads reads "0.1,0.2,0.5" or "FROM:TO:STEP" (both ends included).
// Range points are FROM + i*STEP rounded to 12 significant digits, so
// 0.1:0.3:0.1 is exactly 0.1, 0.2, 0.3. Range checking of each load is
// left to config (traffic.load).
func parseLoads(s string) ([]float64, error) {
	num := func(what, v string) (float64, error) {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%s %q is not a number", what, strings.TrimSpace(v))
		}
		return x, nil
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 3 {
			return nil, errors.New("expected FROM:TO:STEP, e.g. 0.1:0.9:0.1")
		}
		from, err := num("FROM", parts[0])
		if err != nil {
			return nil, err
		}
		to, err := num("TO", parts[1])
		if err != nil {
			return nil, err
		}
		step, err := num("STEP", parts[2])
		if err != nil {
			return nil, err
		}
		if step <= 0 {
			return nil, fmt.Errorf("STEP %s must be positive", fmtFloat(step))
		}
		if to < from {
			return nil, fmt.Errorf("TO %s is below FROM %s", fmtFloat(to), fmtFloat(from))
		}
		n := math.Floor((to-from)/step+1e-9) + 1
		if n > maxLoads {
			return nil, fmt.Errorf("%.0f loads; at most %d", n, maxLoads)
		}
		out := make([]float64, int(n))
		for i := range out {
			x, _ := strconv.ParseFloat(strconv.FormatFloat(from+float64(i)*step, 'g', 12, 64), 64)
			out[i] = x
		}
		return out, nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		x, err := num("load", p)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
		if len(out) > maxLoads {
			return nil, fmt.Errorf("more than %d loads", maxLoads)
		}
	}
	return out, nil
}
