package scenario

import (
	"fmt"
	"io"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// Resource limits a scenario is checked against before it runs, so that a
// configuration that passes validation cannot exhaust memory instead of
// finishing (docs/reference.md, Limits). Each is tested at the limit and one past
// it (limits_test.go).
const (
	// MaxReplicas is the most replicas in one pool ([cluster] or
	// [fallback]). Measured: 100,000 Llama-3-8B TP=1 replicas take 136 MB
	// and 0.4 s for a 5 s run (fleetsim run, /usr/bin/time); 1e9 was a
	// fatal out-of-memory at once.
	MaxReplicas = 100_000
	// MaxFleetGPUs is the most GPUs in one pool (replicas × tp).
	// Assumption: 2.5 times the largest announced GPU clusters (about
	// 200,000 GPUs in 2025).
	MaxFleetGPUs = 500_000
	// MaxExpectedRequests bounds a generated workload's expected arrivals:
	// arrival.rate_per_s × duration_s (× the horizon when shorter, capped
	// by max_requests). Simulation costs a few µs per request, so 1e8 is
	// minutes per replication; rate_per_s = 1e6 over 600 s grew to 4.4 GB
	// in 25 s.
	MaxExpectedRequests = 100_000_000
	// DefaultMaxInFlight is run.max_in_flight's default: a run whose
	// arrivals outpace service stops ("overload") once this many requests
	// are in flight, instead of growing its queues without bound.
	// Measured: 478 MB peak RSS and 5.4 s to reach 1,000,000 in flight
	// with one Llama-3-8B TP=1 replica under 100,000 req/s (fleetsim run,
	// /usr/bin/time); the built-in scenarios never reach it (their golden
	// summaries are unchanged).
	DefaultMaxInFlight = 1_000_000
	// MaxInFlightLimit bounds run.max_in_flight itself so that a run at
	// the ceiling fits in 2 GB by DefaultMaxInFlight's measured figure
	// (478 MB per 1,000,000 in flight: 4,000,000 is about 1.9 GB). The
	// earlier 1e8 needed about 48 GB (issue 33 item 4).
	MaxInFlightLimit = 4_000_000
)

// checkLimits records the scenario's resource-limit problems.
func (s *Scenario) checkLimits(ps *config.Problems) {
	for _, p := range []struct {
		key      string
		replicas int
		tp       int
		on       bool
	}{
		{"cluster", s.Cluster.Replicas, s.Cluster.TP, true},
		{"fallback", s.Fallback.Replicas, s.Fallback.TP, s.Fallback.Enabled},
	} {
		if !p.on {
			continue
		}
		if p.replicas > MaxReplicas {
			ps.Add(p.key+".replicas", "at most %d replicas in one pool (a hard limit), found %d", MaxReplicas, p.replicas)
		} else if p.tp > 0 && p.replicas > 0 && p.replicas*p.tp > MaxFleetGPUs {
			ps.Add(p.key+".replicas", "%d replicas × tp %d = %d GPUs; at most %d GPUs in one pool (a hard limit)",
				p.replicas, p.tp, p.replicas*p.tp, MaxFleetGPUs)
		}
	}
	if s.Run.MaxInFlight < 1 || s.Run.MaxInFlight > MaxInFlightLimit {
		ps.Add("run.max_in_flight", "must be between 1 and %d, found %d", MaxInFlightLimit, s.Run.MaxInFlight)
	}
	s.checkRequests(ps)
	s.checkTicks(ps)
	s.checkCounts(ps)
}

// checkRequests records a generated workload whose expected requests over
// its span exceed MaxExpectedRequests: every arrival process (a
// "piecewise" profile's integral times its scale, staged rates), times the
// mean turns of a session (workloads.Config.ExpectedRequests), capped by
// max_requests. A "piecewise" profile file is counted once read
// (checkRateProfile calls it again then).
func (s *Scenario) checkRequests(ps *config.Problems) {
	if s.Mode != ModeServing {
		return
	}
	w := &s.Workload
	switch w.Kind {
	case workloads.KindSynthetic, workloads.KindSessions, workloads.KindAgentic:
	default:
		return
	}
	rate := w.Arrival.RatePerS
	if rate > 1e300 && w.Arrival.Process != workloads.ProcessPiecewise {
		ps.Add("workload.arrival.rate_per_s", "%g per s is beyond any fleet; expected requests are limited to %d", rate, MaxExpectedRequests)
		return
	}
	span := w.DurationS
	if d := w.StagesDurationS(); d > 0 {
		span = d
	}
	if s.Run.HorizonS > 0 && (span == 0 || s.Run.HorizonS < span) {
		span = s.Run.HorizonS
	}
	expected, ok := w.ExpectedRequests(span)
	if span == 0 {
		expected, ok = math.Inf(1), true
	}
	if !ok {
		return // a closed loop, or problems that are the workload's own
	}
	byRate := expected
	if w.MaxRequests > 0 && float64(w.MaxRequests) < expected {
		expected = float64(w.MaxRequests)
	}
	// Every client request of a fan-out is that many requests.
	expected *= float64(w.FanOutWidth())
	if expected > MaxExpectedRequests {
		key, what := "workload.arrival.rate_per_s", "rate_per_s"
		switch {
		case w.MaxRequests > 0 && float64(w.MaxRequests) <= byRate || span == 0:
			key, what = "workload.max_requests", "max_requests"
		case len(w.Stages) > 0:
			key, what = "workload.stages", "the stages' rates"
		case w.Arrival.Process == workloads.ProcessPiecewise && len(w.Arrival.Points) > 0:
			key, what = "workload.arrival.points", "the profile's points × scale"
		case w.Arrival.Process == workloads.ProcessPiecewise:
			key, what = "workload.arrival.profile_file", "the profile × scale"
		case w.Sessions.RequestRatePerS > 0:
			key, what = "workload.sessions.request_rate_per_s", "request_rate_per_s"
		case w.Kind != workloads.KindSynthetic:
			what = "rate_per_s × the mean turns per session"
		}
		if w.FanOutWidth() > 1 {
			what += fmt.Sprintf(", × workload.fanout = %d", w.FanOutWidth())
		}
		ps.Add(key, "%.4g expected requests (%s over %g s, or max_requests); at most %d per replication (a hard limit): lower the rate, the duration or max_requests, or split the load over replications",
			expected, what, span, MaxExpectedRequests)
	}
}

// Bounds on the periodic events of a run (issue 33 item 4).
const (
	// MinIntervalS is the shortest period or interval of a periodic event
	// (run.sample_interval_s, autoscale, probe and rollout intervals,
	// a flapping or stalling fault's period_s): 1 ms, finer than any
	// real controller, probe or metrics scrape, so that a tiny value
	// cannot turn a short run into billions of events.
	MinIntervalS = 0.001
	// MaxTicks bounds the events one periodic process fires in one
	// replication (for probes, times the replicas probed): like
	// MaxExpectedRequests, each costs a few µs, so 1e8 is minutes.
	MaxTicks = 100_000_000
)

// SimSpanS is the longest simulated time a replication can take that is
// known before it runs: the workload's span (duration_s, or its stages;
// the horizon when shorter) plus run.drain_limit_s, the time requests may
// still finish after the last arrival (the time series keeps sampling
// through it). ok is false when the span is the trace's own (kind "trace"
// with duration_s 0) or unbounded, and no horizon bounds it.
func (s *Scenario) SimSpanS() (spanS float64, ok bool) {
	w := &s.Workload
	span := w.DurationS
	if d := w.StagesDurationS(); d > 0 {
		span = d
	}
	if span > 0 {
		span += max(s.Run.DrainLimitS, 0)
	}
	if h := s.Run.HorizonS; h > 0 && (span == 0 || h < span) {
		span = h
	}
	if !(span > 0) || math.IsInf(span, 0) {
		return 0, false
	}
	return span, true
}

// checkTicks records a period or interval shorter than MinIntervalS, or
// one that fires more than its bound over the simulated span (SimSpanS):
// MaxSamples time-series samples, MaxTicks of any other periodic event.
func (s *Scenario) checkTicks(ps *config.Problems) {
	span, known := s.SimSpanS()
	s.checkTicksOver(ps, span, known, "the simulated span (workload duration or horizon, plus run.drain_limit_s)")
}

// checkTicksOver is checkTicks over a given simulated span, described by
// spanIs (known false: none is known, so only the lower bounds are
// checked). A key that already has a problem is skipped.
func (s *Scenario) checkTicksOver(ps *config.Problems, span float64, known bool, spanIs string) {
	type tick struct {
		key      string
		interval float64
		times    float64 // events per interval (replicas probed)
		limit    float64
		over     float64 // the span the ticks run over, 0: SimSpanS
		on       bool
	}
	ticks := []tick{
		{"run.sample_interval_s", s.Run.SampleIntervalS, 1, MaxSamples, 0, true},
		{"autoscale.interval_s", s.Autoscale.IntervalS, 1, MaxTicks, 0, s.Autoscale.Enabled},
		{"disagg.autoscale.interval_s", s.Disagg.Autoscale.IntervalS, 1, MaxTicks, 0, s.Disagg.Enabled && s.Disagg.Autoscale.Enabled},
		{"policies.probe.interval_s", s.Policies.Probe.IntervalS, float64(max(s.Cluster.Replicas, 1)), MaxTicks, 0,
			s.Policies.Probe.Kind != "" && s.Policies.Probe.Kind != "none"},
		{"rollout.check_interval_s", s.Rollout.CheckIntervalS, 1, MaxTicks, 0, s.Rollout.Enabled},
	}
	for i, f := range s.Faults {
		if f.Mode == failures.Flap || f.Mode == failures.Stall {
			ticks = append(ticks, tick{fmt.Sprintf("faults.%d.period_s", i), f.PeriodS, 1, MaxTicks, f.DurationS, true})
		}
	}
	for _, t := range ticks {
		if !t.on || !(t.interval > 0) || ps.Has(t.key) {
			continue // not used, or its own problem (must be > 0)
		}
		if t.interval < MinIntervalS {
			ps.Add(t.key, "must be at least %g s (1 ms; a hard limit), found %g", MinIntervalS, t.interval)
			continue
		}
		over, what := t.over, "its duration_s"
		if over == 0 {
			if !known {
				continue // a trace's span: checkTrace reads it
			}
			over, what = span, spanIs
		}
		n := over / t.interval * t.times
		if t.key == "run.sample_interval_s" && t.interval < 1e6 {
			// The run counts its samples exactly: one at 0, then one every
			// interval in whole ns (MaxSamples + 1 in all at most).
			n = math.Floor(over * 1e9 / float64(sim.FromSeconds(t.interval)))
		}
		if n > t.limit {
			ps.Add(t.key, "%g s gives %.3g events over %s of %g s; at most %.0f (a hard limit): raise the interval",
				t.interval, n, what, over, t.limit)
		}
	}
}

// traceSpanS reads a kind "trace" workload's arrivals (as replayed, at its
// rate_multiplier, the first max_requests of them when it is set) and
// returns the last one, seconds: the workload's span when duration_s does
// not bound it. A row that does not parse ends it (the run reports the
// row).
func (s *Scenario) traceSpanS() (float64, error) {
	tc := s.Workload.Trace
	tr, err := workloads.OpenTraceFS(tc.FS, tc.Path, tc.Format, workloads.TraceOptions{RateMultiplier: tc.RateMultiplier})
	if err != nil {
		return 0, err
	}
	defer tr.Close()
	var last sim.Time
	for n := int64(0); s.Workload.MaxRequests <= 0 || n < s.Workload.MaxRequests; n++ {
		r, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		last = r.Arrival
	}
	return last.Seconds(), nil
}

// checkTraceSpan applies the limits that count over the simulated span to
// a trace replayed whole (duration_s 0, no horizon), whose span is the
// trace's own, read before simulating: the periodic events' bounds
// (checkTicksOver, over the trace's span plus run.drain_limit_s), so
// that the run's own guard on its time series never refuses what
// validation accepted, and the failure-rate guard (failures.CheckRate)
// when [failures] is on.
func (s *Scenario) checkTraceSpan(ps *config.Problems) {
	if _, known := s.SimSpanS(); known || s.Workload.DurationS > 0 || s.Run.HorizonS > 0 {
		return
	}
	span, err := s.traceSpanS()
	if err != nil {
		ps.Add("workload.trace.path", "%v", err)
		return
	}
	s.checkTicksOver(ps, span+max(s.Run.DrainLimitS, 0), true, "the trace's span (its last arrival, as replayed) plus run.drain_limit_s")
	f := s.Failures
	if !f.Enabled || !(f.RateMultiplier > 0) || ps.HasPrefix("failures") || span <= 0 {
		return
	}
	prof, err := f.BuildProfile()
	if err != nil {
		return
	}
	if err := f.CheckRate(prof, s.failureGPUs(), span); err != nil {
		ps.Add("failures.rate_multiplier", "%v (the trace's span)", err)
	}
}

// More bounds (issue 33 item 4), each on a count a run holds in memory or
// draws events for.
const (
	// MaxArms bounds [[arms]]: each arm is a whole run of the scenario
	// (× its replications), and the A/B table compares every arm with the
	// first; more arms than this are a sweep (fleetsim sweep).
	MaxArms = 100
	// MaxSystemPrompts bounds workload.system_prompts: every prompt is
	// held in memory (about 64 bytes, plus a Zipf weight), as
	// workload.prompt_pool's 1,000,000.
	MaxSystemPrompts = 1_000_000
	// MaxInterruptionsPerHour bounds spot.interruptions_per_hour: one a
	// second per replica, already shorter than any notice; past it a
	// replica is interrupted again before it can be replaced.
	MaxInterruptionsPerHour = 3600
)

// checkCounts records the counts past MaxArms, MaxSystemPrompts and the
// spot interruptions' bounds (failures.MaxEvents over the simulated span,
// as the failure-rate guard), and an arm that overrides the mode or the
// arms themselves (an A/B compares variants of one run).
func (s *Scenario) checkCounts(ps *config.Problems) {
	if len(s.Arms) > MaxArms {
		ps.Add("arms", "at most %d [[arms]] (a hard limit: each is a whole run), found %d; compare more variants with fleetsim sweep", MaxArms, len(s.Arms))
	}
	for i, a := range s.Arms {
		for _, k := range []string{"mode", "arms"} {
			if _, ok := a[k]; ok {
				ps.Add(fmt.Sprintf("arms.%d.%s", i, k), "an arm cannot set %s: an A/B compares variants of one run (set it in the scenario, outside [[arms]])", k)
			}
		}
	}
	if n := s.Workload.SystemPrompts; n > MaxSystemPrompts {
		ps.Add("workload.system_prompts", "at most %d (a hard limit: every prompt is held in memory), found %d", MaxSystemPrompts, n)
	}
	sp := s.Spot
	if s.SpotReplicas() == 0 && s.DecodeSpotReplicas() == 0 || !(sp.InterruptionsPerHour > 0) {
		return // no spot replicas, or the rate's own problem
	}
	if sp.InterruptionsPerHour > MaxInterruptionsPerHour {
		ps.Add("spot.interruptions_per_hour", "at most %d (one a second per replica; a hard limit), found %g", MaxInterruptionsPerHour, sp.InterruptionsPerHour)
		return
	}
	if span, ok := s.SimSpanS(); ok {
		n := sp.InterruptionsPerHour * float64(s.SpotReplicas()+s.DecodeSpotReplicas()) * span / 3600
		if n > failures.MaxEvents {
			ps.Add("spot.interruptions_per_hour", "%g gives about %.3g interruptions of %d spot replicas over %g s; at most %g (a hard limit, as failures')",
				sp.InterruptionsPerHour, n, s.SpotReplicas()+s.DecodeSpotReplicas(), span, float64(failures.MaxEvents))
		}
	}
}
