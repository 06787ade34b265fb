package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
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
	// What run would refuse is not printed as a configuration to run.
	if err := experiment.Check(cfg); err != nil {
		return usagef("%s", oneLine(err.Error()))
	}
	cfg = experiment.Resolve(cfg) // what the topology makes of auto and its own defaults
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
	pcap := fs.String("pcap", "", "pcap file to write (torus, mesh)")
	pcapLinks := fs.String("pcap-links", "", "links to capture (globs over link paths; default all)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("run", pos); err != nil {
		return err
	}
	// Everything that can be checked without building is checked before
	// any output file is opened.
	if err := fs.refuseEmpty("config", "vcd", "pcap"); err != nil {
		return err
	}
	if err := checkTraceFlags(*vcdPath, *trace, "run"); err != nil {
		return err
	}
	if *pcapLinks != "" && *pcap == "" {
		return usagef("run: --pcap-links needs --pcap FILE")
	}
	if err := rtl.ValidateGlobs(*pcapLinks); err != nil {
		return usagef("run: --pcap-links: %v", err)
	}
	if err := checkOutPath("run", "pcap", *pcap); err != nil {
		return err
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	if err := experiment.Check(cfg); err != nil {
		return usagef("%v", err)
	}
	a.pcapPath, a.pcapLinks = *pcap, *pcapLinks
	return a.runExperiment(cfg, *asJSON, *vcdPath, *trace)
}
