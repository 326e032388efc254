package policies

import (
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// Admission control. Leading indicators look at the fleet's state now
// (queued requests, outstanding tokens, KV use) and shed before latency
// suffers; the lagging indicator sheds once observed TTFT is already bad.
// Shed requests are counted by the gateway, never dropped silently.

// QueueAdmitter sheds when the waiting requests per available replica
// exceed a limit (leading).
type QueueAdmitter struct{ max float64 }

// TokenAdmitter sheds when outstanding tokens per available replica exceed
// a limit (leading).
type TokenAdmitter struct{ max float64 }

// KVAdmitter sheds when the mean KV utilisation of available replicas
// exceeds a limit (leading).
type KVAdmitter struct{ max float64 }

// LatencyAdmitter sheds while the p99 TTFT of requests completed in the
// last window exceeds a limit (lagging).
type LatencyAdmitter struct {
	maxMs  float64
	window sim.Time
	recent []ttftAt
	lats   []float64
	p99    float64
	stale  bool
}

func newLatencyAdmitter(c AdmissionConfig, _ Env) (fleet.Admitter, error) {
	return &LatencyAdmitter{maxMs: c.Limit, window: sim.FromSeconds(c.WindowS)}, nil
}

type ttftAt struct {
	at sim.Time
	ms float64
}

var (
	_ fleet.Admitter = (*QueueAdmitter)(nil)
	_ fleet.Admitter = (*TokenAdmitter)(nil)
	_ fleet.Admitter = (*KVAdmitter)(nil)
	_ fleet.Admitter = (*LatencyAdmitter)(nil)
)

func available(rs []engine.ReplicaState) int {
	n := 0
	for i := range rs {
		if rs[i].Available {
			n++
		}
	}
	return n
}

// Admit implements fleet.Admitter.
func (a *QueueAdmitter) Admit(_ *workloads.Request, rs []engine.ReplicaState, _ sim.Time) bool {
	n, w := 0, 0
	for i := range rs {
		if rs[i].Available {
			n++
			w += rs[i].Waiting
		}
	}
	return n > 0 && float64(w)/float64(n) < a.max
}

// Observe implements fleet.Admitter.
func (a *QueueAdmitter) Observe(sim.Time, float64) {}

// Admit implements fleet.Admitter.
func (a *TokenAdmitter) Admit(_ *workloads.Request, rs []engine.ReplicaState, _ sim.Time) bool {
	n := 0
	var tok int64
	for i := range rs {
		if rs[i].Available {
			n++
			tok += rs[i].OutstandingTokens
		}
	}
	return n > 0 && float64(tok)/float64(n) < a.max
}

// Observe implements fleet.Admitter.
func (a *TokenAdmitter) Observe(sim.Time, float64) {}

// Admit implements fleet.Admitter.
func (a *KVAdmitter) Admit(_ *workloads.Request, rs []engine.ReplicaState, _ sim.Time) bool {
	n := 0
	var u float64
	for i := range rs {
		if rs[i].Available {
			n++
			u += rs[i].KVUtilization
		}
	}
	return n > 0 && u/float64(n) < a.max
}

// Observe implements fleet.Admitter.
func (a *KVAdmitter) Observe(sim.Time, float64) {}

// Admit implements fleet.Admitter.
func (a *LatencyAdmitter) Admit(_ *workloads.Request, rs []engine.ReplicaState, now sim.Time) bool {
	if available(rs) == 0 {
		return false
	}
	a.expire(now)
	if a.stale {
		a.lats = a.lats[:0]
		for _, r := range a.recent {
			a.lats = append(a.lats, r.ms)
		}
		sort.Float64s(a.lats)
		a.p99 = 0
		if len(a.lats) >= 20 {
			a.p99 = a.lats[int(math.Ceil(0.99*float64(len(a.lats))))-1]
		}
		a.stale = false
	}
	return a.p99 <= a.maxMs
}

// Observe implements fleet.Admitter.
func (a *LatencyAdmitter) Observe(now sim.Time, ttftMs float64) {
	a.recent = append(a.recent, ttftAt{now, ttftMs})
	a.expire(now)
	a.stale = true
}

func (a *LatencyAdmitter) expire(now sim.Time) {
	cut := 0
	for cut < len(a.recent) && a.recent[cut].at < now-a.window {
		cut++
	}
	if cut > 0 {
		a.recent = append(a.recent[:0], a.recent[cut:]...)
		a.stale = true
	}
}
