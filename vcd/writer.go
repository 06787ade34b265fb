// Package vcd writes and reads Value Change Dump files (IEEE 1364-2005 §18)
// as GTKWave opens them, and writes GTKWave save files (.gtkw).
//
// The writer emits changes only, is deterministic (no $date), and its hot
// path (At, SetBits, SetBool, SetReal) does not allocate.
package vcd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a declared variable.
type Kind uint8

const (
	Wire    Kind = iota // 1-bit "wire", values 0/1
	Vector              // "wire" of width 2..64, written b<binary>
	Integer             // "integer" of the declared width (1..64)
	Real                // "real" 64, written r<value>
	String              // GTKWave extension "string", written s<escaped text>
)

// String returns the VCD $var type keyword of k.
func (k Kind) String() string {
	switch k {
	case Wire, Vector:
		return "wire"
	case Integer:
		return "integer"
	case Real:
		return "real"
	case String:
		return "string"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ID is the index of a declared variable, in declaration order.
type ID int

// Options configures a Writer.
type Options struct {
	Timescale string // 1|10|100 followed by s, ms, us, ns, ps or fs, e.g. "1ns"
	Version   string // $version text; omitted when empty
	Comment   string // $comment text; omitted when empty
}

type variable struct {
	kind  Kind
	width int
	mask  uint64
	clock bool
	code  string
	name  string // full dotted path
	bits  uint64 // last written value (math.Float64bits for Real)
	str   string // last written value for String
}

type clock struct {
	id   ID
	half uint64
	next uint64 // time of the next edge
}

// Writer writes one VCD file. It is not safe for concurrent use.
//
// Misuse (declaring after Begin, moving time backwards, a setter of the wrong
// kind) panics: these are programming errors, not I/O conditions.
type Writer struct {
	bw      *bufio.Writer
	vars    []variable
	clocks  []clock
	scopes  []string
	began   bool
	closed  bool
	now     uint64
	stamped uint64 // time of the last "#t" line
	line    []byte
}

const bufSize = 1 << 20

// NewWriter validates opts and writes the header to w (buffered: nothing
// reaches w before Flush, Close or a full buffer).
func NewWriter(w io.Writer, opts Options) (*Writer, error) {
	ts, err := parseTimescale(opts.Timescale)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ what, s string }{{"Version", opts.Version}, {"Comment", opts.Comment}} {
		if strings.Contains(f.s, "$end") || strings.ContainsAny(f.s, "\r\n") {
			return nil, fmt.Errorf("vcd: Options.%s must be one line without \"$end\": %q", f.what, f.s)
		}
	}
	wr := &Writer{bw: bufio.NewWriterSize(w, bufSize), line: make([]byte, 0, 256)}
	if opts.Version != "" {
		wr.bw.WriteString("$version " + opts.Version + " $end\n")
	}
	if opts.Comment != "" {
		wr.bw.WriteString("$comment " + opts.Comment + " $end\n")
	}
	wr.bw.WriteString("$timescale " + ts + " $end\n")
	return wr, nil
}

// parseTimescale accepts "1ns", "10 us", ... and returns the normalized form.
func parseTimescale(s string) (string, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	okNum := num == "1" || num == "10" || num == "100"
	okUnit := false
	switch unit {
	case "s", "ms", "us", "ns", "ps", "fs":
		okUnit = true
	}
	if !okNum || !okUnit {
		return "", fmt.Errorf("vcd: invalid timescale %q: want 1, 10 or 100 followed by s, ms, us, ns, ps or fs", s)
	}
	return num + unit, nil
}

// SanitizeName maps every byte outside [A-Za-z0-9_()] to '_' (GTKWave treats
// '.', ':', '[' and spaces specially). An empty name becomes "_".
func SanitizeName(name string) string {
	if name == "" {
		return "_"
	}
	b := []byte(name)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '(' || c == ')'
}

// idCode is the short identifier of the n-th variable: bijective base 94
// over '!'..'~', least significant digit first. This is the numbering
// vcd2fst and GTKWave hash to consecutive integers (their fast path).
func idCode(n int) string {
	var buf [8]byte
	i := 0
	for v := uint64(n) + 1; v != 0; v /= 94 {
		v--
		buf[i] = byte('!' + v%94)
		i++
	}
	return string(buf[:i])
}

func (w *Writer) declaring(what string) {
	if w.began {
		panic("vcd: " + what + " after Begin")
	}
}

// Scope opens a module scope named SanitizeName(name) inside the current one.
func (w *Writer) Scope(name string) {
	w.declaring("Scope")
	name = SanitizeName(name)
	w.scopes = append(w.scopes, name)
	w.bw.WriteString("$scope module " + name + " $end\n")
}

// Upscope closes the current scope.
func (w *Writer) Upscope() {
	w.declaring("Upscope")
	if len(w.scopes) == 0 {
		panic("vcd: Upscope without open scope")
	}
	w.scopes = w.scopes[:len(w.scopes)-1]
	w.bw.WriteString("$upscope $end\n")
}

// Var declares a variable in the current scope. width must be 1 (or 0) for
// Wire and 1..64 for Vector and Integer; it is ignored for Real and String.
func (w *Writer) Var(kind Kind, width int, name string) ID {
	w.declaring("Var")
	switch kind {
	case Wire:
		if width != 0 && width != 1 {
			panic(fmt.Sprintf("vcd: Wire %q has width %d, want 1", name, width))
		}
		width = 1
	case Vector, Integer:
		if width < 1 || width > 64 {
			panic(fmt.Sprintf("vcd: %v %q has width %d, want 1..64", kind, name, width))
		}
	case Real:
		width = 64
	case String:
		width = 1
	default:
		panic(fmt.Sprintf("vcd: unknown kind %d", kind))
	}
	name = SanitizeName(name)
	full := name
	if len(w.scopes) > 0 {
		full = strings.Join(w.scopes, ".") + "." + name
	}
	id := ID(len(w.vars))
	v := variable{kind: kind, width: width, mask: math.MaxUint64 >> (64 - width), code: idCode(int(id)), name: full}
	w.vars = append(w.vars, v)
	w.bw.WriteString("$var " + kind.String() + " " + strconv.Itoa(width) + " " + v.code + " " + name + " $end\n")
	return id
}

// Clock declares a 1-bit wire that the writer drives itself: 1 at k*period,
// 0 at k*period+period/2. period must be even and at least 2.
func (w *Writer) Clock(name string, period uint64) ID {
	if period < 2 || period%2 != 0 {
		panic(fmt.Sprintf("vcd: clock %q period %d must be even and >= 2", name, period))
	}
	id := w.Var(Wire, 1, name)
	w.vars[id].clock = true
	w.vars[id].bits = 1
	w.clocks = append(w.clocks, clock{id: id, half: period / 2, next: period / 2})
	return id
}

// Name returns the full dotted name of a declared variable.
func (w *Writer) Name(id ID) string { return w.vars[id].name }

// Signal describes a declared variable for a GTKWave save file.
func (w *Writer) Signal(id ID) Signal {
	v := &w.vars[id]
	return Signal{Name: v.name, Width: v.width, Kind: v.kind}
}

// Begin ends the definitions (closing any open scopes) and dumps every
// variable's initial value at time 0.
func (w *Writer) Begin() error {
	w.declaring("Begin")
	for range w.scopes {
		w.bw.WriteString("$upscope $end\n")
	}
	w.scopes = nil
	w.began = true
	w.bw.WriteString("$enddefinitions $end\n#0\n$dumpvars\n")
	for i := range w.vars {
		w.emit(&w.vars[i])
	}
	w.bw.WriteString("$end\n")
	return w.bw.Flush()
}

func (w *Writer) running(what string) {
	if !w.began || w.closed {
		panic("vcd: " + what + " outside Begin..Close")
	}
}

// At moves the current time to t (t must not be earlier than the current
// time) and emits the clock edges in (previous time, t].
func (w *Writer) At(t uint64) {
	w.running("At")
	if t < w.now {
		panic("vcd: At(" + strconv.FormatUint(t, 10) + ") before current time " + strconv.FormatUint(w.now, 10))
	}
	w.now = t
	if len(w.clocks) > 0 {
		w.clockEdges(t)
	}
}

func (w *Writer) clockEdges(t uint64) {
	for {
		best := -1
		for i := range w.clocks {
			if c := &w.clocks[i]; c.next <= t && (best < 0 || c.next < w.clocks[best].next) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		c := &w.clocks[best]
		w.stamp(c.next)
		v := &w.vars[c.id]
		v.bits ^= 1
		w.emit(v)
		c.next += c.half
	}
}

// stamp writes "#t" unless it is the time of the last stamp.
func (w *Writer) stamp(t uint64) {
	if t == w.stamped {
		return
	}
	w.stamped = t
	b := append(w.line[:0], '#')
	b = strconv.AppendUint(b, t, 10)
	b = append(b, '\n')
	w.bw.Write(b)
	w.line = b
}

// emit writes v's current value.
func (w *Writer) emit(v *variable) {
	b := w.line[:0]
	switch v.kind {
	case Wire:
		b = append(b, byte('0'+v.bits))
		b = append(b, v.code...)
		b = append(b, '\n')
		w.bw.Write(b)
		w.line = b
		return
	case Vector, Integer:
		b = append(b, 'b')
		b = strconv.AppendUint(b, v.bits, 2)
	case Real:
		b = append(b, 'r')
		b = strconv.AppendFloat(b, math.Float64frombits(v.bits), 'g', -1, 64)
	case String:
		b = append(b, 's')
		b = AppendEscaped(b, v.str)
	}
	b = append(b, ' ')
	b = append(b, v.code...)
	b = append(b, '\n')
	w.bw.Write(b)
	w.line = b
}

func (w *Writer) set(id ID, what string) *variable {
	v := &w.vars[id]
	if v.clock {
		panic("vcd: " + what + " on clock " + v.name)
	}
	return v
}

func (w *Writer) change(v *variable) {
	if !w.began {
		return // initial value, dumped by Begin
	}
	if w.closed {
		panic("vcd: change after Close")
	}
	w.stamp(w.now)
	w.emit(v)
}

// SetBits sets a Wire, Vector or Integer to v truncated to its width.
// Nothing is written if the value is unchanged.
func (w *Writer) SetBits(id ID, v uint64) {
	x := w.set(id, "SetBits")
	if x.kind > Integer {
		panic("vcd: SetBits on " + x.kind.String() + " " + x.name)
	}
	v &= x.mask
	if v == x.bits {
		return
	}
	x.bits = v
	w.change(x)
}

// SetBool is SetBits with 1 for true and 0 for false.
func (w *Writer) SetBool(id ID, b bool) {
	var v uint64
	if b {
		v = 1
	}
	w.SetBits(id, v)
}

// SetReal sets a Real. Values are compared bitwise: -0 differs from 0 and a
// NaN equals the same NaN.
func (w *Writer) SetReal(id ID, f float64) {
	x := w.set(id, "SetReal")
	if x.kind != Real {
		panic("vcd: SetReal on " + x.kind.String() + " " + x.name)
	}
	bits := math.Float64bits(f)
	if bits == x.bits {
		return
	}
	x.bits = bits
	w.change(x)
}

// SetString sets a String. The text is written escaped (see AppendEscaped).
func (w *Writer) SetString(id ID, s string) {
	x := w.set(id, "SetString")
	if x.kind != String {
		panic("vcd: SetString on " + x.kind.String() + " " + x.name)
	}
	if s == x.str {
		return
	}
	x.str = s
	w.change(x)
}

// Flush writes buffered output to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// Close emits the clock edges up to and including end, a final "#end" line
// if the last time line is earlier, and flushes. It calls Begin if that was
// not done. It does not close the underlying io.Writer.
func (w *Writer) Close(end uint64) error {
	if w.closed {
		return errors.New("vcd: Close called twice")
	}
	if !w.began {
		if err := w.Begin(); err != nil {
			return err
		}
	}
	if end < w.now {
		return fmt.Errorf("vcd: Close(%d) before current time %d", end, w.now)
	}
	w.At(end)
	w.stamp(end)
	w.closed = true
	return w.bw.Flush()
}

// AppendEscaped appends s escaped the way GTKWave's FST tools write string
// values (fstUtilityBinToEsc), so that the text has no whitespace and
// survives vcd2fst/fst2vcd byte for byte: printable ASCII except \ ' " ?
// stays, C escapes for \a\b\f\n\r\t\v\\\'\"\?, and \ooo for other bytes.
func AppendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\v':
			b = append(b, '\\', 'v')
		case '\\', '\'', '"', '?':
			b = append(b, '\\', c)
		default:
			if c > ' ' && c <= '~' {
				b = append(b, c)
			} else {
				b = append(b, '\\', '0'+(c>>6), '0'+((c>>3)&7), '0'+(c&7))
			}
		}
	}
	return b
}

// EscapeString returns s as a String variable's value appears in the file.
func EscapeString(s string) string { return string(AppendEscaped(nil, s)) }

// UnescapeString reverses EscapeString (it also accepts \xHH).
func UnescapeString(s string) (string, error) {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("vcd: trailing backslash in %q", s)
		}
		switch c = s[i]; c {
		case 'a':
			b = append(b, '\a')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'v':
			b = append(b, '\v')
		case '\\', '\'', '"', '?':
			b = append(b, c)
		case 'x', 'X':
			if i+2 >= len(s) {
				return "", fmt.Errorf("vcd: short \\x escape in %q", s)
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("vcd: bad \\x escape in %q", s)
			}
			b = append(b, byte(n))
			i += 2
		default:
			if i+2 >= len(s) {
				return "", fmt.Errorf("vcd: short octal escape in %q", s)
			}
			n, err := strconv.ParseUint(s[i:i+3], 8, 8)
			if err != nil {
				return "", fmt.Errorf("vcd: bad escape in %q", s)
			}
			b = append(b, byte(n))
			i += 2
		}
	}
	return string(b), nil
}
