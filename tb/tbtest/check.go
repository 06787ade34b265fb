// Package tbtest runs the testbenches' rapid properties (tb.Harness,
// tb.Env) and leaves a failing one's shrunk counterexample as a waveform.
// It is test-only: it imports testing and rapid, which package tb and the
// hwcoll binary do not.
package tbtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

// Check runs a rapid property. When it fails, the shrunk counterexample is
// written as testdata/failures/<Test>.vcd (with a .gtkw beside it) and the
// path is reported in the failure.
func Check(t *testing.T, prop func(*rapid.T, *tb.Env)) {
	t.Helper()
	var failing bool
	var last []byte
	var lastH *tb.Harness
	var lastSigs []rtl.TracedSignal
	defer func() {
		if !t.Failed() || last == nil {
			return
		}
		path, err := writeFailure(t.Name(), last, lastH, lastSigs)
		if err != nil {
			t.Errorf("could not write the counterexample waveform: %v", err)
			return
		}
		t.Errorf("counterexample waveform: %s (gtkwave %s %s)", path, path, strings.TrimSuffix(path, ".vcd")+".gtkw")
	}()
	rapid.Check(t, func(rt *rapid.T) {
		env := tb.NewEnv(failing)
		defer func() {
			r := recover()
			if r != nil || rt.Failed() {
				failing = true
				if w, h, sigs := env.Waveform(); w != nil {
					last = append(last[:0], w...)
					lastH, lastSigs = h, sigs
				}
			}
			if r != nil {
				panic(r)
			}
		}()
		prop(rt, env)
	})
}

var unsafeFile = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func writeFailure(test string, data []byte, h *tb.Harness, sigs []rtl.TracedSignal) (string, error) {
	dir := filepath.Join("testdata", "failures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := unsafeFile.ReplaceAllString(test, "_")
	path := filepath.Join(dir, base+".vcd")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	f, err := os.Create(strings.TrimSuffix(path, ".vcd") + ".gtkw")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := vcd.WriteGTKW(f, base+".vcd", tb.GroupsFor(h, sigs)); err != nil {
		return "", err
	}
	return path, nil
}
