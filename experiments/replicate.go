package experiments

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// ReplicationSeed is the master seed of replication i of a scenario whose
// seed is master. Replication 0 uses master itself, so a one-replication run
// equals a plain run. Every arm of an A/B and every point of a sweep uses
// the same seeds: common random numbers.
func ReplicationSeed(master uint64, i int) uint64 {
	if i == 0 {
		return master
	}
	a, _ := sim.StreamSeeds(master, fmt.Sprintf("replication/%d", i))
	return a
}

// RepResult is what one replication leaves for aggregation and output.
type RepResult struct {
	Index   int
	Seed    uint64
	Summary *Summary
	// Latency sketches, for pooled CDFs across replications.
	TTFT, TPOT, E2E *quantile.Sketch
	// Samples is the fleet time series (kept for replication 0 only).
	Samples []models.Sample
}

// RunOptions control a multi-replication run.
type RunOptions struct {
	// Workers is how many replications run at once; <= 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Progress, if set, is called (from one goroutine at a time) with the
	// fraction of the work done, 0..1: within the run for one replication,
	// replications finished over the total for several.
	Progress func(frac float64)
	// OnDone streams completed requests of replication 0 (requests.csv).
	// When set, replication 0 runs alone before the others start.
	OnDone func(o *models.Outcome)
}

// RunReplications runs the scenario's replications on a worker pool and
// returns their results in index order, so the output is identical whatever
// the number of workers (DESIGN.md decision 4). The engine stays
// single-threaded: parallelism is across independent runs only.
func RunReplications(sc *Scenario, opt RunOptions) ([]*RepResult, error) {
	n := sc.Run.Replications
	if n < 1 {
		n = 1
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	results := make([]*RepResult, n)
	errs := make([]error, n)
	var mu sync.Mutex
	done := 0
	report := func() {
		mu.Lock()
		done++
		if opt.Progress != nil && n > 1 {
			opt.Progress(float64(done) / float64(n))
		}
		mu.Unlock()
	}
	runOne := func(i int) {
		rsc := *sc
		rsc.Seed = ReplicationSeed(sc.Seed, i)
		o := Options{}
		if i == 0 {
			o.OnDone = opt.OnDone
		}
		if n == 1 {
			o.Progress = opt.Progress
		}
		res, err := Run(&rsc, o)
		if err != nil {
			errs[i] = err
			report()
			return
		}
		rr := &RepResult{Index: i, Seed: rsc.Seed, Summary: Summarize(res),
			TTFT: res.Rec.TTFT, TPOT: res.Rec.TPOT, E2E: res.Rec.E2E}
		if i == 0 {
			rr.Samples = res.Fleet.Samples
		}
		results[i] = rr
		report()
	}
	start := 0
	if opt.OnDone != nil {
		runOne(0) // the request stream must not interleave with others
		start = 1
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runOne(i)
			}
		}()
	}
	for i := start; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("replication %d (seed %d): %w", i, ReplicationSeed(sc.Seed, i), err)
		}
	}
	return results, nil
}
