//go:build !linux

package osmem

import "errors"

// THPMode is "": only Linux has transparent huge pages to ask for.
func THPMode() string { return "" }

// Reserve does nothing off Linux.
func Reserve(n uint64) (Advice, error) { return Advice{}, nil }

var errNoProc = errors.New("osmem: peak resident set is read from /proc (Linux)")

// PeakRSS is not measured off Linux.
func PeakRSS() (uint64, error) { return 0, errNoProc }

// ResetPeakRSS is not available off Linux.
func ResetPeakRSS() error { return errNoProc }

// Pages is not available off Linux.
func Pages(n int, huge bool) ([]byte, func(), error) {
	return nil, nil, errors.New("osmem: pages of a chosen size are mapped on Linux only")
}

// MemAvailable is not known off Linux.
func MemAvailable() (uint64, bool) { return 0, false }
