package dsmprog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// testProcs are the processor counts every program is verified on (6 is
// not a power of two; every program here takes any count).
var testProcs = []int{1, 2, 4, 6, 16}

func TestRegistry(t *testing.T) {
	require.Equal(t, []string{"radix", "barnes", "false-sharing", "producer-consumer",
		"lock-contention", "migratory", "random"}, Names())
	for _, name := range Names() {
		p, err := New(name, 0, 1)
		require.NoError(t, err, name)
		require.Equal(t, name, p.Name())
		require.NotEmpty(t, SizeDoc(name))
	}
	r, err := New("radix", 0, 1)
	require.NoError(t, err)
	require.Equal(t, 1<<20, r.(*Radix).N)
	b, err := New("barnes", 0, 1)
	require.NoError(t, err)
	require.Equal(t, 8192, b.(*Barnes).N)
	require.Equal(t, "keys (default 1048576, 1..67108864)", SizeDoc("radix"))
	require.Empty(t, SizeDoc("nope"))

	_, err = New("fft", 0, 1)
	require.EqualError(t, err, `unknown program "fft" (allowed: radix | barnes | false-sharing | producer-consumer | lock-contention | migratory | random)`)
	_, err = New("barnes", 1, 1)
	require.EqualError(t, err, "barnes: size 1: the size is bodies, allowed 2..262144 (0 for the default 8192)")
	_, err = New("radix", -3, 1)
	require.ErrorContains(t, err, "the size is keys, allowed 1..")
	_, err = New("random", KernelMaxSize+1, 1)
	require.ErrorContains(t, err, "the size is references per processor")
}
