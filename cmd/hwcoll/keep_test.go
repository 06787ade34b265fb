package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/vcd"
)

// keptFiles is a directory of files a user already has where a run will
// write: a VCD and its .gtkw, a capture, a sweep's results.
type keptFiles struct {
	dir, vcd, gtkw, pcap, out string
	before                    map[string]string // path relative to dir → bytes
}

func newKeptFiles(t *testing.T) *keptFiles {
	t.Helper()
	dir := t.TempDir()
	k := &keptFiles{dir: dir, vcd: filepath.Join(dir, "keep.vcd"), gtkw: filepath.Join(dir, "keep.gtkw"),
		pcap: filepath.Join(dir, "keep.pcap"), out: filepath.Join(dir, "out")}
	require.NoError(t, os.Mkdir(k.out, 0o755))
	k.before = map[string]string{
		"keep.vcd":            "$comment the user's VCD $end\n",
		"keep.gtkw":           "[dumpfile] \"keep.vcd\"\n",
		"keep.pcap":           "the user's capture\n",
		"out/results.jsonl":   "{\"name\":\"earlier sweep\"}\n",
		"out/results.csv":     "name\nearlier sweep\n",
		"out/latency.svg":     "<svg/>\n",
		"out/anything-else.t": "left alone\n",
	}
	for rel, b := range k.before {
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(b), 0o644))
	}
	return k
}

// requireKept checks that every file has its bytes and that no temporary
// file was left beside them.
func (k *keptFiles) requireKept(t *testing.T) {
	t.Helper()
	got := map[string]string{}
	require.NoError(t, filepath.WalkDir(k.dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, err := filepath.Rel(k.dir, p)
		require.NoError(t, err)
		got[filepath.ToSlash(rel)] = string(b)
		return nil
	}))
	require.Equal(t, k.before, got)
}

// Bad input never costs the user a file: every refusal, whether found
// before anything is built or only by the build, leaves the files that
// were there byte for byte, and no temporary file beside them.
func TestRefusalKeepsExistingFiles(t *testing.T) {
	torus := []string{"--set", "network.topology=torus", "--set", "network.dims=4,4", "--set", "run.warmup_cycles=100", "--set", "run.measure_cycles=500"}
	cases := []struct {
		name string
		args func(k *keptFiles) []string
		want []string
	}{
		{"bad key", func(k *keptFiles) []string {
			return []string{"run", "--set", "network.bogus=3", "--vcd", k.vcd, "--pcap", k.pcap}
		}, []string{"network.bogus"}},
		{"bad value", func(k *keptFiles) []string {
			return []string{"run", "--set", "traffic.pattern=zigzag", "--vcd", k.vcd}
		}, []string{"traffic.pattern", "zigzag"}},
		{"unread key", func(k *keptFiles) []string {
			return append([]string{"run", "--set", "network.nodes=4096", "--vcd", k.vcd, "--pcap", k.pcap}, torus...)
		}, []string{"network.nodes", "no effect"}},
		{"bad routing", func(k *keptFiles) []string {
			return append([]string{"run", "--set", "router.routing=west-first", "--vcd", k.vcd, "--pcap", k.pcap}, torus...)
		}, []string{"router.routing", "west-first"}},
		{"bad trace glob", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--trace", "a b"}, torus...)
		}, []string{"--trace", `"a b"`}},
		{"one bad pattern in a trace list", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--trace", "top.net.*,a:b"}, torus...)
		}, []string{"--trace", `"a:b"`}},
		{"trace selects nothing", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--pcap", k.pcap, "--trace", "top.sw.*"}, torus...)
		}, []string{"--trace", "selects no signal", "top.net.r(0)(0)."}},
		{"trace with an unclosed parenthesis", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--trace", "top.net.r(1,2.*"}, torus...)
		}, []string{"--trace", `"(" at character 10 is never closed`}},
		{"tb run trace selects nothing", func(k *keptFiles) []string {
			return []string{"tb", "run", "creditlink", "--vcd", k.vcd, "--trace", "nosuch.*"}
		}, []string{"--trace", "scenario creditlink", "top.link."}},
		{"bad pcap-links glob", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--pcap", k.pcap, "--pcap-links", "a b"}, torus...)
		}, []string{"--pcap-links", `"a b"`}},
		{"pcap-links selects nothing", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--pcap", k.pcap, "--pcap-links", "top.nosuch.*"}, torus...)
		}, []string{"--pcap-links", "selects no link"}},
		{"pcap on a topology without capture", func(k *keptFiles) []string {
			return []string{"run", "--vcd", k.vcd, "--pcap", k.pcap}
		}, []string{"--pcap", "not for switch"}},
		{"fault on no link", func(k *keptFiles) []string {
			return append([]string{"run", "--set", "faults=top.net.r(9)(9).out(1)@0", "--vcd", k.vcd, "--pcap", k.pcap}, torus...)
		}, []string{"faults"}},
		{"fault without a cycle", func(k *keptFiles) []string {
			return append([]string{"run", "--set", "faults=top.net.r(0)(0).out(1)", "--vcd", k.vcd, "--pcap", k.pcap}, torus...)
		}, []string{"faults", "PATH@CYCLE"}},
		{"min routed by dor", func(k *keptFiles) []string {
			return []string{"run", "--set", "network.topology=min", "--set", "network.ports=2", "--set", "router.routing=dor", "--vcd", k.vcd}
		}, []string{"router.routing"}},
		{"empty vcd", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", "", "--pcap", k.pcap}, torus...)
		}, []string{"--vcd", "empty"}},
		{"empty pcap", func(k *keptFiles) []string {
			return append([]string{"run", "--vcd", k.vcd, "--pcap="}, torus...)
		}, []string{"--pcap", "empty"}},
		{"empty config", func(k *keptFiles) []string {
			return []string{"run", "--config", "", "--vcd", k.vcd}
		}, []string{"--config", "empty"}},
		{"vcd is a directory", func(k *keptFiles) []string {
			return []string{"run", "--vcd", k.out, "--pcap", k.pcap}
		}, []string{"--vcd", "directory"}},
		{"sweep bad key", func(k *keptFiles) []string {
			return []string{"sweep", "--loads", "0.2", "--set", "network.bogus=1", "--out", k.out}
		}, []string{"network.bogus"}},
		{"sweep unread key in a series", func(k *keptFiles) []string {
			return append([]string{"sweep", "--loads", "0.2", "--vary", "network.nodes=16,64", "--out", k.out}, torus...)
		}, []string{"network.nodes", "no effect"}},
		{"sweep bad routing in a series", func(k *keptFiles) []string {
			return append([]string{"sweep", "--loads", "0.2", "--vary", "router.routing=dor,west-first", "--out", k.out}, torus...)
		}, []string{"west-first"}},
		{"sweep bad loads", func(k *keptFiles) []string {
			return []string{"sweep", "--loads", "0.2,x", "--out", k.out}
		}, []string{"--loads"}},
		{"sweep bad faults", func(k *keptFiles) []string {
			return append([]string{"sweep", "--loads", "0.2", "--set", "faults=top.net.r(9)(9).out(1)@0", "--out", k.out}, torus...)
		}, []string{"faults"}},
		{"sweep empty out", func(k *keptFiles) []string {
			return []string{"sweep", "--loads", "0.2", "--out", ""}
		}, []string{"--out", "empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKeptFiles(t)
			r := runApp(c.args(k)...)
			requireOneLineError(t, r, c.want...)
			k.requireKept(t)
		})
	}
}

// A run that ends places its files under the real names (an existing file
// is replaced whole), and so does one stopped by a signal: its VCD is
// valid up to the cycle it stopped at.
func TestRunPlacesFilesWhenItEnds(t *testing.T) {
	k := newKeptFiles(t)
	r := runApp("run", "--set", "network.topology=torus", "--set", "network.dims=3,3", "--set", "run.warmup_cycles=100",
		"--set", "run.measure_cycles=500", "--vcd", k.vcd, "--trace", "top.net.r(0,0).*", "--pcap", k.pcap)
	require.Equal(t, 0, r.code, r.stderr)
	requireVCD(t, k.vcd)
	gtkw, err := os.ReadFile(k.gtkw)
	require.NoError(t, err)
	require.Contains(t, string(gtkw), "keep.vcd")
	st, err := os.Stat(k.pcap)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(24), "a capture header and packets")
	requireNoTemporary(t, k.dir)

	// A signal during the run: sent once the VCD being written has grown
	// past its header (the run's window is far longer than the test).
	k = newKeptFiles(t)
	sigs := make(chan os.Signal, 1)
	go func() {
		defer func() { sigs <- os.Interrupt }()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			es, _ := os.ReadDir(k.dir)
			for _, e := range es {
				if fi, err := e.Info(); err == nil && strings.Contains(e.Name(), ".hwcoll-") && fi.Size() > 64<<10 {
					return
				}
			}
		}
	}()
	r = runWith(nil, sigs, "run", "--set", "network.topology=torus", "--set", "network.dims=3,3", "--set", "run.measure_cycles=100000000",
		"--set", "run.max_cycles=200000000", "--vcd", k.vcd)
	require.Equal(t, 130, r.code, r.stderr)
	requireVCD(t, k.vcd)
	requireNoTemporary(t, k.dir)

	// A signal before the run has started interrupts the build: exit 130,
	// one line, and no file claimed valid.
	k = newKeptFiles(t)
	sigs = make(chan os.Signal, 1)
	sigs <- os.Interrupt
	r = runWith(nil, sigs, "run", "--set", "network.topology=torus", "--set", "network.dims=3,3", "--vcd", k.vcd)
	require.Equal(t, 130, r.code, r.stderr)
	require.Contains(t, r.stderr, "interrupted (interrupt) during the build")
	k.requireKept(t)
	requireNoTemporary(t, k.dir)
}

func requireVCD(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	parsed, err := vcd.Parse(f)
	require.NoError(t, err)
	require.NotEmpty(t, parsed.Vars)
}

func requireNoTemporary(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		require.NotContains(t, d.Name(), ".hwcoll-", "a temporary file was left behind")
		return nil
	}))
}

type writeCase struct {
	name       string
	args, want []string
}

// A file that cannot be written (a full disk, a directory that is not
// there) is one line naming the flag, exit status 2, whatever stage found
// it; the user's files elsewhere are untouched.
func TestWriteErrorsNameTheFlag(t *testing.T) {
	k := newKeptFiles(t)
	missing := filepath.Join(k.dir, "no", "such", "dir")
	torus := []string{"--set", "network.topology=torus", "--set", "network.dims=3,3", "--set", "run.warmup_cycles=100", "--set", "run.measure_cycles=500"}
	cases := []writeCase{
		{"vcd in a missing directory", append([]string{"run", "--vcd", filepath.Join(missing, "t.vcd")}, torus...), []string{"--vcd", "no/such/dir/t.vcd", "no such file"}},
		{"pcap in a missing directory", append([]string{"run", "--pcap", filepath.Join(missing, "t.pcap")}, torus...), []string{"--pcap", "no/such/dir/t.pcap", "no such file"}},
		{"tb vcd in a missing directory", []string{"tb", "run", "creditlink", "--vcd", filepath.Join(missing, "t.vcd")}, []string{"--vcd", "no such file"}},
		{"sweep out under a file", []string{"sweep", "--loads", "0.2", "--set", "run.warmup_cycles=100", "--set", "run.measure_cycles=500", "--out", filepath.Join(k.vcd, "out")}, []string{"--out", "keep.vcd"}},
		{"merge out under a file", []string{"merge", "--out", filepath.Join(k.vcd, "out"), filepath.Join(k.out, "results.jsonl")}, []string{"--out", "keep.vcd"}},
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		cases = append(cases,
			writeCase{"vcd on a full disk", append([]string{"run", "--vcd", "/dev/full"}, torus...), []string{"--vcd /dev/full", "no space left"}},
			writeCase{"traced vcd on a full disk", append([]string{"run", "--vcd", "/dev/full", "--trace", "top.net.r(0,0).*"}, torus...), []string{"--vcd /dev/full", "no space left"}},
			writeCase{"pcap on a full disk", append([]string{"run", "--pcap", "/dev/full"}, torus...), []string{"--pcap /dev/full", "no space left"}},
			writeCase{"tb vcd on a full disk", []string{"tb", "run", "creditlink", "--vcd", "/dev/full"}, []string{"--vcd /dev/full", "no space left"}},
		)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(t.TempDir(), "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		cases = append(cases, writeCase{"vcd in a read-only directory", append([]string{"run", "--vcd", filepath.Join(ro, "t.vcd")}, torus...), []string{"--vcd", "permission denied"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runApp(c.args...)
			requireOneLineError(t, r, c.want...)
			require.Empty(t, r.stdout)
			require.False(t, strings.Contains(r.stderr, ".hwcoll-"), "the message names the user's file, not the temporary one")
		})
	}
	k.requireKept(t)
}
