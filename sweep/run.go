package sweep

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
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
	rows, _, errs = RunStop(specs, jobs, done, nil)
	return rows, errs
}

// RunStop is RunAll that stops when stop closes (nil: never): points not
// started yet are skipped and running ones stop at a cycle boundary
// (rtl.Sim.Stop) and are dropped; ran[i] says point i ran to its end (its
// row and error are then set).
func RunStop(specs []Spec, jobs int, done func(), stop <-chan struct{}) (rows []Row, ran []bool, errs []error) {
	rows = make([]Row, len(specs))
	errs = make([]error, len(specs))
	ran = make([]bool, len(specs))
	var mu sync.Mutex
	running := map[*rtl.Sim]bool{}
	stopped := false
	if stop != nil {
		quit := make(chan struct{})
		defer close(quit)
		go func() {
			select {
			case <-stop:
				mu.Lock()
				stopped = true
				for sim := range running {
					sim.Stop()
				}
				mu.Unlock()
			case <-quit:
			}
		}()
	}
	// The points running at once share the cores: a point whose run.workers
	// is 0 (auto) takes its share, not every core for each point.
	jobs = min(max(jobs, 1), len(specs))
	cores := coresEach(runtime.GOMAXPROCS(0), jobs)
	next := make(chan int)
	fin := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := specs[i]
				var sim *rtl.Sim
				opt := experiment.Options{Started: func(x *rtl.Sim) {
					mu.Lock()
					defer mu.Unlock()
					sim = x
					running[x] = true
					if stopped {
						x.Stop()
					}
				}}
				mu.Lock()
				skip := stopped
				mu.Unlock()
				if !skip {
					cfg := s.Config
					cfg.Run.Cores = cores
					r, err := experiment.Run(cfg, opt)
					mu.Lock()
					delete(running, sim)
					ran[i] = !stopped || err != nil
					mu.Unlock()
					rows[i] = Row{Result: r, Point: s.Index, Series: s.Series, XKey: s.XKey, X: s.X}
					errs[i] = err
				}
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
	for i := range fin {
		if done != nil && ran[i] {
			done()
		}
	}
	return rows, ran, errs
}

// Describe names a point for an error message: "series, key=x".
func Describe(s Spec) string { return s.describe() }

// describe names a point for an error message: "series, key=x" .
func (s Spec) describe() string {
	p := fmt.Sprintf("point %s=%s", s.XKey, fmtFloat(s.X))
	if s.Series != "" {
		p = s.Series + " " + p
	}
	return p
}

// coresEach is the cores each of jobs runs at once may take out of procs
// (config Run.Cores): at least one.
func coresEach(procs, jobs int) int64 { return int64(max(1, procs/max(jobs, 1))) }
