package rtl_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

type box struct {
	rtl.Module
	A   rtl.Out[uint16]
	B   rtl.Out[bool]
	In  rtl.In[uint16]
	Tx  rtl.LineOut[int]
	Rx  rtl.LineIn[int]
	Reg rtl.Reg[uint8]
}

func (b *box) Eval() {}

func newBox(parent *rtl.Module, name string, opts ...rtl.Opt) *box {
	b := &box{}
	b.Init(parent, name, b)
	b.A.Init(&b.Module, "a", opts...)
	b.B.Init(&b.Module, "b")
	b.In.Init(&b.Module, "in")
	b.Tx.Init(&b.Module, "tx")
	b.Rx.Init(&b.Module, "rx")
	b.Reg.Init(&b.Module, "r")
	return b
}

// initRest declares and closes b's B, Tx, Rx and Reg, for a box whose A
// and In a test declares itself.
func initRest(b *box) {
	b.B.Init(&b.Module, "b").TieOff()
	b.Tx.Init(&b.Module, "tx")
	b.Rx.Init(&b.Module, "rx")
	rtl.ConnectLine(&b.Tx, &b.Rx, 1)
	b.Reg.Init(&b.Module, "r")
}

// wire closes every port of b except the ones a test leaves open on purpose.
func wire(b *box) {
	b.A.TieOff()
	b.B.TieOff()
	b.In.Tie(0)
	rtl.ConnectLine(&b.Tx, &b.Rx, 1)
}

func elabProblems(t *testing.T, s *rtl.Sim) []rtl.Problem {
	t.Helper()
	err := s.Build()
	require.Error(t, err)
	var ee *rtl.ElabError
	require.True(t, errors.As(err, &ee))
	require.NotContains(t, err.Error(), "\n", "one line")
	return ee.Problems
}

func TestElaborationErrors(t *testing.T) {
	t.Run("clean netlist builds", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		wire(newBox(s.Top(), "x"))
		require.NoError(t, s.Build())
	})
	t.Run("undriven input", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		b := newBox(s.Top(), "sw3")
		b.A.TieOff()
		b.B.TieOff()
		rtl.ConnectLine(&b.Tx, &b.Rx, 1)
		p := elabProblems(t, s)
		require.Len(t, p, 1)
		require.Equal(t, "top.sw3.in", p[0].Path)
		require.Contains(t, p[0].Msg, "not driven")
		require.Contains(t, p[0].Where, "rtl/elab_test.go:")
	})
	t.Run("two drivers", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		x, y := newBox(s.Top(), "x"), newBox(s.Top(), "y")
		wire(y)
		x.B.TieOff()
		rtl.ConnectLine(&x.Tx, &x.Rx, 1)
		rtl.Connect(&x.A, &x.In)
		rtl.Connect(&y.A, &x.In)
		p := elabProblems(t, s)
		require.Len(t, p, 1)
		require.Equal(t, "top.x.in", p[0].Path)
		require.Contains(t, p[0].Msg, "2 drivers")
		require.Contains(t, p[0].Msg, "top.x.a")
		require.Contains(t, p[0].Msg, "top.y.a")
	})
	t.Run("dangling output", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		b := newBox(s.Top(), "x")
		b.In.Tie(0)
		b.B.TieOff()
		rtl.ConnectLine(&b.Tx, &b.Rx, 1)
		p := elabProblems(t, s)
		require.Len(t, p, 1)
		require.Equal(t, "top.x.a", p[0].Path)
		require.Contains(t, p[0].Msg, "drives nothing")
	})
	t.Run("type mismatch", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		b := newBox(s.Top(), "x")
		b.A.TieOff()
		rtl.ConnectLine(&b.Tx, &b.Rx, 1)
		rtl.ConnectAny(&b.B, &b.In)
		p := elabProblems(t, s)
		require.Len(t, p, 2) // the mismatch, and b.b left driving nothing
		require.Equal(t, "top.x.in", p[1].Path)
		require.Contains(t, p[1].Msg, "type mismatch: top.x.b carries bool, top.x.in takes uint16")
	})
	t.Run("width mismatch", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		x := newBox(s.Top(), "x", rtl.Width(10))
		y := &box{}
		y.Init(s.Top(), "y", y)
		y.In.Init(&y.Module, "in", rtl.Width(12))
		y.A.Init(&y.Module, "a").TieOff()
		initRest(y)
		x.B.TieOff()
		x.In.Tie(1)
		rtl.ConnectLine(&x.Tx, &x.Rx, 1)
		rtl.Connect(&x.A, &y.In)
		p := elabProblems(t, s)
		require.Len(t, p, 1)
		require.Contains(t, p[0].Msg, "width mismatch: top.x.a is 10 bits, top.y.in is 12 bits")
	})
	t.Run("duplicate names", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		wire(newBox(s.Top(), "sw"))
		wire(newBox(s.Top(), "sw"))
		p := elabProblems(t, s)
		require.Len(t, p, 1)
		require.Equal(t, "top.sw", p[0].Path)
		require.Contains(t, p[0].Msg, "duplicate name, first declared at rtl/elab_test.go:")
	})
	t.Run("invalid name", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		wire(newBox(s.Top(), "a.b"))
		p := elabProblems(t, s)
		require.Len(t, p, 1)
		require.Contains(t, p[0].Msg, `invalid name "a.b"`)
	})
	t.Run("line problems", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		x, y := newBox(s.Top(), "x"), newBox(s.Top(), "y")
		x.A.TieOff()
		x.B.TieOff()
		x.In.Tie(0)
		y.A.TieOff()
		y.B.TieOff()
		y.In.Tie(0)
		rtl.ConnectLine(&x.Tx, &x.Rx, 0) // zero latency
		p := elabProblems(t, s)
		require.Len(t, p, 3)
		require.Contains(t, p[0].Msg, "latency 0")
		require.Equal(t, "top.y.tx", p[1].Path)
		require.Contains(t, p[1].Msg, "line sender is not connected")
		require.Equal(t, "top.y.rx", p[2].Path)
		require.Contains(t, p[2].Msg, "line receiver is not connected")
	})
	t.Run("line latency over 32 bits, a receiver connected twice", func(t *testing.T) {
		s := rtl.NewSim(rtl.Options{})
		x, y := newBox(s.Top(), "x"), newBox(s.Top(), "y")
		for _, b := range []*box{x, y} {
			b.A.TieOff()
			b.B.TieOff()
			b.In.Tie(0)
		}
		rtl.ConnectLine(&x.Tx, &x.Rx, 1<<32)
		rtl.ConnectLine(&y.Tx, &x.Rx, 1) // x.rx again; y.rx left alone
		p := elabProblems(t, s)
		require.Len(t, p, 3)
		require.Equal(t, "top.x.tx", p[0].Path)
		require.Contains(t, p[0].Msg, "line top.x.tx -> top.x.rx has latency 4294967296; a delay line has at most 4294967295 cycles")
		require.Equal(t, "top.y.tx", p[1].Path)
		require.Contains(t, p[1].Msg, "line receiver top.x.rx is connected twice")
		require.Equal(t, "top.y.rx", p[2].Path)
		require.Contains(t, p[2].Msg, "line receiver is not connected")
	})
}

// A problem names the line that declared the signal, for the first module
// of a class (found on the stack) and for the later ones alike (taken from
// the class: the same code declares the same signal); a signal of the same
// name declared elsewhere with other options names its own line.
func TestProblemsNameTheDeclaringLine(t *testing.T) {
	lineOf := func(text string) string { return lineIn(t, text) }
	s := rtl.NewSim(rtl.Options{})
	x, y := newBox(s.Top(), "x"), newBox(s.Top(), "y")
	for _, b := range []*box{x, y} {
		b.A.TieOff()
		b.B.TieOff()
		rtl.ConnectLine(&b.Tx, &b.Rx, 1)
	}
	z := &box{}
	z.Init(s.Top(), "z", z)
	z.A.Init(&z.Module, "a", rtl.Width(3)) // the other declaration of a, left driving nothing
	z.In.Init(&z.Module, "in").Tie(0)
	initRest(z)
	p := elabProblems(t, s)
	require.Len(t, p, 3)
	want := lineOf(`b.In.Init(&b.Module, "in")`)
	for i, path := range []string{"top.x.in", "top.y.in"} {
		require.Equal(t, path, p[i].Path)
		require.Equal(t, want, p[i].Where)
	}
	require.Equal(t, "top.z.a", p[2].Path)
	require.Equal(t, lineOf("// the other declaration of a"), p[2].Where)
}

type leaf struct{ rtl.Module }

type pair struct {
	rtl.Module
	x, y leaf
}

func newPair(parent *rtl.Module, name string) *pair {
	p := &pair{}
	p.Init(parent, name, p)
	p.x.Init(&p.Module, "c", &p.x) // the first c
	p.y.Init(&p.Module, "c", &p.y)
	rtl.NewArray(&p.Module, "bad.array", 2) // an invalid name
	return p
}

// Children and arrays name their lines too, for the first module of a
// class and the later ones (which take them from the class).
func TestChildAndArrayProblemsNameTheirLines(t *testing.T) {
	lineOf := func(text string) string { return lineIn(t, text) }
	s := rtl.NewSim(rtl.Options{})
	newPair(s.Top(), "p")
	newPair(s.Top(), "q")
	p := elabProblems(t, s)
	require.Len(t, p, 6) // per pair: the duplicate c, and two invalid array elements
	for i, name := range []string{"p", "q"} {
		dup, bad := p[3*i], p[3*i+1]
		require.Equal(t, "top."+name+".c", dup.Path)
		require.Contains(t, dup.Msg, "duplicate name, first declared at "+lineOf("// the first c"))
		require.Equal(t, "top."+name+".bad.array(0)", bad.Path)
		require.Equal(t, lineOf("// an invalid name"), bad.Where)
	}
}

// lineIn is "rtl/elab_test.go:N" for the first line of this file that
// holds text, as an elaboration problem names a declaration's site.
func lineIn(t *testing.T, text string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, text) {
			return fmt.Sprintf("rtl/elab_test.go:%d", i+1)
		}
	}
	t.Fatalf("%q not in %s", text, file)
	return ""
}
