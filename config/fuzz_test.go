package config

import (
	"errors"
	"strings"
	"testing"
)

func checkOneLine(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if msg == "" || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one non-empty line: %q", msg)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a *config.Error: %q", msg)
	}
	if ce.Key != "" && !strings.HasPrefix(msg, oneLine(ce.Key)+": ") {
		t.Fatalf("error does not start with its key %q: %q", ce.Key, msg)
	}
	if ce.Key == "" && !strings.HasPrefix(msg, "yaml: line ") && !strings.HasPrefix(msg, "config: ") && !strings.HasPrefix(msg, "--set ") {
		t.Fatalf("error names neither a key nor a line: %q", msg)
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range badInputs {
		f.Add([]byte(tc.in))
	}
	for _, s := range []string{
		"", "network: {ports: 32}", "link: &l {delay_ns: 30}\nswitch: {<<: *l}\n",
		"network: {topology: torus, dims: [64, 32, 32]}", "run: {max_cycles: 5e6}",
		"name: \"a\\nb\"\nseed: -1\n", "network: {dims: &a [*a]}", "a: &a [*a, *a]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			checkOneLine(t, err)
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse returned a config that does not validate: %v", err)
		}
		_ = c.Timing()
		// Every key round-trips through Get/Set onto the defaults.
		d := Default()
		for _, k := range Keys() {
			v, err := c.Get(k.Key)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Set(k.Key + "=" + v); err != nil {
				t.Fatalf("Set(%s=%q): %v", k.Key, v, err)
			}
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("round-tripped config does not validate: %v", err)
		}
		for _, k := range Keys() {
			a, _ := c.Get(k.Key)
			b, _ := d.Get(k.Key)
			if a != b {
				t.Fatalf("%s: %q became %q", k.Key, a, b)
			}
		}
	})
}

func FuzzSet(f *testing.F) {
	for _, s := range []string{"network.ports=32", "network.dims=[4,4,4]", "network.dims=4x4", "link.gbps=2.5", "name=x=y", "=", "network", "network.ports.x=1", "seed=0x10", "network.dims=[[1]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Default()
		if err := c.Set(s); err != nil {
			checkOneLine(t, err)
			if d := Default(); !equalConfigs(c, d) {
				t.Fatalf("failed Set(%q) changed the config", s)
			}
		}
		_ = c.Validate()
	})
}

func equalConfigs(a, b Config) bool {
	for _, k := range Keys() {
		x, _ := a.Get(k.Key)
		y, _ := b.Get(k.Key)
		if x != y {
			return false
		}
	}
	return a.Network.inputsSet == b.Network.inputsSet
}
