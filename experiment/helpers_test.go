package experiment_test

import (
	"math/rand/v2"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/packet"
)

// configWith returns the defaults with the assignments applied, validated.
func configWith(t require.TestingT, sets ...string) config.Config {
	cfg := config.Default()
	for _, s := range sets {
		require.NoError(t, cfg.Set(s), s)
	}
	require.NoError(t, cfg.Validate())
	return cfg
}

// script is an injection process that gives packets at fixed gaps (the
// first from cycle 0) and then none.
type script struct {
	gaps []uint64
	i    int
}

func (s *script) Gap(*rand.Rand) uint64 {
	if s.i < len(s.gaps) {
		s.i++
		return s.gaps[s.i-1]
	}
	return 1 << 50
}

// fixed is a pattern that hands out the given destinations in turn.
type fixed struct {
	dsts []dest
	i    int
}

type dest struct {
	op   packet.Op
	dst  uint32
	mask uint64
}

func to(dst uint32) dest     { return dest{op: packet.Unicast, dst: dst} }
func toAll(mask uint64) dest { return dest{op: packet.Multicast, mask: mask} }
func ports(ps ...uint) (m uint64) {
	for _, p := range ps {
		m |= 1 << p
	}
	return m
}

func (f *fixed) Fill(_ *rand.Rand, _ uint32, p *packet.Packet) {
	d := f.dsts[f.i%len(f.dsts)]
	f.i++
	p.Op, p.Dst, p.Mask = d.op, d.dst, d.mask
}

// configOrErr is configWith returning the error of a set or of the
// validation instead of failing.
func configOrErr(sets ...string) (config.Config, error) {
	cfg := config.Default()
	for _, s := range sets {
		if err := cfg.Set(s); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}
