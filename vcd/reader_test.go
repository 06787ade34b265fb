package vcd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// In the style of fst2vcd and of simulators: $date, multi-line sections,
// padded vectors, aliases, ranges, tabs, x/z, no "#0".
const foreign = `$date
	Sat Nov 21 05:30:18 2026

$end
$version
	hwcoll
$end
$timescale
	1 ps
$end
$scope module top $end
$var wire 1 ! clk $end
$scope module sw3 $end
$var wire 8 "# data [7:0] $end
$var   integer 32 ab cnt $end
$var real 64 $ temp $end
$var string 0 % msg $end
$var wire 1 ! clk_alias $end
$upscope $end
$upscope $end
$enddefinitions $end
$comment anywhere $end
$dumpvars
X!
b00000000 "#
bzzzz ab
r0 $
s %
$end
#5
0!
b00000101 "#
b0x1 ab
r0.3 $
shello\040world %
#7
$dumpoff
x!
$end
#10
1 !
B11111111 "#
b1111 ab
rnan $
s\001 %
`

func TestParseForeign(t *testing.T) {
	f, err := Parse(strings.NewReader(foreign))
	require.NoError(t, err)
	require.Equal(t, "1ps", f.Timescale)
	require.Equal(t, []VarDecl{
		{ID: "!", Name: "top.clk", Kind: "wire", Width: 1},
		{ID: `"#`, Name: "top.sw3.data[7:0]", Kind: "wire", Width: 8},
		{ID: "ab", Name: "top.sw3.cnt", Kind: "integer", Width: 32},
		{ID: "$", Name: "top.sw3.temp", Kind: "real", Width: 64},
		{ID: "%", Name: "top.sw3.msg", Kind: "string", Width: 0},
		{ID: "!", Name: "top.sw3.clk_alias", Kind: "wire", Width: 1},
	}, f.Vars)
	clk := []tv{{0, "x"}, {5, "0"}, {7, "x"}, {10, "1"}}
	require.Equal(t, clk, histories(f, "top.clk"))
	require.Equal(t, clk, histories(f, "top.sw3.clk_alias"))
	require.Equal(t, []tv{{0, "0"}, {5, "101"}, {10, "11111111"}}, histories(f, "top.sw3.data[7:0]"))
	require.Equal(t, []tv{{0, "z"}, {5, "0x1"}, {10, "1111"}}, histories(f, "top.sw3.cnt"))
	require.Equal(t, []tv{{0, "0"}, {5, "0.3"}, {10, "nan"}}, histories(f, "top.sw3.temp"))
	require.Equal(t, []tv{{0, ""}, {5, `hello\040world`}, {10, `\001`}}, histories(f, "top.sw3.msg"))

	v, ok := f.ValueAt("top.sw3.data[7:0]", 9)
	require.True(t, ok)
	require.Equal(t, "101", v)
	_, ok = f.ValueAt("nope", 9)
	require.False(t, ok)
	require.Nil(t, f.History("nope"))
}

func TestValueAtBeforeFirstChange(t *testing.T) {
	f, err := Parse(strings.NewReader("$var wire 1 ! a $end\n$enddefinitions $end\n#3\n1!\n#4\n0!\n1!\n"))
	require.NoError(t, err)
	_, ok := f.ValueAt("a", 2)
	require.False(t, ok)
	v, _ := f.ValueAt("a", 3)
	require.Equal(t, "1", v)
	v, _ = f.ValueAt("a", 4) // the last change at a time wins
	require.Equal(t, "1", v)
}

func TestNormalizeBits(t *testing.T) {
	for in, want := range map[string]string{
		"":         "0",
		"0":        "0",
		"0000":     "0",
		"0101":     "101",
		"1":        "1",
		"xxxx":     "x",
		"xx01":     "x01",
		"0x1":      "0x1", // "x1" would extend to "xx1"
		"000x":     "0x",
		"ZZ1":      "z1",
		"00z":      "0z",
		"11111111": "11111111",
	} {
		require.Equal(t, want, normalizeBits(in), in)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"$var wire 1 ! a",
		"$var wire x ! a $end",
		"$var wire 1 $end",
		"$upscope $end",
		"#x",
		"b101",
		"hello",
		"$comment never closed",
	} {
		_, err := Parse(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
}
