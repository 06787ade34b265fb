package rtl_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// gadget has a field of every kind Init declares.
type gadget struct {
	rtl.Module
	In    rtl.In[uint16]
	Out   rtl.Out[uint16]
	R     rtl.Reg[uint8]
	P     rtl.Probe[bool]
	Tx    rtl.LineOut[int]
	Rx    rtl.LineIn[int]
	Call  rtl.CallOut[int, *gadget]
	Take  rtl.CallIn[int]
	Back  rtl.CallIn[int] // a second receiver, for a Call without Take
	Ins   [3]rtl.In[bool]
	Lanes []lane
	Sub   leaf
	Arr   rtl.Array
	Vcs   rtl.Array
	Occ   rtl.ProbeArray[uint8] // on Vcs
	Spare rtl.Out[bool]         `rtl:"optional"` // never declared
	plain struct{ n int }
}

type lane struct {
	id int
	Q  rtl.Reg[uint16]
}

func (g *gadget) Eval()        {}
func (g *gadget) Accept(v int) {}

// newGadget declares every field of a gadget but skip (a field's Go
// name, with its index for an element: "Ins[1]", "Lanes[0].Q"), and
// closes what it declares.
func newGadget(parent *rtl.Module, name, skip string) *gadget {
	g := &gadget{Lanes: make([]lane, 2)}
	g.Init(parent, name, g) // the gadget's line
	g.Together()
	do := func(field string, f func()) {
		if field != skip {
			f()
		}
	}
	do("In", func() { g.In.Init(&g.Module, "in").Tie(0) })
	do("Out", func() { g.Out.Init(&g.Module, "out").TieOff() })
	do("R", func() { g.R.Init(&g.Module, "r") })
	do("P", func() { g.P.Init(&g.Module, "p") })
	do("Tx", func() { g.Tx.Init(&g.Module, "tx") })
	do("Rx", func() { g.Rx.Init(&g.Module, "rx") })
	rtl.ConnectLine(&g.Tx, &g.Rx, 1)
	do("Call", func() { g.Call.Init(&g.Module, "call", func(v int) uint32 { return uint32(v) }) })
	do("Take", func() { g.Take.Init(&g.Module, "take") })
	g.Back.Init(&g.Module, "back")
	switch skip {
	case "Call":
		g.Take.TieOff()
		g.Back.TieOff()
	case "Take":
		rtl.ConnectCalls([]*rtl.CallOut[int, *gadget]{&g.Call}, []*rtl.CallIn[int]{&g.Back}, []*gadget{g})
	default:
		rtl.ConnectCalls([]*rtl.CallOut[int, *gadget]{&g.Call}, []*rtl.CallIn[int]{&g.Take, &g.Back}, []*gadget{g, g})
	}
	for i := range g.Ins {
		do(fmt.Sprintf("Ins[%d]", i), func() { g.Ins[i].Init(&g.Module, rtl.Idx("ins", i)).Tie(false) })
	}
	for i := range g.Lanes {
		do(fmt.Sprintf("Lanes[%d].Q", i), func() { g.Lanes[i].Q.Init(&g.Module, rtl.Idx("q", i)) })
	}
	do("Sub", func() { g.Sub.Init(&g.Module, "sub", &g.Sub) })
	do("Arr", func() { g.Arr.Init(&g.Module, "arr", 2) })
	g.Vcs.Init(&g.Module, "vc", 2)
	do("Occ", func() { g.Occ.Init(&g.Vcs, "occ") })
	return g
}

// A field of a component that its constructor never Init'ed is refused
// at Build, in one line naming the component's path and the line that
// declared it, the field, its type and the call to add.
func TestBuildRefusesAFieldNeverInited(t *testing.T) {
	t.Run("every field declared", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		newGadget(s.Top(), "g", "")
		require.NoError(t, s.Build())
	})
	site := fieldsLine(t, "// the gadget's line")
	for _, c := range []struct{ skip, typ, init string }{
		{"In", "rtl.In[uint16]", `g.In.Init(&g.Module, "in")`},
		{"Out", "rtl.Out[uint16]", `g.Out.Init(&g.Module, "out")`},
		{"R", "rtl.Reg[uint8]", `g.R.Init(&g.Module, "r")`},
		{"P", "rtl.Probe[bool]", `g.P.Init(&g.Module, "p")`},
		{"Tx", "rtl.LineOut[int]", `g.Tx.Init(&g.Module, "tx")`},
		{"Rx", "rtl.LineIn[int]", `g.Rx.Init(&g.Module, "rx")`},
		{"Call", "rtl.CallOut[int,*rtl_test.gadget]", `g.Call.Init(&g.Module, "call", show)`},
		{"Take", "rtl.CallIn[int]", `g.Take.Init(&g.Module, "take")`},
		{"Ins[1]", "rtl.In[bool]", `g.Ins[1].Init(&g.Module, "ins(1)")`},
		{"Lanes[1].Q", "rtl.Reg[uint16]", `g.Lanes[1].Q.Init(&g.Module, "q")`},
		{"Sub", "rtl_test.leaf", `g.Sub.Init(&g.Module, "sub", &g.Sub)`},
		{"Arr", "rtl.Array", `g.Arr.Init(&g.Module, "arr", n)`},
		{"Occ", "rtl.ProbeArray[uint8]", `g.Occ.Init(&<its Array>, "occ")`},
	} {
		t.Run(c.skip, func(t *testing.T) {
			s := rtl.NewSim(rtl.Options{})
			newGadget(s.Top(), "g", c.skip)
			p := elabProblems(t, s)
			require.Len(t, p, 1)
			require.Equal(t, "top.g", p[0].Path)
			require.Equal(t, site, p[0].Where)
			require.Equal(t, "field "+c.skip+" ("+c.typ+") of rtl_test.gadget is never Init'ed: call "+c.init+
				" in its constructor, or tag the field `rtl:\"optional\"` if it is left unused on purpose", p[0].Msg)
		})
	}
}

// A field left out by every module of a type, and by several elements,
// is one problem, the first, which counts the others.
func TestAFieldNeverInitedIsReportedOnce(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	for i := range 3 {
		g := newGadget(s.Top(), rtl.Idx("g", i), "R")
		if i == 1 {
			g.Lanes = append(g.Lanes, lane{}) // a third lane, never declared
		}
	}
	p := elabProblems(t, s)
	require.Len(t, p, 2)
	require.Equal(t, "top.g(0)", p[0].Path)
	require.Contains(t, p[0].Msg, "field R (rtl.Reg[uint8])")
	require.True(t, strings.HasSuffix(p[0].Msg, "; and 2 more like it (elements, or modules of this type)"), p[0].Msg)
	require.Equal(t, "top.g(1)", p[1].Path)
	require.Contains(t, p[1].Msg, "field Lanes[2].Q (rtl.Reg[uint16])")
	require.NotContains(t, p[1].Msg, "more like it")
}

// The component's own Module, plain data, pointers and fields tagged
// optional are not looked at; a sub-block's fields are, as a component of
// its own, once it is Init'ed.
func TestFieldsNotChecked(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	g := newGadget(s.Top(), "g", "")
	require.NoError(t, s.Build())
	require.Equal(t, "top.g", g.Path())

	s = rtl.NewSim(rtl.Options{})
	h := &holder{}
	h.Init(s.Top(), "h", h)
	h.sub.Init(&h.Module, "sub", &h.sub)
	h.sub.in.Init(&h.sub.Module, "in").Tie(1)
	p := elabProblems(t, s)
	require.Len(t, p, 1)
	require.Equal(t, "top.h.sub", p[0].Path)
	require.Contains(t, p[0].Msg, "field out (rtl.Out[uint8]) of rtl_test.part is never Init'ed: call p.out.Init(&p.Module, \"out\")")
}

type part struct {
	rtl.Module
	in  rtl.In[uint8]
	out rtl.Out[uint8]
}

type holder struct {
	rtl.Module
	sub   part
	apart *rtl.Out[uint8] // not its own: not looked at
}

// A tag other than optional is a mistake in the type, which Build
// refuses at once.
func TestUnknownTagPanics(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	b := &badTag{}
	b.Init(s.Top(), "b", b)
	require.PanicsWithValue(t, `rtl: field x of rtl_test.badTag is tagged rtl:"optinal"; the tag there is rtl:"optional"`,
		func() { _ = s.Build() })
}

type badTag struct {
	rtl.Module
	x rtl.Reg[bool] `rtl:"optinal"`
}

// fieldsLine is "rtl/fields_test.go:N" for the first line of this file
// that holds text.
func fieldsLine(t *testing.T, text string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, text) {
			return fmt.Sprintf("rtl/fields_test.go:%d", i+1)
		}
	}
	t.Fatalf("%q not in %s", text, file)
	return ""
}
