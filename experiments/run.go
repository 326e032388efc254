package experiments

import (
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// Options adjust a run without changing its scenario.
type Options struct {
	// Progress, if set, is called with the fraction of the run done (0..1),
	// a few hundred times at most. It must not write to stdout.
	Progress func(frac float64)
	// OnDone, if set, sees every completed request (streamed records).
	OnDone func(o *engine.Outcome)
	// PrefetchWorkload draws the workload on a goroutine of its own, ahead
	// of the engine (workloads.Prefetch): the same requests, so the same
	// results, in less wall time when a core is spare, for a little more
	// CPU time in all. RunReplications sets it when each run in flight
	// has a spare core.
	PrefetchWorkload bool
}

// The prefetched workload's batches: 8,192 requests (512 KiB), two ahead.
// Measured on the autoscaled 1,024-GPU day's first six hours on two cores
// (BenchmarkAutoscaledDay1024 under -short, wall time): 11.5-12.0 s
// without, 10.0-10.5 s with 8,192 x 2 or 16,384 x 2, 10.4-11.0 s with
// 2,048 x 3 or 4,096 x 2, 10.4-12.4 s with 1,024 x 4 (smaller batches wake
// the drawing goroutine more often: more system time, more CPU in all).
const (
	prefetchBatch = 8192
	prefetchDepth = 2
)

// Result is one run's raw outcome, before summarising.
type Result struct {
	Scenario *Scenario
	Fleet    *fleet.Fleet
	Rec      *fleet.Recorder
	Events   uint64
	EndTime  sim.Time
	Failures *FailureStats  // nil when failures are off
	Training *TrainingStats // training mode only
	// TrainingTrace is the training job's timeline (training mode only).
	TrainingTrace []training.TracePoint
	Timeline      []failures.TimelinePoint // replicas failing and coming back (with [failures])
	// DownGPUSeconds is the GPU-seconds of serving replicas out of service (with
	// [failures]; each replica's own GPUs in a fleet of groups).
	DownGPUSeconds float64
	// IdleSpareS is replica-seconds of warm spares waiting unused;
	// SpareRepairS of replicas repaired while a spare held their place.
	IdleSpareS, SpareRepairS float64
	// SpareRepairGPUSeconds is SpareRepairS in GPU-seconds (each replica's
	// own GPUs); IdleSpareSOf is IdleSpareS by replica (nil without
	// spares), which prices a fleet of groups' spares at their group's
	// price.
	SpareRepairGPUSeconds float64
	IdleSpareSOf          []float64
	// Stopped says why the run stopped early ("overload: ..."), or "".
	Stopped string
}

// testFleetHook, set by tests only, sees each serving run's fleet.
var testFleetHook func(*fleet.Fleet)

// newFleet builds the scenario's serving cluster with its router and
// gateway policies. Warm spares ([failures] spares) are replicas beyond
// cluster.replicas, built like the others; the failures' spare pool
// (models/faults) holds them out of service until needed.
func newFleet(eng *sim.Engine, sc *Scenario, rec *fleet.Recorder) (*fleet.Fleet, error) {
	cluster := sc.Cluster
	if sc.Failures.Enabled {
		cluster.Replicas += sc.Failures.Spares
	}
	if sc.groupSpares() > 0 {
		// Each group's spares: a group of their own after every group.
		cluster = cluster.WithSpareGroups()
	}
	rc := sc.Router
	if rc.TTFTBudgetMs == 0 {
		rc.TTFTBudgetMs = sc.SLO.TTFTMs
	}
	router, err := policies.NewRouter(rc, cluster.Replicas, sim.NewStream(sc.Seed, streams.Router))
	if err != nil {
		return nil, err
	}
	fl, err := fleet.NewFleet(eng, sc.Catalog(), cluster, router, rec, "cluster")
	if err != nil {
		return nil, err
	}
	if w := sc.Workload; w.Concurrency > 0 {
		fl.SetClients(fleet.Clients{Concurrency: w.Concurrency, Think: sim.FromSeconds(w.ThinkTimeS), Until: sim.FromSeconds(w.DurationS)})
	}
	if ga, ok := router.(fleet.GroupAwareRouter); ok && len(fl.Pool.Groups) > 0 {
		ga.SetGroups(fl.GroupViews(sc.GroupPrice))
	}
	if err := enableDisagg(eng, fl, sc, cluster); err != nil {
		return nil, err
	}
	if sc.KVTiers.Enabled {
		fl.EnableKVTiers(sc.KVTiers, sc.Catalog().GPUs[cluster.GPU])
	}
	if pa, ok := router.(fleet.PrefixAwareRouter); ok {
		pa.SetPrefixIndex(fl)
	}
	pol, err := policies.BuildResilience(sc.Policies, cluster.Replicas, sim.NewStream(sc.Seed, streams.Retry))
	if err != nil {
		return nil, err
	}
	if fl.Disagg != nil {
		// The decode pool's breaker: the same settings, its own state.
		if pol.DecodeBreaker, err = policies.BuildDecodeBreaker(sc.Policies, len(fl.Disagg.Decode)); err != nil {
			return nil, err
		}
	}
	fl.SetPolicies(pol)
	if sc.Autoscale.Enabled {
		ac := sc.Autoscale
		if sc.Workload.Kind != workloads.KindTrace {
			if ac.RateAt, err = sc.Workload.Arrival.RateFunc(); err != nil {
				return nil, err
			}
		}
		policy, err := policies.NewScalePolicy(ac)
		if err != nil {
			return nil, err
		}
		// The run's down replicas are never started: the fleet grows to
		// the others at most.
		down := sc.downIndexes()
		p := ac.Params(cluster.Replicas-len(down), cluster.GPUsPerReplica(), fl.Memory.WeightBytes)
		p.Down = down
		// A fleet of groups starts its cheapest replicas per capacity
		// first; reserved capacity is paid whether used or not, so
		// provisioning it costs nothing more and it starts first.
		p.Units = fl.ScaleUnits(func(g *fleet.Group) float64 {
			if sc.GroupTier(g.GroupConfig) == TierReserved {
				return 0
			}
			return sc.GroupPrice(g.GroupConfig)
		})
		if p.Units != nil {
			// Spot replicas cost their price fraction while provisioned:
			// cheaper to start than their group's on-demand ones.
			for _, part := range sc.spotParts() {
				for i := part.first; i < part.end; i++ {
					p.Units[i].USDPerHour *= sc.Spot.PriceFraction
				}
			}
		}
		fl.StartAutoscaler(p, policy)
	}
	return fl, nil
}

// downIndexes are the replicas in repair for the whole run: the last
// run.down_replicas of a fleet of one kind, or each group's last
// down_replicas.
func (s *Scenario) downIndexes() []int {
	if len(s.Cluster.Groups) > 0 {
		return s.Cluster.DownIndexes()
	}
	out := make([]int, max(0, min(s.Run.DownReplicas, s.Cluster.Replicas))) // (bad counts are refused elsewhere)
	for k := range out {
		out[k] = s.Cluster.Replicas - 1 - k
	}
	return out
}

// Run simulates the scenario once with its seed.
func Run(sc *Scenario, opt Options) (*Result, error) {
	if sc.Mode == ModeTraining {
		return runTraining(sc)
	}
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	rec.OnDone = opt.OnDone
	sc.perModelRecorders(rec)
	fl, err := newFleet(eng, sc, rec)
	if err != nil {
		return nil, err
	}
	if testFleetHook != nil {
		testFleetHook(fl)
	}
	ap, err := injectFaults(eng, fl, sc)
	if err != nil {
		return nil, err
	}
	for _, i := range sc.downIndexes() {
		ap.Remove(i)
	}
	if sc.Fallback.Enabled {
		if err := fl.AddFallback(sc.Catalog(), sc.Fallback.FleetConfig, policies.NewLeastOutstanding(), "fallback"); err != nil {
			return nil, err
		}
	}
	if c := sc.Rollout; c.Enabled {
		judge, err := policies.NewRolloutJudge(c)
		if err != nil {
			return nil, err
		}
		fl.StartRollout(c, judge, sim.NewStream(sc.Seed, streams.Rollout))
	}
	if len(sc.Serve) > 1 {
		shares := make([]float64, len(sc.Serve))
		for i, c := range sc.Serve {
			shares[i] = c.Share
		}
		fl.SetModelMix(sim.NewStream(sc.Seed, streams.Models), shares)
	}
	if ls, err := sc.modelLengths(); err != nil {
		return nil, err
	} else if ls != nil {
		fl.SetModelLengths(ls)
	}
	if sc.spotReplicas() > 0 {
		fl.StartSpot(sc.spotParams(), sim.NewStream(sc.Seed, streams.Spot))
	}
	var fi *failures.Injector
	if sc.Failures.Enabled {
		if fi, err = startFailures(eng, fl, sc, sc.Seed); err != nil {
			return nil, err
		}
	}
	src, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	if err != nil {
		return nil, err
	}
	if opt.PrefetchWorkload {
		src = workloads.Prefetch(src, prefetchBatch, prefetchDepth)
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	fl.SetSpecStream(sim.NewStream(sc.Seed, streams.Speculation))
	if err := fl.Start(src); err != nil {
		return nil, err
	}
	if cols := groupColumns(sc); len(cols) > 0 {
		ranges := make([][2]int, len(cols))
		for i, c := range cols {
			ranges[i] = [2]int{c.first, c.end}
		}
		fl.SetColumns(ranges)
	}
	fl.StartSampling(sim.FromSeconds(sc.Run.SampleIntervalS))
	fl.DrainLimit = sim.FromSeconds(sc.Run.DrainLimitS)
	fl.MaxInFlight = int64(sc.Run.MaxInFlight)
	horizon := sim.Forever
	if sc.Run.HorizonS > 0 {
		horizon = sim.FromSeconds(sc.Run.HorizonS)
	}
	runEngine(eng, horizon, sc.Workload.DurationS, opt.Progress, func() bool { return fl.Truncated || fl.Overloaded() })
	if err := fl.Err(); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	// The run ends at its last request event (arrival, completion,
	// failure), or at the horizon if it cut the run short: the same
	// whichever way the engine was sliced, and whatever the sampling.
	end := rec.LastEvent()
	switch {
	case fl.Truncated || fl.Overloaded():
		end = eng.Now()
	case eng.NextTime() != sim.Forever:
		end = horizon
	}
	for len(fl.Samples) > 0 && fl.Samples[len(fl.Samples)-1].Time > end {
		fl.Samples = fl.Samples[:len(fl.Samples)-1]
	}
	fl.Finish(end)
	res := &Result{Scenario: sc, Fleet: fl, Rec: rec, Events: eng.Fired(), EndTime: end}
	if fl.Overloaded() {
		res.Stopped = fmt.Sprintf("overload: more than %d requests in flight at %.6g s (run.max_in_flight); arrivals outpace service",
			sc.Run.MaxInFlight, fl.OverloadedAt.Seconds())
	}
	if fi != nil {
		r := fi.Report(end)
		res.Failures = failureStats(r, end, sc.Cluster.Replicas)
		res.IdleSpareS = round6(r.IdleSpareNs.Seconds())
		res.SpareRepairS = round6(r.SpareRepairNs.Seconds())
		res.SpareRepairGPUSeconds = round6(r.SpareRepairGPUNs.Seconds())
		for _, ns := range r.IdleSpareNsOf {
			res.IdleSpareSOf = append(res.IdleSpareSOf, ns.Seconds())
		}
		res.DownGPUSeconds = round6(r.DownGPUNs.Seconds())
		res.Timeline = r.Timeline
	}
	if sp := fl.Spot; sp != nil && fi != nil {
		// Both causes: one timeline in time order, each row's GPUs down
		// and capacity those of the replicas down for either.
		res.Timeline = mergeSpotTimeline(res.Timeline, sp.Events, sc, fl, end)
	} else if sp != nil {
		// failures.csv shows the interruptions (the spot timeline alone).
		n, gpus := sc.Cluster.Replicas, 0 // gpus: the spot replicas' GPUs out of service
		for _, e := range sp.Events {
			switch e.Event {
			case "spot-notice":
				gpus += fl.ReplicaTP(e.Replica)
			case "spot-ready":
				gpus -= fl.ReplicaTP(e.Replica)
			}
			res.Timeline = append(res.Timeline, failures.TimelinePoint{Time: e.Time, Event: e.Event, Unit: sc.spotUnit(e),
				GPUsDown: gpus, Capacity: float64(n-e.Down) / float64(n)})
		}
	}
	return res, nil
}

// injectFaults schedules the scenario's [[faults]] on fleet and returns
// their applier.
func injectFaults(eng *sim.Engine, fl *fleet.Fleet, sc *Scenario) (*failures.Applier, error) {
	ap := failures.NewApplier(eng, fl)
	restart := sc.restartColdStart()
	for i, fc := range sc.Faults {
		// A restart's cold start from physics, unless the fault sets its
		// own cold_start_s.
		ap.SetColdStart(nil)
		if restart != nil && !sc.has(fmt.Sprintf("faults.%d.cold_start_s", i)) {
			ap.SetColdStart(fl.RestartColdStart(*restart))
		}
		if err := ap.Inject(fc, sim.NewStream(sc.Seed, streams.Fault(i))); err != nil {
			return nil, err
		}
	}
	return ap, nil
}

// runEngine runs to the horizon, in slices when progress is wanted. The
// slicing does not change the order of events, so results do not depend on
// whether progress is shown.
func runEngine(eng *sim.Engine, horizon sim.Time, durationS float64, progress func(float64), stopped func() bool) {
	if progress == nil || durationS <= 0 {
		eng.Run(horizon)
		if progress != nil {
			progress(1)
		}
		return
	}
	span := sim.FromSeconds(durationS)
	if horizon < span {
		span = horizon
	}
	const slices = 100
	for i := 1; i <= slices; i++ {
		eng.Run(span / slices * sim.Time(i))
		progress(float64(i) / slices)
		if eng.NextTime() == sim.Forever || stopped() {
			return
		}
	}
	eng.Run(horizon)
}
