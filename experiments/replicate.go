package experiments

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
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

// RunOptions control a multi-replication run.
type RunOptions struct {
	// Workers is how many replications run at once; <= 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Progress, if set, is called (from one goroutine at a time) with the
	// fraction of the work done, 0..1: within the run for one replication,
	// replications finished over the total for several.
	Progress func(frac float64)
	// Step, if set, is called (under the same lock as Progress, and before
	// it) each time a replication finishes, with the replications finished
	// and the number this call runs.
	Step func(done, total int)
	// Batch, if set, is called once this call's replications have all
	// finished without error, with the scenarios and the results it
	// returns (with Shard, other shards' results are nil). A caller that runs several batches on the same options (a
	// sizing search runs one per fleet size) learns from it which one ended.
	Batch func(scs []*scenario.Scenario, results [][]*report.RepResult)
	// OnDone streams completed requests of replication 0 (requests.csv).
	// When set, replication 0 runs alone before the others start.
	OnDone func(o *engine.Outcome)
	// Shard runs only this shard's jobs (shard.go); the others' results
	// are left nil.
	Shard Shard
}

// RunReplications runs the scenario's replications on a worker pool and
// returns their results in index order, so the output is identical whatever
// the number of workers (DESIGN.md decision 4). The engine stays
// single-threaded: parallelism is across independent runs, and, when each
// run in flight has a spare core, between a run's engine and its
// workload's draws (Options.PrefetchWorkload), which give the same
// requests either way.
func RunReplications(sc *scenario.Scenario, opt RunOptions) ([]*report.RepResult, error) {
	res, err := runMany([]*scenario.Scenario{sc}, opt)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// RunScenarios runs every replication of every scenario on one worker pool
// (or, with opt.Shard, this shard's share of them) and returns
// results[scenario][replication]; see runMany.
func RunScenarios(scs []*scenario.Scenario, opt RunOptions) ([][]*report.RepResult, error) {
	return runMany(scs, opt)
}

// runMany runs every replication of every scenario on one worker pool and
// returns results[scenario][replication]. Scenarios share replication seeds
// (common random numbers) when they share a master seed.
func runMany(scs []*scenario.Scenario, opt RunOptions) ([][]*report.RepResult, error) {
	type job struct{ s, i int }
	var jobs []job
	skipped := 0
	results := make([][]*report.RepResult, len(scs))
	errs := make([][]error, len(scs))
	for s, sc := range scs {
		n := max(sc.Run.Replications, 1)
		results[s] = make([]*report.RepResult, n)
		errs[s] = make([]error, n)
		for i := 0; i < n; i++ {
			if opt.Shard.takes(len(jobs) + skipped) {
				jobs = append(jobs, job{s, i})
			} else {
				skipped++
			}
		}
	}
	total := len(jobs)
	single := total == 1 && !opt.Shard.Active()
	var mu sync.Mutex
	done := 0
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	runOne := func(j job, inFlight int) {
		sc := scs[j.s]
		rsc := *sc
		rsc.Seed = ReplicationSeed(sc.Seed, j.i)
		// Each run draws its workload on a core of its own when there
		// are cores for it (results are the same either way).
		o := Options{PrefetchWorkload: 2*inFlight <= runtime.GOMAXPROCS(0)}
		if j.s == 0 && j.i == 0 {
			o.OnDone = opt.OnDone
		}
		if single {
			o.Progress = opt.Progress
		}
		res, err := safeRun(&rsc, o)
		if err == nil {
			rr := &report.RepResult{Index: j.i, Seed: rsc.Seed, Summary: report.Summarize(res)}
			if res.Rec != nil {
				rr.TTFT, rr.TPOT, rr.ITL, rr.E2E = res.Rec.TTFT, res.Rec.TPOT, res.Rec.ITL, res.Rec.E2E
			}
			rr.TTFTSplit = report.TTFTSplitSketches(res)
			if j.i == 0 && res.Fleet != nil {
				rr.Samples = res.Fleet.Samples
				rr.Timeline = res.Timeline
			}
			if j.i == 0 {
				rr.TrainingTrace = res.TrainingTrace
			}
			results[j.s][j.i] = rr
		} else {
			errs[j.s][j.i] = err
		}
		mu.Lock()
		done++
		if opt.Step != nil {
			opt.Step(done, total)
		}
		if opt.Progress != nil && !single {
			opt.Progress(float64(done) / float64(total))
		}
		mu.Unlock()
	}
	if opt.OnDone != nil && len(jobs) > 0 {
		runOne(jobs[0], 1) // the request stream must not interleave with others
		jobs = jobs[1:]
	}
	workers = max(1, min(workers, len(jobs)))
	next := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				runOne(j, workers)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for s := range errs {
		for i, err := range errs[s] {
			if err != nil {
				return nil, fmt.Errorf("%s, replication %d (seed %d): %w", scs[s].Name, i, ReplicationSeed(scs[s].Seed, i), err)
			}
		}
	}
	if opt.Batch != nil {
		opt.Batch(scs, results)
	}
	return results, nil
}
