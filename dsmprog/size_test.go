package dsmprog

import (
	"testing"
	"time"

	"github.com/hwcoll/hwcoll/dsm"
)

func TestFullSizeRefs(t *testing.T) {
	if testing.Short() {
		t.Skip("full size")
	}
	t0 := time.Now()
	_, refs, err := dsm.Functional(NewRadix(0, 1), 64, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("radix refs %d wall %v", refs, time.Since(t0))
}

func TestFullSizeBarnes(t *testing.T) {
	if testing.Short() {
		t.Skip("full size")
	}
	t0 := time.Now()
	b := NewBarnes(0, 1)
	_, refs, err := dsm.Functional(b, 64, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("barnes refs %d wall %v cells0 %d", refs, time.Since(t0), b.cells0)
}
