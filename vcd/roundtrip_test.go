package vcd

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireTool returns the path of an external program. When it is missing
// the test is skipped, except under CI=true where it fails.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (CI=true): install it (apt-get install -y gtkwave xvfb: vcd2fst, fst2vcd, gtkwave, xvfb-run)", name)
	}
	t.Skipf("%s not found: apt-get install -y gtkwave xvfb to run this test", name)
	return ""
}

// fstRoundTrip converts a VCD to FST and back with GTKWave's tools.
func fstRoundTrip(t *testing.T, vcdText []byte) []byte {
	t.Helper()
	vcd2fst, fst2vcd := requireTool(t, "vcd2fst"), requireTool(t, "fst2vcd")
	dir := t.TempDir()
	in, fst := filepath.Join(dir, "in.vcd"), filepath.Join(dir, "out.fst")
	require.NoError(t, os.WriteFile(in, vcdText, 0o644))
	out, err := exec.Command(vcd2fst, in, fst).CombinedOutput()
	require.NoError(t, err, "vcd2fst: %s", out)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(fst2vcd, fst)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "fst2vcd: %s", stderr.String())
	return stdout.Bytes()
}

// normalizeFor makes equal values compare equal across the FST round trip:
// fst2vcd prints reals with "%.16g" (and "nan", "inf"), so reals compare as
// decimals of 16 significant digits; vectors were already normalized by
// Parse, and strings are escaped identically by both sides.
func normalizeFor(t *testing.T, kind string, h []tv) []tv {
	if kind != "real" {
		return h
	}
	out := make([]tv, len(h))
	for i, c := range h {
		out[i] = tv{c.Time, real16(t, c.Value)}
	}
	return out
}

func real16(t *testing.T, s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		return strconv.FormatFloat(f, 'g', 16, 64)
	}
	// %.16g of ±MaxFloat64 rounds to a decimal beyond the float64 range.
	b, _, err := big.ParseFloat(s, 10, 64, big.ToNearestEven)
	require.NoError(t, err, "real %q", s)
	return b.Text('g', 16)
}

// requireSameHistories requires every variable of ours to exist in theirs
// with the same kind and the same (time, value) history.
func requireSameHistories(t *testing.T, ours, theirs *File) {
	t.Helper()
	require.Equal(t, ours.Timescale, theirs.Timescale)
	require.Len(t, theirs.Vars, len(ours.Vars))
	for _, v := range ours.Vars {
		d, ok := theirs.Var(v.Name)
		require.True(t, ok, "%s missing after round trip", v.Name)
		require.Equal(t, v.Kind, d.Kind, v.Name)
		if v.Kind != "string" { // fst2vcd declares strings with width 0
			require.Equal(t, v.Width, d.Width, v.Name)
		}
		want := normalizeFor(t, v.Kind, histories(ours, v.Name))
		got := normalizeFor(t, d.Kind, histories(theirs, v.Name))
		require.Equal(t, want, got, "history of %s", v.Name)
	}
}

func TestFSTRoundTripGolden(t *testing.T) {
	var buf bytes.Buffer
	writeGolden(t, &buf)
	back := fstRoundTrip(t, buf.Bytes())
	ours, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	theirs, err := Parse(bytes.NewReader(back))
	require.NoError(t, err)
	requireSameHistories(t, ours, theirs)
}

func TestFSTRoundTripRandom(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			sc := randScenario(rand.New(rand.NewPCG(seed, 0x5eed)))
			out, model := sc.play(t)
			back := fstRoundTrip(t, out)
			ours, err := Parse(bytes.NewReader(out))
			require.NoError(t, err)
			for name, want := range model {
				require.Equal(t, want, histories(ours, name), name)
			}
			theirs, err := Parse(bytes.NewReader(back))
			require.NoError(t, err)
			requireSameHistories(t, ours, theirs)
		})
	}
}

// Many variables: identifier codes of two and three characters, and the
// full 64-bit range, survive the round trip.
func TestFSTRoundTripManyVars(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{Timescale: "100ps"})
	require.NoError(t, err)
	const n = 94*94 + 200
	ids := make([]ID, n)
	for i := range ids {
		if i%500 == 0 {
			if i > 0 {
				w.Upscope()
			}
			w.Scope("blk(" + strconv.Itoa(i/500) + ")")
		}
		ids[i] = w.Var(Vector, 64, "v"+strconv.Itoa(i))
	}
	require.NoError(t, w.Begin())
	for step := uint64(1); step <= 3; step++ {
		w.At(step * 7)
		for i, id := range ids {
			w.SetBits(id, (uint64(i)+step)*0x9e3779b97f4a7c15)
		}
	}
	require.NoError(t, w.Close(30))
	back := fstRoundTrip(t, buf.Bytes())
	ours, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, "!!!", ours.Vars[94*94+94].ID)
	theirs, err := Parse(bytes.NewReader(back))
	require.NoError(t, err)
	requireSameHistories(t, ours, theirs)
}
