package sweep

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// fieldRef is a quantity a field metric reads from a row: a JSON field of
// the result (wall_seconds, miss_rate, verified, messages_by_type), or one
// entry of an object field (messages_by_type.GetX).
type fieldRef struct {
	name  string // as written in the manifest
	index []int  // into Row
	typ   reflect.Type
	key   string // the entry of an object field; "" for the field itself
}

// fieldKinds describes the JSON types a field metric reads.
const fieldKinds = "a number, a boolean, or an object of numbers (its sum; NAME.KEY for one entry)"

// lookupField finds name among Row's JSON fields.
func lookupField(name string) (fieldRef, error) {
	base, key, dotted := strings.Cut(name, ".")
	for _, f := range fields() {
		if f.name != base {
			continue
		}
		t := reflect.TypeOf(Row{}).FieldByIndex(f.index).Type
		ref := fieldRef{name: name, index: f.index, typ: t, key: key}
		switch {
		case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && isNumber(t.Elem().Kind()):
			if dotted && key == "" {
				return ref, fmt.Errorf("field %q: no entry after the dot (NAME.KEY, e.g. %s.KEY)", name, base)
			}
		case dotted:
			return ref, fmt.Errorf("field %q: %s is not an object field, so it has no entries", name, base)
		case isNumber(t.Kind()), t.Kind() == reflect.Bool, t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		default:
			return ref, fmt.Errorf("field %q: not %s", name, fieldKinds)
		}
		return ref, nil
	}
	return fieldRef{}, fmt.Errorf("field %q: no such field of the results (results.jsonl); allowed: %s", name, strings.Join(metricFields(), ", "))
}

// metricFields lists the JSON fields a field metric can read.
func metricFields() []string {
	var out []string
	for _, f := range fields() {
		if _, err := lookupField(f.name); err == nil {
			out = append(out, f.name)
		}
	}
	return out
}

func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func number(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint())
	}
	return v.Float()
}

// isObject reports whether the field is a whole object (its value the sum
// of its entries).
func (f fieldRef) isObject() bool { return f.typ.Kind() == reflect.Map && f.key == "" }

// isBool reports whether the field is a boolean (1 for true, 0 for false).
func (f fieldRef) isBool() bool {
	return f.typ.Kind() == reflect.Bool || f.typ.Kind() == reflect.Pointer
}

// whole reports whether the field's values are whole numbers.
func (f fieldRef) whole() bool {
	k := f.typ.Kind()
	if k == reflect.Map {
		k = f.typ.Elem().Kind()
	}
	return isNumber(k) && k != reflect.Float32 && k != reflect.Float64
}

// value is the field's number in r: a boolean is 1 or 0, an object the
// sum of its entries, an absent entry 0; NaN when r has no value (an
// unset boolean).
func (f fieldRef) value(r Row) float64 {
	v := reflect.ValueOf(r).FieldByIndex(f.index)
	switch {
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return math.NaN()
		}
		v = v.Elem()
	case v.Kind() == reflect.Map && f.key != "":
		e := v.MapIndex(reflect.ValueOf(f.key))
		if !e.IsValid() {
			return 0
		}
		return number(e)
	case v.Kind() == reflect.Map:
		sum := 0.0
		for it := v.MapRange(); it.Next(); {
			sum += number(it.Value())
		}
		return sum
	}
	if v.Kind() == reflect.Bool {
		if v.Bool() {
			return 1
		}
		return 0
	}
	return number(v)
}

// entries is an object field's entries in r.
func (f fieldRef) entries(r Row) map[string]float64 {
	out := map[string]float64{}
	v := reflect.ValueOf(r).FieldByIndex(f.index)
	if v.Kind() != reflect.Map {
		return out
	}
	for it := v.MapRange(); it.Next(); {
		out[it.Key().String()] = number(it.Value())
	}
	return out
}

// format writes a value of the field: booleans true or false, whole
// numbers whole, others to four significant digits without an exponent
// (30.12, 0.1149, 22560).
func (f fieldRef) format(x float64) string {
	switch {
	case math.IsNaN(x):
		return "none"
	case f.isBool():
		return strconv.FormatBool(x != 0)
	case f.whole():
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return sig4(x)
}

// sig4 writes x to four significant digits without an exponent, trailing
// zeros dropped: 30.12, 0.1149, 22560, 0.005.
func sig4(x float64) string {
	if x == 0 || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	d := max(0, 3-int(math.Floor(math.Log10(math.Abs(x)))))
	s := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// sortedKeys lists the keys of the maps, sorted.
func sortedKeys(ms ...map[string]float64) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
