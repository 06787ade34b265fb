package vcd

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// VarDecl is one $var declaration.
type VarDecl struct {
	ID    string // identifier code as in the file
	Name  string // full dotted path, e.g. "top.sw3.xp(5)(2).occ"
	Kind  string // $var type as declared: "wire", "integer", "real", "string", ...
	Width int
}

// Change is one value change. Value is normalized: scalars "0"/"1"/"x"/"z";
// vectors in binary without redundant leading digits ("0" for zero, "x" for
// all-x); reals and strings as written.
type Change struct {
	Time  uint64
	Code  string
	Value string
}

// File is a parsed VCD.
type File struct {
	Timescale string
	Vars      []VarDecl
	Changes   []Change

	byName map[string]int   // first decl with that name
	byCode map[string][]int // indices into Changes
}

// Parse reads a VCD. It accepts what fst2vcd and common simulators write:
// any identifier codes, $date/$comment anywhere, multi-line sections,
// $dumpvars/$dumpall blocks, vectors padded to full width.
func Parse(r io.Reader) (*File, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<30)
	sc.Split(bufio.ScanWords)
	next := func() (string, bool) {
		if sc.Scan() {
			return sc.Text(), true
		}
		return "", false
	}
	// untilEnd returns the tokens before the next "$end".
	untilEnd := func(what string) ([]string, error) {
		var toks []string
		for {
			t, ok := next()
			if !ok {
				return nil, fmt.Errorf("vcd: %s without $end", what)
			}
			if t == "$end" {
				return toks, nil
			}
			toks = append(toks, t)
		}
	}

	f := &File{}
	var scopes []string
	var now uint64
	for {
		tok, ok := next()
		if !ok {
			break
		}
		switch c := tok[0]; {
		case c == '$':
			switch tok {
			case "$timescale":
				toks, err := untilEnd(tok)
				if err != nil {
					return nil, err
				}
				f.Timescale = strings.Join(toks, "")
			case "$scope":
				toks, err := untilEnd(tok)
				if err != nil {
					return nil, err
				}
				if len(toks) < 2 {
					return nil, fmt.Errorf("vcd: malformed $scope %q", toks)
				}
				scopes = append(scopes, toks[1])
			case "$upscope":
				if _, err := untilEnd(tok); err != nil {
					return nil, err
				}
				if len(scopes) == 0 {
					return nil, fmt.Errorf("vcd: $upscope at top level")
				}
				scopes = scopes[:len(scopes)-1]
			case "$var":
				toks, err := untilEnd(tok)
				if err != nil {
					return nil, err
				}
				if len(toks) < 4 {
					return nil, fmt.Errorf("vcd: malformed $var %q", toks)
				}
				width, err := strconv.Atoi(toks[1])
				if err != nil {
					return nil, fmt.Errorf("vcd: $var %q: bad width: %v", toks, err)
				}
				name := strings.Join(toks[3:], "") // "data [7:0]" -> "data[7:0]"
				if len(scopes) > 0 {
					name = strings.Join(scopes, ".") + "." + name
				}
				f.Vars = append(f.Vars, VarDecl{ID: toks[2], Name: name, Kind: toks[0], Width: width})
			case "$dumpvars", "$dumpall", "$dumpon", "$dumpoff", "$end":
				// Value changes inside these blocks are ordinary changes.
			default: // $comment, $date, $version, $enddefinitions, unknown
				if _, err := untilEnd(tok); err != nil {
					return nil, err
				}
			}
		case c == '#':
			t, err := strconv.ParseUint(tok[1:], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("vcd: bad time %q", tok)
			}
			now = t
		case strings.IndexByte("01xXzZ", c) >= 0:
			code := tok[1:]
			if code == "" {
				code, ok = next()
				if !ok {
					return nil, fmt.Errorf("vcd: %q without identifier", tok)
				}
			}
			v := string(lower(c))
			f.Changes = append(f.Changes, Change{Time: now, Code: code, Value: v})
		case strings.IndexByte("bBrRsS", c) >= 0:
			code, ok := next()
			if !ok {
				return nil, fmt.Errorf("vcd: %q without identifier", tok)
			}
			v := tok[1:]
			if c == 'b' || c == 'B' {
				v = normalizeBits(v)
			}
			f.Changes = append(f.Changes, Change{Time: now, Code: code, Value: v})
		default:
			return nil, fmt.Errorf("vcd: unexpected token %q", tok)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	f.index()
	return f, nil
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// normalizeBits lower-cases and drops leading digits that VCD left-extension
// would restore (0 before 0/1, x before x, z before z), so that a value
// padded to full width compares equal to its shortest form.
func normalizeBits(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lower(b[i])
	}
	i := 0
	for i+1 < len(b) {
		c, d := b[i], b[i+1]
		if c == '0' && (d == '0' || d == '1') || (c == 'x' || c == 'z') && d == c {
			i++
			continue
		}
		break
	}
	if len(b) == 0 {
		return "0"
	}
	return string(b[i:])
}

func (f *File) index() {
	f.byName = make(map[string]int, len(f.Vars))
	for i, v := range f.Vars {
		if _, dup := f.byName[v.Name]; !dup {
			f.byName[v.Name] = i
		}
	}
	f.byCode = make(map[string][]int)
	for i, c := range f.Changes {
		f.byCode[c.Code] = append(f.byCode[c.Code], i)
	}
}

// Var returns the first declaration with the given full name.
func (f *File) Var(name string) (VarDecl, bool) {
	if f.byName == nil {
		f.index()
	}
	i, ok := f.byName[name]
	if !ok {
		return VarDecl{}, false
	}
	return f.Vars[i], true
}

// History returns the changes of the variable with that full name (the first
// declaration with it), in time order; nil if there is no such variable.
func (f *File) History(name string) []Change {
	d, ok := f.Var(name)
	if !ok {
		return nil
	}
	idx := f.byCode[d.ID]
	h := make([]Change, len(idx))
	for i, j := range idx {
		h[i] = f.Changes[j]
	}
	sort.SliceStable(h, func(i, j int) bool { return h[i].Time < h[j].Time })
	return h
}

// ValueAt returns the value of the named variable at time t (its last change
// at or before t); false if the variable is unknown or has no value yet.
func (f *File) ValueAt(name string, t uint64) (string, bool) {
	h := f.History(name)
	i := sort.Search(len(h), func(i int) bool { return h[i].Time > t })
	if i == 0 {
		return "", false
	}
	return h[i-1].Value, true
}
