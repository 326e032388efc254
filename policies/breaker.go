package policies

import (
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// WindowBreaker is a per-replica circuit breaker over a sliding window of
// outcomes (CALIBRATION.md §6, the seed's settings: a 10 s window, trips on
// an error rate of at least 15% or a p99 latency of at least 3,500 ms with at
// least 20 samples, opens for a 5 s cooldown, then half-open lets a few probe
// requests through and closes once enough of them succeed, ramping its
// share of traffic back up).
type WindowBreaker struct {
	cfg  BreakerConfig
	reps []breakerReplica
}

type outcome struct {
	at  sim.Time
	ok  bool
	lat float64
}

type breakerReplica struct {
	state    fleet.BreakerState
	window   []outcome // in time order
	openTill sim.Time
	// half-open accounting
	admitted, succeeded int
	offered             int
	rampFrom            sim.Time
	lats                []float64
}

var _ fleet.Breaker = (*WindowBreaker)(nil)

// NewWindowBreaker builds breakers for replicas replicas.
func NewWindowBreaker(c BreakerConfig, replicas int) *WindowBreaker {
	return &WindowBreaker{cfg: c, reps: make([]breakerReplica, replicas)}
}

func (b *WindowBreaker) windowNs() sim.Time { return sim.FromSeconds(b.cfg.WindowS) }

// Record implements fleet.Breaker.
func (b *WindowBreaker) Record(i int, now sim.Time, ok bool, latencyMs float64) {
	r := &b.reps[i]
	b.advance(r, now)
	switch r.state {
	case fleet.BreakerOpen:
		return // late answers from before the trip
	case fleet.BreakerHalfOpen:
		if !ok {
			b.trip(r, now)
			return
		}
		r.succeeded++
		if r.succeeded >= b.cfg.HalfOpenProbes {
			r.state = fleet.BreakerClosed
			r.window = r.window[:0]
			r.rampFrom = now
		}
		return
	}
	r.window = append(r.window, outcome{at: now, ok: ok, lat: latencyMs})
	b.expire(r, now)
	if len(r.window) < b.cfg.MinSamples {
		return
	}
	errs := 0
	r.lats = r.lats[:0]
	for _, o := range r.window {
		if !o.ok {
			errs++
		}
		r.lats = append(r.lats, o.lat)
	}
	rate := float64(errs) / float64(len(r.window))
	trip := rate >= b.cfg.ErrorRate
	if !trip && b.cfg.P99Ms > 0 {
		sort.Float64s(r.lats)
		p99 := r.lats[int(math.Ceil(0.99*float64(len(r.lats))))-1]
		trip = p99 >= b.cfg.P99Ms
	}
	if trip {
		b.trip(r, now)
	}
}

func (b *WindowBreaker) trip(r *breakerReplica, now sim.Time) {
	r.state = fleet.BreakerOpen
	r.openTill = now + sim.FromSeconds(b.cfg.CooldownS)
	r.window = r.window[:0]
}

// expire drops outcomes older than the window.
func (b *WindowBreaker) expire(r *breakerReplica, now sim.Time) {
	cut := 0
	for cut < len(r.window) && r.window[cut].at < now-b.windowNs() {
		cut++
	}
	if cut > 0 {
		r.window = append(r.window[:0], r.window[cut:]...)
	}
}

// advance turns an open breaker half-open once its cooldown is over.
func (b *WindowBreaker) advance(r *breakerReplica, now sim.Time) {
	if r.state == fleet.BreakerOpen && now >= r.openTill {
		r.state = fleet.BreakerHalfOpen
		r.admitted, r.succeeded, r.offered = 0, 0, 0
	}
}

// State implements fleet.Breaker.
func (b *WindowBreaker) State(i int, now sim.Time) (fleet.BreakerState, sim.Time) {
	r := &b.reps[i]
	b.advance(r, now)
	if r.state == fleet.BreakerOpen {
		return r.state, r.openTill
	}
	return r.state, 0
}

// Admit implements fleet.Breaker: a half-open replica takes at most
// HalfOpenProbes requests in flight until they succeed.
func (b *WindowBreaker) Admit(i int, now sim.Time) bool {
	r := &b.reps[i]
	b.advance(r, now)
	if r.state != fleet.BreakerHalfOpen {
		return r.state == fleet.BreakerClosed
	}
	if r.admitted-r.succeeded >= b.cfg.HalfOpenProbes {
		return false
	}
	r.admitted++
	return true
}
