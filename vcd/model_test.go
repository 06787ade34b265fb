package vcd

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// scenario is a sequence of writer calls plus a functional model of the
// value history each variable must have in the output.
type scenario struct {
	vars   []varSpec
	clocks []uint64 // periods; clock k is named "clk<k>" at top level
	inits  []value  // per var; set before Begin
	ops    []op
	tail   uint64 // Close(now + tail)
}

type varSpec struct {
	kind  Kind
	width int
	scope int // 0: top level, else inside "s<scope>"
}

type value struct {
	bits uint64
	f    float64
	s    string
}

type op struct {
	advance uint64 // At(now + advance) when set is false
	set     bool
	id      int
	val     value
}

type tv struct {
	Time  uint64
	Value string
}

func (v varSpec) mask() uint64 { return math.MaxUint64 >> (64 - v.width) }

func format(k Kind, v value) string {
	switch k {
	case Real:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case String:
		return EscapeString(v.s)
	}
	return strconv.FormatUint(v.bits, 2)
}

func same(k Kind, a, b value) bool {
	switch k {
	case Real:
		return math.Float64bits(a.f) == math.Float64bits(b.f)
	case String:
		return a.s == b.s
	}
	return a.bits == b.bits
}

// play runs sc through a Writer and returns the output and, by full name,
// the histories the model predicts.
func (sc scenario) play(t require.TestingT) ([]byte, map[string][]tv) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{Timescale: "1ns", Version: "hwcoll test"})
	require.NoError(t, err)
	var clkIDs []ID
	for k, p := range sc.clocks {
		clkIDs = append(clkIDs, w.Clock(fmt.Sprintf("clk%d", k), p))
	}
	ids := make([]ID, len(sc.vars))
	names := make([]string, len(sc.vars))
	for s := 0; s <= 3; s++ {
		if s > 0 {
			w.Scope(fmt.Sprintf("s%d", s))
		}
		for i, v := range sc.vars {
			if v.scope == s {
				ids[i] = w.Var(v.kind, v.width, fmt.Sprintf("v%d", i))
				names[i] = w.Name(ids[i])
			}
		}
		if s > 0 {
			w.Upscope()
		}
	}
	last := make([]value, len(sc.vars))
	model := map[string][]tv{}
	apply := func(i int, v value) {
		switch sc.vars[i].kind {
		case Real:
			w.SetReal(ids[i], v.f)
		case String:
			w.SetString(ids[i], v.s)
		default:
			w.SetBits(ids[i], v.bits)
		}
	}
	for i, v := range sc.inits {
		v.bits &= sc.vars[i].mask()
		apply(i, v)
		last[i] = v
	}
	require.NoError(t, w.Begin())
	for i, v := range sc.vars {
		model[names[i]] = []tv{{0, format(v.kind, last[i])}}
	}
	var now uint64
	for _, o := range sc.ops {
		if !o.set {
			now += o.advance
			w.At(now)
			continue
		}
		spec := sc.vars[o.id]
		v := o.val
		v.bits &= spec.mask()
		apply(o.id, v)
		if !same(spec.kind, v, last[o.id]) {
			last[o.id] = v
			model[names[o.id]] = append(model[names[o.id]], tv{now, format(spec.kind, v)})
		}
	}
	end := now + sc.tail
	require.NoError(t, w.Close(end))
	for k, p := range sc.clocks {
		h := []tv{{0, "1"}}
		for e, val := p/2, "0"; e <= end; e += p / 2 {
			h = append(h, tv{e, val})
			if val == "0" {
				val = "1"
			} else {
				val = "0"
			}
		}
		model[w.Name(clkIDs[k])] = h
	}
	return buf.Bytes(), model
}

func histories(f *File, name string) []tv {
	var out []tv
	for _, c := range f.History(name) {
		out = append(out, tv{c.Time, c.Value})
	}
	return out
}

// Generators: rapid for properties, math/rand for the external round trip
// (which spawns processes, so it runs a fixed small number of cases).

var (
	realPool = []float64{0, math.Copysign(0, -1), 1, 1.5, -2.25, 0.1 + 0.2, 1.0 / 3, 1e300, -1e-300, 5e-324, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 123456789.125}
	strPool  = []string{"", "a", "idle", "busy wait", "x\ty\nz", "q?\"'\\", "\x00\x01\xff", "ünïcode", "$end", "#5", "b0 !"}
)

func rapidScenario(t *rapid.T) scenario {
	var sc scenario
	nv := rapid.IntRange(1, 7).Draw(t, "nvars")
	for i := 0; i < nv; i++ {
		k := Kind(rapid.IntRange(int(Wire), int(String)).Draw(t, "kind"))
		w := 1
		switch k {
		case Vector:
			w = rapid.IntRange(2, 64).Draw(t, "vwidth")
		case Integer:
			w = rapid.SampledFrom([]int{1, 8, 32, 64}).Draw(t, "iwidth")
		case Real:
			w = 64
		}
		sc.vars = append(sc.vars, varSpec{k, w, rapid.IntRange(0, 3).Draw(t, "scope")})
	}
	sc.clocks = rapid.SliceOfN(rapid.SampledFrom([]uint64{2, 4, 6, 10}), 0, 2).Draw(t, "clocks")
	drawVal := func(label string) value {
		return value{
			bits: rapid.OneOf(rapid.Uint64Range(0, 3), rapid.Uint64()).Draw(t, label+"bits"),
			f:    rapid.OneOf(rapid.SampledFrom(realPool), rapid.Float64()).Draw(t, label+"f"),
			s:    rapid.OneOf(rapid.SampledFrom(strPool), rapid.String()).Draw(t, label+"s"),
		}
	}
	for range sc.vars {
		sc.inits = append(sc.inits, drawVal("init"))
	}
	n := rapid.IntRange(0, 80).Draw(t, "nops")
	for i := 0; i < n; i++ {
		if rapid.IntRange(0, 3).Draw(t, "isAdvance") == 0 {
			sc.ops = append(sc.ops, op{advance: rapid.Uint64Range(0, 7).Draw(t, "advance")})
		} else {
			sc.ops = append(sc.ops, op{set: true, id: rapid.IntRange(0, nv-1).Draw(t, "id"), val: drawVal("val")})
		}
	}
	sc.tail = rapid.Uint64Range(0, 9).Draw(t, "tail")
	return sc
}

func randScenario(r *rand.Rand) scenario {
	var sc scenario
	nv := 1 + r.IntN(12)
	for i := 0; i < nv; i++ {
		k := Kind(r.IntN(int(String) + 1))
		w := 1
		switch k {
		case Vector:
			w = 2 + r.IntN(63)
		case Integer:
			w = []int{1, 8, 32, 64}[r.IntN(4)]
		case Real:
			w = 64
		}
		sc.vars = append(sc.vars, varSpec{k, w, r.IntN(4)})
	}
	sc.clocks = []uint64{2, 10}[:r.IntN(3)]
	drawVal := func() value {
		v := value{bits: r.Uint64() >> r.IntN(64), f: realPool[r.IntN(len(realPool))], s: strPool[r.IntN(len(strPool))]}
		if r.IntN(2) == 0 {
			v.f = math.Float64frombits(r.Uint64())
		}
		if r.IntN(4) == 0 {
			b := make([]byte, r.IntN(12))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			v.s = string(b)
		}
		return v
	}
	for range sc.vars {
		sc.inits = append(sc.inits, drawVal())
	}
	for i := r.IntN(400); i > 0; i-- {
		if r.IntN(4) == 0 {
			sc.ops = append(sc.ops, op{advance: uint64(r.IntN(8))})
		} else {
			sc.ops = append(sc.ops, op{set: true, id: r.IntN(nv), val: drawVal()})
		}
	}
	sc.tail = uint64(r.IntN(10))
	return sc
}
