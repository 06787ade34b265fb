package sweep

import (
	"fmt"
	"sync"

	"github.com/hwcoll/hwcoll/experiment"
)

// Run runs every point on jobs goroutines and returns the rows in the
// order of specs. Each run is seeded from its own config, so the rows do
// not depend on jobs. done, when set, is called once per finished point
// from the calling goroutine (for a progress display). The error is the
// first point's, in spec order, that could not be built (bad input).
func Run(specs []Spec, jobs int, done func()) ([]Row, error) {
	rows, errs := RunAll(specs, jobs, done)
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %v", specs[i].describe(), err)
		}
	}
	return rows, nil
}

// RunAll is Run that keeps going: errs[i] is point i's error (nil when it
// ran; its row is then rows[i]).
func RunAll(specs []Spec, jobs int, done func()) (rows []Row, errs []error) {
	rows = make([]Row, len(specs))
	errs = make([]error, len(specs))
	next := make(chan int)
	fin := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(max(jobs, 1), len(specs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := specs[i]
				r, err := experiment.Run(s.Config, experiment.Options{})
				rows[i] = Row{Result: r, Point: s.Index, Series: s.Series, XKey: s.XKey, X: s.X}
				errs[i] = err
				fin <- i
			}
		}()
	}
	go func() {
		for i := range specs {
			next <- i
		}
		close(next)
		wg.Wait()
		close(fin)
	}()
	for range fin {
		if done != nil {
			done()
		}
	}
	return rows, errs
}

// describe names a point for an error message: "series, key=x" .
func (s Spec) describe() string {
	p := fmt.Sprintf("point %s=%s", s.XKey, fmtFloat(s.X))
	if s.Series != "" {
		p = s.Series + " " + p
	}
	return p
}
