package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/sweep"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFail     = 1 // a scenario's check failed
	exitUsage    = 2 // bad input: one line on stderr
	exitInternal = 3 // a bug in hwcoll (a recovered panic, a design that does not elaborate)
	exitDeadlock = 3 // the deadlock watchdog stopped a run (the contract's status)
)

// usageError is bad input (an unknown command, flag, value, scenario or
// config key, or a file that cannot be read or written): its line is printed
// on stderr as is and the exit status is 2.
type usageError struct{ line string }

func (e *usageError) Error() string { return e.line }

// usagef makes a usageError whose line is "hwcoll: " and the message.
func usagef(format string, a ...any) error {
	return &usageError{line: "hwcoll: " + oneLine(fmt.Sprintf(format, a...))}
}

// internalError is a bug: exit status 3 with a hint to report it.
type internalError struct{ msg string }

func (e *internalError) Error() string { return e.msg }

// exitStatus ends a command that has already reported what happened (a FAIL
// summary, an interrupted run) with the given status and no further message.
type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// errHelp asks for a command's usage on stdout and exit status 0.
type errHelp struct{ cmd string }

func (e errHelp) Error() string { return "help requested" }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// app is one invocation; the fields other than the writers are seams for
// in-process tests.
type app struct {
	stdout, stderr io.Writer
	color          bool // colour the human output (a terminal, NO_COLOR unset)
	// pcapPath and pcapLinks are run's --pcap and --pcap-links.
	pcapPath, pcapLinks string
	// prior is the rows a resumed sweep keeps (--resume).
	prior []sweep.Row

	// scenarios lists the testbench scenarios (scenario.All in the binary).
	scenarios func() []scenario.Scenario
	// interrupts delivers SIGINT/SIGTERM during a run; stop restores the
	// default handling (so a second Ctrl-C kills the process at once).
	interrupts func() (sigs <-chan os.Signal, stop func())
	// isTerminal decides whether the sweep progress line is drawn on
	// stderr; now is the clock of its elapsed time and ETA.
	isTerminal func(io.Writer) bool
	now        func() time.Time
}

func newApp(stdout, stderr io.Writer) *app {
	return &app{
		stdout:     stdout,
		stderr:     stderr,
		color:      colorFor(stdout),
		scenarios:  scenario.All,
		interrupts: osInterrupts,
		isTerminal: isTerminal,
		now:        time.Now,
	}
}

func osInterrupts() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// run is the whole command line tool; main only exits with its status.
func run(args []string, stdout, stderr io.Writer) int {
	return newApp(stdout, stderr).main(args)
}

func (a *app) main(args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.stderr, "hwcoll: internal error: %s (this is a bug in hwcoll; please report it with the command line that triggered it)\n", oneLine(fmt.Sprint(r)))
			code = exitInternal
		}
	}()
	if len(args) == 0 {
		fmt.Fprint(a.stderr, usageText)
		return exitUsage
	}
	return a.exit(a.dispatch(args))
}

func (a *app) exit(err error) int {
	var (
		ue *usageError
		ie *internalError
		es exitStatus
		eh errHelp
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &eh):
		fmt.Fprint(a.stdout, commandUsage(eh.cmd))
		return exitOK
	case errors.As(err, &es):
		return int(es)
	case errors.As(err, &ue):
		fmt.Fprintln(a.stderr, ue.line)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(a.stderr, "hwcoll: internal error: %s (this is a bug in hwcoll; please report it with the command line that triggered it)\n", oneLine(ie.msg))
		return exitInternal
	default:
		fmt.Fprintln(a.stderr, "hwcoll: "+oneLine(err.Error()))
		return exitUsage
	}
}

var commands = []string{"tb", "demo", "config", "run", "sweep", "merge", "figures", "help"}

func (a *app) dispatch(args []string) error {
	switch cmd, rest := args[0], args[1:]; cmd {
	case "help", "-h", "-help", "--help":
		return a.help(rest)
	case "tb":
		return a.tb(rest)
	case "demo":
		return a.demo(rest)
	case "config":
		return a.config(rest)
	case "run":
		return a.runCmd(rest)
	case "sweep":
		return a.sweep(rest)
	case "merge":
		return a.merge(rest)
	case "figures":
		return a.figures(rest)
	default:
		if strings.HasPrefix(cmd, "-") {
			return usagef("unknown flag %s before the command; commands: %s (hwcoll help)", cmd, strings.Join(commands, ", "))
		}
		return usagef("unknown command %q; commands: %s (hwcoll help)", cmd, strings.Join(commands, ", "))
	}
}

func (a *app) help(args []string) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(a.stdout, usageText)
		return nil
	case len(args) == 1 || (len(args) == 2 && args[0] == "tb"):
		cmd := strings.Join(args, " ")
		if _, ok := usages[cmd]; !ok {
			return usagef("help: unknown command %q; commands: %s", cmd, strings.Join(commands, ", "))
		}
		fmt.Fprint(a.stdout, commandUsage(cmd))
		return nil
	default:
		return usagef("help: unexpected argument %q; usage: hwcoll help [COMMAND]", args[len(args)-1])
	}
}

// flagSet is a subcommand's flags: the standard flag package with its
// output discarded; parse turns its errors into one line.
type flagSet struct {
	*flag.FlagSet
	cmd string // "tb run"
}

func newFlagSet(cmd string) *flagSet {
	fs := flag.NewFlagSet("hwcoll "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, cmd: cmd}
}

// names lists the flags as --name, for messages.
func (fs *flagSet) names() string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

var (
	reInvalid   = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-(\S+): (.*)$`)
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -(\S*)$`)
	reNeedsArg  = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
	reBadSyntax = regexp.MustCompile(`^bad flag syntax: (.*)$`)
)

// parse parses flags and positional arguments in any order ("tb run NAME
// --seed 3" and "tb run --seed 3 NAME"); everything after "--" is
// positional, and so is a lone "-".
func (fs *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fs.explain(err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (fs *flagSet) explain(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return errHelp{cmd: fs.cmd}
	}
	msg := err.Error()
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		return usagef("%s: unknown flag --%s; flags: %s", fs.cmd, m[1], fs.names())
	}
	if m := reNeedsArg.FindStringSubmatch(msg); m != nil {
		return usagef("%s: flag --%s needs a value (--%s VALUE or --%s=VALUE)", fs.cmd, m[1], m[1], m[1])
	}
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		if f := fs.Lookup(m[2]); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				m[3] = "allowed: true, false (or the bare flag for true)"
			}
		}
		return usagef("%s: --%s %s: %s", fs.cmd, m[2], m[1], m[3])
	}
	if m := reBadSyntax.FindStringSubmatch(msg); m != nil {
		return usagef("%s: bad flag syntax %q; flags: %s", fs.cmd, m[1], fs.names())
	}
	return usagef("%s: %s", fs.cmd, msg)
}

// refuseEmpty refuses a file flag given an empty value (--vcd=""), which
// would otherwise read as the flag not given and silently write nothing.
func (fs *flagSet) refuseEmpty(names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) && f.Value.String() == "" {
			err = usagef("%s: --%s needs a file name; it was given an empty one", fs.cmd, f.Name)
		}
	})
	return err
}

// noArgs rejects positional arguments.
func noArgs(cmd string, pos []string) error {
	if len(pos) > 0 {
		return usagef("%s: unexpected argument %q; usage: %s", cmd, pos[0], synopsis(cmd))
	}
	return nil
}

// uintFlag is a whole number in [lo, hi].
type uintFlag struct {
	v      *uint64
	lo, hi uint64
	set    bool
}

func newUint(fs *flagSet, name string, def, lo, hi uint64, doc string) *uintFlag {
	v := def
	f := &uintFlag{v: &v, lo: lo, hi: hi}
	fs.Var(f, name, doc)
	return f
}

func (f *uintFlag) String() string {
	if f == nil || f.v == nil {
		return ""
	}
	return strconv.FormatUint(*f.v, 10)
}

func (f *uintFlag) Set(s string) error {
	x, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil || x < f.lo || x > f.hi {
		return fmt.Errorf("not a whole number in %d..%d", f.lo, f.hi)
	}
	*f.v, f.set = x, true
	return nil
}

func (f *uintFlag) get() uint64 { return *f.v }

// listFlag collects a repeatable flag (--set).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// knownScenarios is "a, b, c" for messages.
func (a *app) knownScenarios() string {
	var names []string
	for _, s := range a.scenarios() {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

func (a *app) lookup(name string) (scenario.Scenario, error) {
	for _, s := range a.scenarios() {
		if s.Name == name {
			return s, nil
		}
	}
	return scenario.Scenario{}, usagef("tb run: unknown scenario %q; known: %s (hwcoll tb list)", name, a.knownScenarios())
}
