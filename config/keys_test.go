package config

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// yamlLeaves lists the dotted yaml paths of every leaf field of t, in field
// order, independently of the package's own reflection.
func yamlLeaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		key := strings.Split(tag, ",")[0]
		if prefix != "" {
			key = prefix + "." + key
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, yamlLeaves(f.Type, key)...)
		} else {
			out = append(out, key)
		}
	}
	return out
}

func TestKeysCoverEveryField(t *testing.T) {
	var keys []string
	for _, k := range Keys() {
		keys = append(keys, k.Key)
	}
	// Same keys, same order: a new field without a table entry fails here,
	// and the reference lists keys in the order of the struct (docs/architecture.md §8).
	require.Equal(t, yamlLeaves(reflect.TypeOf(Config{}), ""), keys)
	require.Len(t, keys, 84)
}

func TestKeysAreComplete(t *testing.T) {
	for _, k := range Keys() {
		require.NotEmpty(t, k.Type, k.Key)
		require.NotEmpty(t, k.Default, k.Key)
		require.NotEmpty(t, k.Allowed, k.Key)
		require.NotEmpty(t, k.Doc, k.Key)
		for _, s := range []string{k.Key, k.Type, k.Default, k.Allowed, k.Doc} {
			require.NotContains(t, s, "\n", k.Key)
		}
	}
}

func TestKeysDefaultsRoundTrip(t *testing.T) {
	for _, k := range Keys() {
		c := Default()
		got, err := c.Get(k.Key)
		require.NoError(t, err)
		require.Equal(t, k.Default, got, k.Key)

		require.NoError(t, c.Set(k.Key+"="+k.Default), k.Key)
		got, err = c.Get(k.Key)
		require.NoError(t, err)
		require.Equal(t, k.Default, got, k.Key)
		c.Network.inputsSet = false
		require.Equal(t, Default(), c, k.Key)

		// and through YAML
		c, err = Parse([]byte(yamlFor(k.Key, k.Default)))
		require.NoError(t, err, k.Key)
		c.Network.inputsSet = false
		require.Equal(t, Default(), c, k.Key)
	}
}

func TestKeysSpotValues(t *testing.T) {
	byKey := map[string]KeyInfo{}
	for _, k := range Keys() {
		byKey[k.Key] = k
	}
	for key, want := range map[string][2]string{
		"network.ports":        {"8", "2..256"},
		"network.inputs":       {"8", "1..network.ports"},
		"network.organization": {"oq-xp", "oq-xp | iq-fifo | voq"},
		"network.dims":         {"[8,8]", "1..3 entries, each 2..1024 (1 too for a mesh under traffic.pattern dsm), at most 1048576 nodes; exactly 2 entries for ibmesh"},
		"network.vls":          {"1", "1 | 2 | 4"},
		"clock_mhz":            {"250", "(0, 10000]"},
		"link.gbps":            {"10", "(0, 10000]"},
		"link.delay_ns":        {"20", "0..1000000000"},
		"switch.delay_ns":      {"90", "0..1000000000"},
		"packet.bytes":         {"256", "8..65536"},
		"nic.send_overhead_ns": {"1300", "0..1000000000"},
		"traffic.load":         {"0.5", "(0, 1]"},
		"run.max_cycles":       {"5000000", "run.warmup_cycles+run.measure_cycles..10000000000000"},
	} {
		require.Equal(t, want[0], byKey[key].Default, key)
		require.Equal(t, want[1], byKey[key].Allowed, key)
	}
	require.Contains(t, byKey["network.inputs"].Doc, "follows network.ports")
}

func TestReference(t *testing.T) {
	ref := Reference()
	lines := strings.Split(strings.TrimSuffix(ref, "\n"), "\n")
	require.Len(t, lines, 2+len(Keys()))
	for i, k := range Keys() {
		require.True(t, strings.HasPrefix(lines[2+i], "| `"+k.Key+"` |"), lines[2+i])
		require.Equal(t, 6, strings.Count(strings.ReplaceAll(lines[2+i], `\|`, ""), "|"), lines[2+i])
	}
}

// Integer ranges: every value inside is accepted by Set and round-trips
// through Get; every value outside is rejected naming the key.
func TestIntRangesProperty(t *testing.T) {
	ranges := map[string][2]int64{
		"network.ports":             {2, 256},
		"network.xp_buffer_packets": {1, 1024},
		"network.combine_units":     {1, 64},
		"network.nodes":             {2, 1 << 20},
		"packet.bytes":              {8, 65536},
		"traffic.fanout":            {1, 1 << 20},
		"traffic.message_bytes":     {1, 1 << 30},
		"run.warmup_cycles":         {0, 1e12},
		"run.measure_cycles":        {1, 1e12},
	}
	rapid.Check(t, func(rt *rapid.T) {
		key := rapid.SampledFrom([]string{"network.ports", "network.xp_buffer_packets", "network.combine_units", "network.nodes", "packet.bytes", "traffic.fanout", "traffic.message_bytes", "run.warmup_cycles", "run.measure_cycles"}).Draw(rt, "key")
		r := ranges[key]
		v := rapid.Int64Range(r[0]-1000, r[1]+1000).Draw(rt, "v")
		c := Default()
		err := c.Set(key + "=" + itoa(v))
		if v < r[0] || v > r[1] {
			requireKeyError(rt, err, key, "is out of range; allowed")
			return
		}
		require.NoError(rt, err)
		got, _ := c.Get(key)
		require.Equal(rt, itoa(v), got)
	})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
