package main

import "strings"

const usageText = `hwcoll - cycle-accurate RTL-level simulator of interconnect hardware
with collectives in the network (switches, crosspoint buffers, credits,
combine units), with VCD waveforms for GTKWave.

Usage:
  hwcoll tb list                    list the testbench scenarios
  hwcoll tb run NAME [flags]        run one scenario
        --seed S        random seed (default 1)
        --cycles N      cycle budget (default: the scenario's)
        --vcd FILE      write a VCD trace, and FILE.gtkw (GTKWave save file) beside it
        --trace GLOB    signals to trace, comma-separated globs ('*' matches dots too),
                        e.g. 'top.link.producer.*,*credits*' (default: all)
        --json          print the result as one JSON object
  hwcoll demo [--out DIR]           the main job on the defaults: every scenario (traced), a
                                    256-node fat-tree sweep, an allreduce, a leaf switch trace;
                                    tables on stdout, VCD/.gtkw, results and plots in DIR
                                    (default hwcoll-demo)
  hwcoll config [--config FILE] [--set key=value]... [--json]
                                    print the effective configuration and its timing in cycles
  hwcoll config keys                print the configuration reference (Markdown table)
  hwcoll run [--config FILE] [--set key=value]... [--json] [--vcd FILE] [--trace GLOB] [--pcap FILE [--pcap-links GLOB]]
                                    run one experiment
  hwcoll sweep [--config FILE] --loads L1,L2,...|FROM:TO:STEP | --x KEY=V1,V2,...
               [--vary KEY=V1,V2,...]... [--series "KEY=V ..."]... [--set key=value]...
               [--json] [--out DIR [--resume]] [--jobs N] [--shard i/n]
                                    run one experiment per point (per load, or per value
                                    of --x; per series); --out writes DIR/results.jsonl,
                                    results.csv and plots (PNG, SVG)
  hwcoll merge FILE... [--out DIR]  merge the results.jsonl of sweep shards into the
                                    output of the whole sweep (JSON lines, or DIR)
  hwcoll figures [--manifest F] [--out DIR] [--doc FILE] [--jobs N] [--only A,B] [--pending]
                                    = make figures: the experiments of the papers in
                                    configs/figures.yaml into figures/, docs/results.md
  hwcoll help [COMMAND]             this text, or one command's

Flags may come before or after NAME. Colour is off when stdout is not a
terminal or NO_COLOR is set.

Exit status: 0 passed, 1 a check failed, 2 bad input, 3 internal error,
130 interrupted (Ctrl-C; the VCD is closed cleanly first).
`

// usages holds each command's synopsis and details.
var usages = map[string][2]string{
	"tb": {"hwcoll tb list | hwcoll tb run NAME [--seed S] [--cycles N] [--vcd FILE] [--trace GLOB] [--json]",
		"Testbench scenarios: small self-checking designs that exercise the kernel\nend to end and show it in a waveform. See 'hwcoll help tb run'.\n"},
	"tb list": {"hwcoll tb list",
		"Lists the scenarios, one per line: the name, then a description.\n"},
	"tb run": {"hwcoll tb run NAME [--seed S] [--cycles N] [--vcd FILE] [--trace GLOB] [--json]",
		`Runs one scenario until it is done or the cycle budget is spent, checks
its invariants every cycle and its result at the end.

  --seed S        random seed (default 1)
  --cycles N      cycle budget (default: the scenario's)
  --vcd FILE      write a VCD trace to FILE and a GTKWave save file beside
                  it (FILE with .vcd replaced by .gtkw):
                  gtkwave FILE.vcd FILE.gtkw
  --trace GLOB    signals to trace (needs --vcd): comma-separated globs on
                  dotted names; '*' matches any run of characters, dots
                  included, '?' one character; a module selects everything
                  under it (default: every signal)
  --json          print the result as exactly one JSON object

Exit status 0 when the check passes, 1 when it fails, 130 when interrupted.
`},
	"demo": {"hwcoll demo [--out DIR]",
		`The main job on embedded defaults, no files needed (DIR defaults to
hwcoll-demo):
 1. every testbench scenario with its defaults and seed 1, traced into
    DIR/NAME.vcd + DIR/NAME.gtkw; a summary table;
 2. a short load sweep (0.3, 0.6, 0.9) of the 256-node fat-tree of 32-port
    switches, uniform traffic, one goroutine per CPU; a table, and
    DIR/results.csv, DIR/results.jsonl, DIR/latency.{png,svg},
    DIR/accepted.{png,svg};
 3. one 4 KiB allreduce on a 32-port switch with 1 and with 5 combine
    units; the completion times;
 4. a trace of leaf switch 0 of a 64-node fat-tree of 8-port switches at
    load 0.5: DIR/leaf0.vcd + DIR/leaf0.gtkw;
then how to open the trace in GTKWave and where the plots are.
`},
	"config": {"hwcoll config [--config FILE] [--set key=value]... [--json] | hwcoll config keys",
		`Prints the effective configuration (the defaults, then FILE, then each
--set in order) as YAML, with the derived timing in cycles as comments,
or as one JSON object {"config": ..., "timing": ...} with --json.
'hwcoll config keys' prints every key with its default, allowed values
and meaning as a Markdown table.
`},
	"run": {"hwcoll run [--config FILE] [--set key=value]... [--json] [--vcd FILE] [--trace GLOB] [--pcap FILE [--pcap-links GLOB]]",
		`Runs one experiment on the configured network (defaults, then FILE,
then each --set in order).
`},
	"sweep": {"hwcoll sweep [--config FILE] --loads L1,L2,...|FROM:TO:STEP | --x KEY=V1,V2,... [--vary KEY=V1,V2,...]... [--series \"KEY=V ...\"]... [--set key=value]... [--json] [--out DIR [--resume]] [--jobs N] [--shard i/n]",
		`Runs one experiment per point, --jobs at a time (results do not depend
on --jobs). Prints a table, or one JSON object per line with --json: the
result's fields, then point (its index in the sweep), series, x_key, x.

  --loads L      the x axis is traffic.load: L1,L2,... or FROM:TO:STEP
  --x KEY=VALUES another numeric key on the x axis at the config's load,
                 e.g. --x traffic.message_bytes=64,1024,16384
  --vary KEY=VALUES
                 one series per value (repeated: every combination), e.g.
                 --vary network.organization=oq-xp,iq-fifo,voq; a list
                 value has x between its entries: --vary network.dims=4x4,8x8
  --series "KEY=V KEY=V"
                 one series with these keys (repeatable; instead of --vary)
  --out DIR      also write DIR/results.jsonl (the JSON lines),
                 DIR/results.csv (one column per JSON field) and the plots
                 as .png and .svg: latency and accepted vs the x axis, or
                 completion vs the x axis for collectives over --x; one
                 line per series
  --shard i/n    run only the points with index ≡ i (mod n), 0 ≤ i < n;
                 points are listed series by series, x increasing; merge
                 the shards with 'hwcoll merge' (e.g. one shard per Slurm
                 array task)

Progress (points done, ETA) goes to stderr when it is a terminal.
`},
	"figures": {"hwcoll figures [--manifest FILE] [--out DIR] [--doc FILE] [--jobs N] [--only NAME,...] [--pending]",
		`Runs the experiments of the manifest (default configs/figures.yaml; each
a sweep with the paper's statement and how to extract our number), all
their points on one pool of --jobs goroutines, into DIR/NAME/ (default
figures/: results.jsonl, results.csv, PNG and SVG plots), then writes the
report FILE (default docs/results.md): per experiment the paper's
statement, our numbers and a comment generated from them.

  --only NAME,...  run only these; the others' earlier results in DIR are
                   kept and reported
  --pending        also run the entries marked pending

Exit status 1 when an experiment failed to run (the report says why).
`},
	"merge": {"hwcoll merge FILE... [--out DIR]",
		`Reads the results.jsonl files of sweep shards (or the output of sweep
--json) and writes what the whole sweep would have: points in increasing
offered load, as JSON lines on stdout, or with --out DIR as
DIR/results.jsonl, results.csv and the plots.
`},
	"help": {"hwcoll help [COMMAND]", "Prints the usage of hwcoll or of one command.\n"},
}

func synopsis(cmd string) string { return usages[cmd][0] }

func commandUsage(cmd string) string {
	u, ok := usages[cmd]
	if !ok {
		return usageText
	}
	return "Usage: " + u[0] + "\n\n" + strings.TrimLeft(u[1], "\n")
}
