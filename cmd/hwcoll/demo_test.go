package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/ibmesh"
	"github.com/hwcoll/hwcoll/scenario"
)

// requireDemoTour checks the tour's sections in the demo's stdout, as the
// registry gives them: every registered topology with a Demo has its
// section's heading, its parts' titles and a row per run that kept its
// checks, and the files the rows name exist and read back: each VCD with
// its .gtkw, each capture as the InfiniBand packets the run counted (and
// tshark decodes them with the command printed, when it is installed).
func requireDemoTour(t *testing.T, stdout, out string, tour []experiment.DemoSection) {
	t.Helper()
	in := map[string]bool{}
	for k, s := range tour {
		require.Contains(t, stdout, fmt.Sprintf("\n%d. %s\n", k+2, s.Title))
		for _, p := range s.Parts {
			in[p.Topology] = true
			require.Contains(t, stdout, "\n"+p.Title+"\n")
			for _, run := range p.Runs {
				row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(run.Label) + ` .* ok$`).FindString(stdout)
				require.NotEmpty(t, row, "%s: no row %q that ran ok", p.Title, run.Label)
				if run.Versus != "" {
					// The papers' claim: hardware beats the messages.
					m := regexp.MustCompile(`([\d.]+)×`).FindStringSubmatch(row)
					require.NotNil(t, m, row)
					x, err := strconv.ParseFloat(m[1], 64)
					require.NoError(t, err)
					require.Greater(t, x, 1.0, "%s is slower than %s", run.Versus, run.Label)
				}
				if run.Trace != nil {
					v := filepath.Join(out, run.Trace.File)
					requireTrace(t, v)
					require.Contains(t, stdout, "gtkwave "+v+" "+gtkwPath(v))
				}
				if run.Pcap != nil {
					requireDemoCapture(t, stdout, filepath.Join(out, run.Pcap.File), run.Label)
				}
			}
			if len(p.Loads) == 0 {
				again, flags := demoAgain(p)
				require.Contains(t, stdout, "  by hand ("+p.Runs[again].Label+"): "+demoCommand(append(p.Command(again), flags...))+"\n")
			}
		}
	}
	for _, name := range experiment.Topologies() {
		top, err := experiment.TopologyOf(config.Config{Network: config.Network{Topology: name}})
		require.NoError(t, err)
		if top.Demo != nil && len(tour) == len(experiment.Tour()) {
			require.True(t, in[name], "%s registers a Demo the tour does not show", name)
		}
	}
}

// requireDemoCapture reads the capture back: link type 147, as many
// InfiniBand packets as the demo says, and, with tshark installed, the
// printed command decodes every one of them.
func requireDemoCapture(t *testing.T, stdout, path, label string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	require.Equal(t, ibmesh.LinkType, r.LinkType())
	n := 0
	for {
		if _, _, err := r.ReadPacketData(); err != nil {
			break
		}
		n++
	}
	require.Positive(t, n)
	line := regexp.MustCompile(`(?m)^  decode the capture \(` + regexp.QuoteMeta(label) + `, (\d+) packets\): (tshark .*)$`).FindStringSubmatch(stdout)
	require.NotNil(t, line, "the capture's line")
	require.Equal(t, strconv.Itoa(n), line[1])
	require.Contains(t, line[2], shellQuote(path))
	if _, err := exec.LookPath("tshark"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tshark not found (CI=true): apt-get install -y tshark")
		}
		t.Log("tshark not found: the printed command is not run")
		return
	}
	// The line as the user pastes it.
	dec, err := exec.Command("sh", "-c", line[2]).Output()
	require.NoError(t, err, line[2])
	lines := strings.Split(strings.TrimSpace(string(dec)), "\n")
	require.Len(t, lines, n)
	for _, l := range lines {
		require.Contains(t, l, "InfiniBand")
		require.Contains(t, l, "UD Send Only")
	}
}

// requireWholeDemoTour checks every section of the tour and the papers'
// numbers in it.
func requireWholeDemoTour(t *testing.T, stdout, out string) {
	t.Helper()
	requireDemoTour(t, stdout, out, experiment.Tour())
	requireDemoPapers(t, stdout)
}

// demoTourFirst narrows the demo to the tour's first n sections for the
// rest of the test.
func demoTourFirst(t *testing.T, n int) {
	tourOf = func() []experiment.DemoSection { return experiment.Tour()[:n] }
	t.Cleanup(func() { tourOf = experiment.Tour })
}

// The demo's numbers that the source papers give or claim.
func requireDemoPapers(t *testing.T, stdout string) {
	t.Helper()
	// The BG/L MPI paper: about 2 µs for an allreduce on 65,536 nodes.
	require.Regexp(t, `(?m)^65,536 nodes +17 +1,439 cyc +2\.06 µs +≈2 µs +\S+ +ok$`, stdout)
	// The WORMulSim paper's Table 1 beside this machine's wall time.
	for _, p := range []string{"0.17 s", "2.16 s", "8.30 s", "33.42 s", "0.24 s", "2.71 s", "10.30 s", "43.27 s"} {
		require.Regexp(t, `(?m)^(one-to-all|all-to-one), .*[\d.]+(µs|ms|s) +`+regexp.QuoteMeta(p)+` +ok$`, stdout)
	}
	// A midplane: deposit-bit lines reach all 511 other nodes.
	require.Regexp(t, `(?m)^deposit bit, 256 B +\d+ +511 `, stdout)
}

// The tour comes from the registry: a network registered from a test file
// with a Demo gets its section in hwcoll demo, its table and its trace,
// with nothing else touched.
func TestDemoTourComesFromTheRegistry(t *testing.T) {
	toy := toyRing()
	toy.Demo = &experiment.Demo{
		Section: "A toy ring",
		Order:   1,
		Parts: []experiment.DemoPart{{
			Title:     "A ring of 6 routers at two loads",
			Base:      []string{"network.switches=6", "router.vcs=2", "run.warmup_cycles=200", "run.measure_cycles=2000"},
			RowHeader: "load",
			Runs: []experiment.DemoRun{
				{Label: "light", Set: []string{"traffic.load=0.1"}},
				{Label: "heavy", Set: []string{"traffic.load=0.4"}, Trace: &experiment.DemoTrace{File: "toy.vcd", Glob: "top.net.ring(2).*"}},
			},
			Columns: experiment.DemoLoad,
			Note:    "A toy's note.",
		}},
	}
	experiment.Register(toy)
	t.Cleanup(func() { experiment.Unregister("toyring") })
	var mine []experiment.DemoSection
	for _, s := range experiment.Tour() {
		if s.Parts[0].Topology == "toyring" {
			mine = append(mine, s)
		}
	}
	require.Len(t, mine, 1, "the toy's section, first by its Order")
	require.Equal(t, "toyring", experiment.Tour()[0].Parts[0].Topology)
	tourOf = func() []experiment.DemoSection { return mine }
	t.Cleanup(func() { tourOf = experiment.Tour })

	out := filepath.Join(t.TempDir(), "demo")
	var pipeline []scenario.Scenario
	for _, s := range scenario.All() {
		if s.Name == "pipeline" {
			pipeline = append(pipeline, s)
		}
	}
	r := runWith(pipeline, nil, "demo", "--out", out)
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	requireDemoTour(t, r.stdout, out, mine)
	require.Contains(t, r.stdout, "\nA toy's note.\n")
	require.Regexp(t, `(?m)^load +offered +accepted +avg latency +p99 latency +result$`, r.stdout)
	require.Contains(t, r.stdout, "  by hand (heavy): hwcoll run --set network.topology=toyring --set network.switches=6 --set router.vcs=2 "+
		"--set run.warmup_cycles=200 --set run.measure_cycles=2000 --set traffic.load=0.4 --vcd toy.vcd --trace 'top.net.ring(2).*'\n")
	require.NotContains(t, r.stdout, "sweep plots", "no part swept the load")
}
