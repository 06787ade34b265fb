// Package param is how a block names the typed parameter that is wrong
// without knowing where its value came from. A block's constructor checks
// its Params and returns an *Error naming the field as a Go selector
// ("crossbar.Params.Ports"); the experiment layer, which reads the config,
// maps each parameter to its config key (docs/architecture.md §8), so a
// user reads "network.ports: …" and a Go caller of the block reads the
// field it set.
package param

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a bad parameter value. Msg says what is wrong and what is
// allowed; it may name other parameters as {crossbar.Params.Org}, which
// Error renders as the selector and Rename as the config key.
type Error struct {
	Param string
	Msg   string
}

// Errorf makes an *Error for param.
func Errorf(param, format string, args ...any) error {
	return &Error{Param: param, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	return e.Param + ": " + refs(e.Msg, func(p string) string { return p })
}

// Rename rewrites err's *Error, if it has one, with names from name (the
// parameter's config key); the text around it is kept. A parameter name
// does not know is kept as it is.
func Rename(err error, name func(param string) (string, bool)) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	rename := func(p string) string {
		if k, ok := name(p); ok {
			return k
		}
		return p
	}
	renamed := rename(pe.Param) + ": " + refs(pe.Msg, rename)
	return errors.New(strings.Replace(err.Error(), pe.Error(), renamed, 1))
}

// refs replaces every {param} in msg with f(param).
func refs(msg string, f func(string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(msg[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(msg[:i])
		b.WriteString(f(msg[i+1 : i+j]))
		msg = msg[i+j+1:]
	}
	b.WriteString(msg)
	return b.String()
}

// A is "a" or "an" before the number n read aloud ("an 8-flit packet", "an
// 11-node ring", "a 16-node mesh").
func A(n uint64) string {
	for n >= 1000 {
		n /= 1000 // 8000, 18000: "eight thousand", "eighteen thousand"
	}
	if n == 8 || n == 11 || n == 18 || n >= 80 && n < 90 || n >= 800 && n < 900 {
		return "an"
	}
	return "a"
}
