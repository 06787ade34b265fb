package scenario

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

func switchConfig(t *testing.T, sets ...string) config.Config {
	cfg := config.Default()
	for _, s := range sets {
		require.NoError(t, cfg.Set(s))
	}
	require.NoError(t, cfg.Validate())
	return cfg
}

// traceRun traces n while f runs it.
func traceRun(t *testing.T, n *experiment.SwitchNet, f func()) []byte {
	var buf bytes.Buffer
	require.NoError(t, n.Trace(&buf, ""))
	f()
	require.NoError(t, n.Sim.EndTrace())
	return buf.Bytes()
}

// NewSwitchNet is BuildSwitch without Build: the same netlist, so the same
// result and a byte-identical waveform.
func TestNewSwitchNetMatchesBuildSwitch(t *testing.T) {
	for _, sets := range [][]string{
		{"network.ports=5", "traffic.load=0.9", "run.warmup_cycles=300", "run.measure_cycles=2000"},
		{"network.ports=7", "network.inputs=3", "traffic.pattern=multicast", "traffic.fanout=3", "traffic.process=poisson",
			"network.xp_buffer_packets=1", "packet.bytes=100", "link.delay_ns=33", "run.warmup_cycles=0", "run.measure_cycles=2000"},
	} {
		cfg := switchConfig(t, sets...)
		a, err := experiment.Build(experiment.Switch, cfg)
		require.NoError(t, err)
		b, err := NewSwitchNet(cfg)
		require.NoError(t, err)
		require.NoError(t, b.Sim.Build())
		var ra, rb experiment.Result
		va := traceRun(t, a, func() { ra = a.Run() })
		vb := traceRun(t, b, func() { rb = b.Run() })
		require.Equal(t, string(va), string(vb), "%v", sets)
		ra.WallSeconds, ra.SimCyclesPerSecond, ra.FlitHopsPerS = 0, 0, 0
		rb.WallSeconds, rb.SimCyclesPerSecond, rb.FlitHopsPerS = 0, 0, 0
		require.Equal(t, ra, rb)
		require.Positive(t, ra.PacketsDelivered)
	}
}

// signalValues returns the distinct values a signal took (binary strings).
func signalValues(t *testing.T, f *vcd.File, name string) map[string]bool {
	t.Helper()
	h := f.History(name)
	require.NotEmpty(t, h, "no signal %s in the trace", name)
	vals := map[string]bool{}
	for _, c := range h {
		vals[c.Value] = true
	}
	return vals
}

func num(t *testing.T, v string) uint64 {
	x, err := strconv.ParseUint(v, 2, 64)
	require.NoError(t, err, v)
	return x
}

func traceSwitchScenario(t *testing.T, name string) *vcd.File {
	s, ok := Lookup(name)
	require.True(t, ok)
	raw, rep := traceScenario(t, s, 7, nil)
	require.Positive(t, rep.PacketsDelivered)
	f, err := vcd.Parse(bytes.NewReader(raw))
	require.NoError(t, err)
	return f
}

// The switch scenarios' waveforms show what they are for.
func TestSwitchScenarioWaveforms(t *testing.T) {
	t.Run("switch-unicast", func(t *testing.T) {
		f := traceSwitchScenario(t, "switch-unicast")
		for o := 0; o < 4; o++ {
			p := fmt.Sprintf("top.sw.out(%d).", o)
			require.GreaterOrEqual(t, len(signalValues(t, f, p+"grant")), 3, "output %d serves several inputs", o)
			require.Len(t, signalValues(t, f, p+"tx.valid"), 2)
			require.Greater(t, len(signalValues(t, f, p+"tx.pkt")), 10)
			require.Greater(t, len(signalValues(t, f, fmt.Sprintf("top.dst(%d).rx.pkt", o))), 10)
			require.Greater(t, len(signalValues(t, f, fmt.Sprintf("top.sw.in(%d).rx.pkt", o))), 10)
			require.NotEmpty(t, f.History(p+"rr_ptr"))
			require.NotEmpty(t, f.History(p+"credit_stall"))
			require.NotEmpty(t, f.History(p+"tx.credit.avail"))
			require.NotEmpty(t, f.History(p+"xp(1).head_pkt"))
		}
		deep := 0
		for o := 0; o < 4; o++ {
			for i := 0; i < 4; i++ {
				for v := range signalValues(t, f, fmt.Sprintf("top.sw.out(%d).xp(%d).occupancy", o, i)) {
					if num(t, v) == 2 {
						deep++
					}
				}
			}
		}
		require.Positive(t, deep, "some crosspoint fills up (2 packets)")
	})
	t.Run("switch-multicast", func(t *testing.T) {
		f := traceSwitchScenario(t, "switch-multicast")
		seen := map[string]int{} // packet tag → sinks it reached
		for o := 0; o < 6; o++ {
			for v := range signalValues(t, f, fmt.Sprintf("top.dst(%d).rx.pkt", o)) {
				seen[v]++
			}
		}
		multi := 0
		for v, k := range seen {
			if v != "0" && k >= 2 {
				multi++
			}
		}
		require.Greater(t, multi, 20, "multicast copies of one packet show on several sinks")
	})
	t.Run("switch-credit-stall", func(t *testing.T) {
		f := traceSwitchScenario(t, "switch-credit-stall")
		// A source stalls on credits: no credit left while packets wait.
		stalled := 0
		for i := 0; i < 6; i++ {
			avail := fmt.Sprintf("top.src(%d).tx.credit.avail", i)
			for _, c := range f.History(avail) {
				if c.Value != "0" {
					continue
				}
				if q, ok := f.ValueAt(fmt.Sprintf("top.src(%d).queue", i), c.Time); ok && num(t, q) > 0 {
					stalled++
				}
			}
		}
		require.Greater(t, stalled, 10, "sources wait for credits with packets queued")
		full := 0
		for i := 0; i < 6; i++ {
			if signalValues(t, f, fmt.Sprintf("top.sw.out(0).xp(%d).occupancy", i))["1"] {
				full++
			}
		}
		require.GreaterOrEqual(t, full, 5, "the hot output's crosspoints fill")
		require.Len(t, signalValues(t, f, "top.sw.out(0).grant"), 6, "port 0 serves every input in turn")
	})
}

// The .gtkw groups: one per port, every traced signal exactly once.
func TestSwitchGroups(t *testing.T) {
	s, _ := Lookup("switch-unicast")
	h, err := s.Build(Params{Seed: 1})
	require.NoError(t, err)
	require.NoError(t, h.Sim.Build())
	var buf bytes.Buffer
	w, err := h.Sim.NewTraceWriter(&buf)
	require.NoError(t, err)
	require.NoError(t, h.Sim.Trace(w, ""))
	sigs := h.Sim.TracedSignals()
	groups := tb.GroupsFor(h, sigs)
	require.Len(t, groups, 4)
	count := map[string]int{}
	for o, g := range groups {
		require.Equal(t, fmt.Sprintf("port %d", o), g.Name)
		names := map[string]bool{}
		for _, sig := range g.Signals {
			count[sig.Name]++
			names[sig.Name] = true
		}
		for _, want := range []string{"top.src(%d).tx.credit.avail", "top.sw.in(%d).rx.pkt", "top.sw.out(%d).grant",
			"top.sw.out(%d).xp(3).occupancy", "top.sw.out(%d).tx.pkt", "top.dst(%d).rx.pkt"} {
			require.True(t, names[fmt.Sprintf(want, o)], "group %s lacks %s", g.Name, fmt.Sprintf(want, o))
		}
	}
	require.Len(t, count, len(sigs))
	for name, k := range count {
		require.Equal(t, 1, k, name)
	}
}
