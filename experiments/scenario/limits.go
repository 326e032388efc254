package scenario

import (
	"github.com/fleetsim/fleetsim/internal/config"
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
	// MaxInFlightLimit bounds run.max_in_flight itself.
	MaxInFlightLimit = 100_000_000
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
	if s.Mode != ModeServing {
		return
	}
	w := s.Workload
	switch w.Kind {
	case workloads.KindSynthetic, workloads.KindSessions, workloads.KindAgentic:
	default:
		return
	}
	rate := w.Arrival.RatePerS
	if !(rate > 0) || rate > 1e300 {
		if rate > 1e300 {
			ps.Add("workload.arrival.rate_per_s", "%g per s is beyond any fleet; expected requests are limited to %d", rate, MaxExpectedRequests)
		}
		return // other problems are the workload's own
	}
	span := w.DurationS
	if s.Run.HorizonS > 0 && (span == 0 || s.Run.HorizonS < span) {
		span = s.Run.HorizonS
	}
	expected := rate * span
	if span == 0 || w.MaxRequests > 0 && float64(w.MaxRequests) < expected {
		expected = float64(w.MaxRequests)
	}
	if expected > MaxExpectedRequests {
		key := "workload.arrival.rate_per_s"
		if span == 0 || w.MaxRequests > 0 && float64(w.MaxRequests) <= rate*span {
			key = "workload.max_requests"
		}
		ps.Add(key, "%.4g expected requests (rate_per_s %g × %g s, or max_requests); at most %d per replication (a hard limit): lower the rate, the duration or max_requests, or split the load over replications",
			expected, rate, span, MaxExpectedRequests)
	}
}
