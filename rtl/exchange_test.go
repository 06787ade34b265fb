package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

var testExchange = rtl.NewExchange[int]()

// An Exchange hands over what is put, the last put first, to whichever
// module of the same Sim takes; another Sim's exchange is its own.
func TestExchangePutTake(t *testing.T) {
	a, b := rtl.NewSim(rtl.Options{}), rtl.NewSim(rtl.Options{})
	a.SetParallel(2)
	require.True(t, a.Top().Split())
	require.False(t, b.Top().Split())
	testExchange.Put(a.Top(), []int{1, 2, 3})
	testExchange.Put(a.Top(), []int{4})
	require.Empty(t, testExchange.Take(b.Top(), nil, 8), "another Sim's")
	got := testExchange.Take(a.Top(), []int{9}, 2)
	require.Equal(t, []int{9, 3, 4}, got)
	var left []int
	testExchange.Each(a.Top(), func(v int) { left = append(left, v) })
	require.Equal(t, []int{1, 2}, left)
	require.Equal(t, []int{1, 2}, testExchange.Take(a.Top(), nil, 8))
	require.Empty(t, testExchange.Take(a.Top(), nil, 8))
}
