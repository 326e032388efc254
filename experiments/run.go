package experiments

import (
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"io"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
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

// testFleetHook, set by tests only, sees each serving run's fleet.
var testFleetHook func(*fleet.Fleet)

// newFleet builds the scenario's serving cluster with its router and
// gateway policies. Warm spares ([failures] spares) are replicas beyond
// cluster.replicas, built like the others; the failures' spare pool
// (models/failures) holds them out of service until needed.
func newFleet(eng *sim.Engine, sc *scenario.Scenario, rec *fleet.Recorder) (*fleet.Fleet, error) {
	cluster := sc.Cluster
	if sc.Failures.Enabled {
		cluster.Replicas += sc.Failures.Spares
	}
	if sc.GroupSpares() > 0 {
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
	if w := sc.Workload; w.Concurrency > 0 || len(w.Stages) > 0 {
		ends, conc := w.ClientStages()
		if w.Concurrency > 0 || ends != nil {
			fl.SetClients(fleet.Clients{Concurrency: w.Concurrency, Think: sim.FromSeconds(w.ThinkTimeS), Until: sim.FromSeconds(w.DurationS),
				StageEnds: ends, StageConcurrency: conc, RampUp: clientRamp(w, fl)})
		}
	}
	if ga, ok := router.(fleet.GroupAwareRouter); ok && len(fl.Pool.Groups) > 0 {
		ga.SetGroups(fl.GroupViews(sc.GroupPrice))
	}
	if sc.Fallback.Enabled {
		// Before disaggregation: the fleet numbers its pools' replicas in
		// order, primary, fallback, decode.
		if err := fl.AddFallback(sc.Catalog(), sc.Fallback.FleetConfig, policies.NewLeastOutstanding(), "fallback"); err != nil {
			return nil, err
		}
	}
	if err := enableDisagg(eng, fl, sc, cluster); err != nil {
		return nil, err
	}
	if sc.KVTiers.Enabled {
		fl.EnableKVTiers(sc.KVTiers, sc.Catalog().GPUs, cluster.GPU)
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
		if pol.DecodeBreaker, err = policies.BuildDecodeBreaker(sc.Policies, len(fl.Disagg.Decode.Replicas)); err != nil {
			return nil, err
		}
	}
	fl.SetPolicies(pol)
	var rateAt func(tS float64) float64 // the workload's rate profile, for "schedule" scaling
	if (sc.Autoscale.Enabled || sc.Disagg.Autoscale.Enabled) && sc.Workload.Kind != workloads.KindTrace {
		if rateAt, err = sc.Workload.Arrival.RateFunc(); err != nil {
			return nil, err
		}
	}
	if ac := sc.Disagg.Autoscale; fl.Disagg != nil && ac.Enabled {
		// The decode pool on its own signal, up to its serving replicas;
		// its warm spares (failures.decode_spares, its last replicas) are
		// outside the autoscaler's range.
		policy, err := policies.NewScalePolicy(ac, rateAt)
		if err != nil {
			return nil, err
		}
		dp := fl.Disagg.Decode
		spares := len(dp.Replicas) - sc.Disagg.Decode.Replicas
		p := ac.Params(sc.Disagg.Decode.Replicas, fl.Disagg.DecodeReplicaTP(), dp.Memory.WeightBytes)
		p.Spares = spares
		if spot := sc.DecodeSpotRange(); spot[0] < spot[1] {
			// Its spot replicas cost less per unit of capacity: the scaler
			// starts them first and drains them last, as it does a fleet
			// of groups' cheapest replicas.
			p.Units = make([]fleet.ScaleUnit, len(dp.Replicas))
			for j := range p.Units {
				p.Units[j] = fleet.ScaleUnit{GPUs: p.TP, WeightBytesPerGPU: p.WeightBytesPerGPU, USDPerHour: float64(p.TP), Capacity: 1}
				if j >= spot[0] && j < spot[1] {
					p.Units[j].USDPerHour *= sc.Spot.PriceFraction
				}
			}
		}
		fl.StartDecodeAutoscaler(p, policy)
	}
	if sc.Autoscale.Enabled {
		ac := sc.Autoscale
		policy, err := policies.NewScalePolicy(ac, rateAt)
		if err != nil {
			return nil, err
		}
		// The run's down replicas are never started, and a rollout's green
		// ones are the rollout's: the fleet grows to the others at most.
		// The warm spares (failures.spares, a group's spares: the last
		// replicas, cluster.Replicas counts them) are outside the
		// autoscaler's range: they stand in for failed serving replicas
		// (fleet.ScaleParams.Spares).
		down, green := sc.DownIndexes(), sc.RolloutGreen()
		spares := cluster.Replicas - sc.Cluster.Replicas
		p := ac.Params(sc.Cluster.Replicas-len(down)-len(green), cluster.GPUsPerReplica(), fl.Memory.WeightBytes)
		p.Down, p.Spares, p.Fixed = down, spares, green
		// A fleet of groups starts its cheapest replicas per capacity
		// first; reserved capacity is paid whether used or not, so
		// provisioning it costs nothing more and it starts first.
		p.Units = fl.ScaleUnits(func(g *fleet.Group) float64 {
			if sc.GroupTier(g.GroupConfig) == scenario.TierReserved {
				return 0
			}
			return sc.GroupPrice(g.GroupConfig)
		})
		if p.Units != nil {
			// Spot replicas cost their price fraction while provisioned:
			// cheaper to start than their group's on-demand ones.
			for _, part := range sc.SpotParts() {
				for i := part.First; i < part.End; i++ {
					p.Units[i].USDPerHour *= sc.Spot.PriceFraction
				}
			}
		}
		fl.StartAutoscaler(p, policy)
	}
	return fl, nil
}

// startRollout arms the scenario's [rollout], if any, on its green
// replicas (scenario.RolloutGreen).
func startRollout(fl *fleet.Fleet, sc *scenario.Scenario) error {
	c := sc.Rollout
	if !c.Enabled {
		return nil
	}
	judge, err := policies.NewRolloutJudge(c)
	if err != nil {
		return err
	}
	fl.StartRollout(c, sc.RolloutGreen(), judge, sim.NewStream(sc.Seed, streams.Rollout))
	return nil
}

// Run simulates the scenario once with its seed.
func Run(sc *scenario.Scenario, opt Options) (*report.Result, error) {
	if sc.Mode == scenario.ModeTraining {
		return runTraining(sc)
	}
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	rec.OnDone = opt.OnDone
	perModelRecorders(sc, rec)
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
	for _, i := range sc.DownIndexes() {
		ap.Remove(i)
	}
	if err := startRollout(fl, sc); err != nil {
		return nil, err
	}
	if len(sc.Serve) > 1 {
		shares := make([]float64, len(sc.Serve))
		for i, c := range sc.Serve {
			shares[i] = c.Share
		}
		fl.SetModelMix(sim.NewStream(sc.Seed, streams.Models), shares)
	}
	if ls, err := sc.ModelLengths(); err != nil {
		return nil, err
	} else if ls != nil {
		fl.SetModelLengths(ls)
	}
	if sc.SpotReplicas() > 0 {
		fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
	}
	if sc.DecodeSpotReplicas() > 0 {
		fl.StartDecodeSpot(sc.DecodeSpotParams(), sim.NewStream(sc.Seed, streams.DecodeSpot))
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
	fl.SetFanOut(sc.Workload.FanOutWidth())
	if err := fl.Start(src); err != nil {
		return nil, err
	}
	if cols := report.GroupColumns(sc); len(cols) > 0 {
		ranges := make([][2]int, len(cols))
		for i, c := range cols {
			ranges[i] = [2]int{c.First, c.End}
		}
		fl.SetColumns(ranges)
	}
	fl.MaxSamples = scenario.MaxSamples + 1 // what merge accepts (partcheck)
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
	res := &report.Result{Scenario: sc, Fleet: fl, Rec: rec, Events: eng.Fired(), EndTime: end}
	report.PriceSamples(res)
	if fl.Overloaded() {
		res.Stopped = fmt.Sprintf("overload: more than %d requests in flight at %.6g s (run.max_in_flight); arrivals outpace service",
			sc.Run.MaxInFlight, fl.OverloadedAt.Seconds())
	}
	if fi != nil {
		r := fi.Report(end)
		res.Failures = report.FailureStatsOf(r, end, sc.Cluster.Replicas)
		res.IdleSpareS = results.Round6(r.IdleSpareNs.Seconds())
		res.SpareRepairS = results.Round6(r.SpareRepairNs.Seconds())
		res.SpareRepairGPUSeconds = results.Round6(r.SpareRepairGPUNs.Seconds())
		for _, ns := range r.IdleSpareNsOf {
			res.IdleSpareSOf = append(res.IdleSpareSOf, ns.Seconds())
		}
		res.DownGPUSeconds = results.Round6(r.DownGPUNs.Seconds())
		res.Timeline = r.Timeline
	}
	if sp := fl.Spot; sp != nil && fi != nil {
		// Both causes: one timeline in time order, each row's GPUs down
		// and capacity those of the replicas down for either.
		res.Timeline = mergeSpotTimeline(res.Timeline, sp.Events, fl.Pool, false, sc.Cluster.Replicas, sc.SpotUnit, end)
	} else if sp != nil {
		// failures.csv shows the interruptions (the spot timeline alone).
		n, gpus := sc.Cluster.Replicas, 0 // gpus: the spot replicas' GPUs out of service
		for _, e := range sp.Events {
			switch e.Event {
			case fleet.SpotNotice:
				gpus += fl.ReplicaTP(e.Replica)
			case fleet.SpotReady:
				gpus -= fl.ReplicaTP(e.Replica)
			}
			res.Timeline = append(res.Timeline, failures.TimelinePoint{Time: e.Time, Event: e.Event, Unit: sc.SpotUnit(e),
				GPUsDown: gpus, Capacity: float64(n-e.Down) / float64(n)})
		}
	}
	if d := fl.Disagg; d != nil && d.Spot != nil {
		// The decode pool's interruptions, with its failures if any: one
		// timeline, each row's capacity its own pool's.
		unit := func(e fleet.SpotEvent) string { return "decode " + e.Unit() }
		res.Timeline = mergeSpotTimeline(res.Timeline, d.Spot.Events, d.Decode, true, sc.Disagg.Decode.Replicas, unit, end)
	}
	return res, nil
}

// injectFaults schedules the scenario's [[faults]] on fleet and returns
// their applier.
func injectFaults(eng *sim.Engine, fl *fleet.Fleet, sc *scenario.Scenario) (*failures.Applier, error) {
	ap := failures.NewApplier(eng, fl)
	restart := sc.RestartColdStart()
	for i, fc := range sc.Faults {
		// A restart's cold start from physics, unless the fault sets its
		// own cold_start_s.
		ap.SetColdStart(nil)
		if restart != nil && !sc.Has(fmt.Sprintf("faults.%d.cold_start_s", i)) {
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
// LimitError is a limit (docs/reference.md, Limits) found exceeded while
// running, where it could not be told before: bad input (exit status 2),
// and nothing is written.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

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

// clientRamp is the time over which a closed loop's clients start
// (workload.client_start, ramp_up_s): ramp_up_s, or, spread by default,
// one request's estimated time on the fleet's first replica at the
// workload's mean lengths (as fleetsim calibrate starts its closed loops);
// 0 for clients started together and for open loops.
func clientRamp(w workloads.Config, fl *fleet.Fleet) sim.Time {
	if !w.ClosedLoop() || w.ClientStart == workloads.ClientStartTogether {
		return 0
	}
	if w.RampUpS > 0 {
		return sim.FromSeconds(w.RampUpS)
	}
	if len(fl.Pool.Replicas) == 0 {
		return 0
	}
	n := w.Concurrency
	if _, conc := w.ClientStages(); len(conc) > 0 {
		n = conc[0]
	}
	m := fl.Pool.Replicas[0].StepModel()
	return sim.FromSeconds(m.ClosedLoopRequestS(w.Input.Mean, w.Output.Mean, float64(n)))
}
