package fleet

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// The gateway's decision points besides routing. Each is a small interface
// the gateway calls with a read-only view; implementations live in package
// policies. A nil policy means the decision is never taken (no hedging, no
// breaker, ...). The gateway applies them in this order to a new request:
// admission, routing (skipping replicas whose breaker is open), the hedge
// timer and the client timeout; to a failed copy: the breaker's record,
// then the retry decision.

// Admitter decides whether a new request enters the fleet. A refusal is
// counted as shed, never silently dropped.
type Admitter interface {
	Admit(req *workloads.Request, replicas []engine.ReplicaState, now sim.Time) bool
	// Observe sees every completed request's TTFT (ms), for policies that
	// act on observed latency (lagging indicators).
	Observe(now sim.Time, ttftMs float64)
}

// Hedger decides when to send a backup copy of a request that has not
// streamed its first token yet.
type Hedger interface {
	// Delay is how long after sending the primary to wait for a first
	// token before hedging; ok=false sends no hedge.
	Delay(now sim.Time) (delay sim.Time, ok bool)
	// Allow is asked when the delay has passed: whether the hedge budget
	// lets this hedge go (it counts it if so).
	Allow(now sim.Time) bool
	// Observe sees every primary sent (for the budget) and every first
	// token (for adaptive delays): ttftMs < 0 means a primary was sent.
	Observe(now sim.Time, ttftMs float64)
	// Tied reports whether copies are sent together and the loser is
	// withdrawn when the winner starts (tied requests) rather than on the
	// first token after a delay.
	Tied() bool
}

// PromptHedger is a Hedger whose delay depends on the request's prompt
// length: the gateway asks DelayFor instead of Delay and reports first
// tokens to ObserveFor instead of Observe (primaries sent still go to
// Observe with ttftMs < 0). A long prompt is slow by nature; a delay taken
// from all TTFTs hedges it for being long, not for being stuck. ObserveFor
// gets the winning copy's own TTFT, from when that copy was sent: a
// request rescued by its hedge reports the hedge's TTFT, not the delay
// plus it, which would raise the quantile each time hedges win.
type PromptHedger interface {
	DelayFor(now sim.Time, promptTokens int32) (sim.Time, bool)
	ObserveFor(now sim.Time, promptTokens int32, ttftMs float64)
}

// StallHedger is a Hedger that hedges only a request whose copies all sit
// on replicas that have gone silent (Replica.StalledFor) for at least
// StallDelay: a copy on a replica that is making progress, however slowly,
// is not duplicated, so hedging spends no work on requests that are merely
// long.
type StallHedger interface {
	Hedger
	// StallDelay is how long a replica must have been silent; ok=false
	// hedges whatever the replicas do.
	StallDelay() (d sim.Time, ok bool)
}

// BreakerState is a replica's circuit-breaker state.
type BreakerState uint8

// Breaker states.
const (
	BreakerClosed BreakerState = iota
	BreakerOpen
	BreakerHalfOpen
)

// Breaker keeps a circuit breaker per replica.
type Breaker interface {
	// Record an outcome of a copy served by replica: ok false for an error
	// or timeout; latencyMs is its time to first token (or to the failure).
	Record(replica int, now sim.Time, ok bool, latencyMs float64)
	// State at now and, when it will change by time alone (an open
	// breaker's cooldown), when: the gateway looks again then.
	State(replica int, now sim.Time) (BreakerState, sim.Time)
	// Admit is asked for a request routed to a half-open replica: whether it
	// may go (probe traffic ramping up); it counts it if so.
	Admit(replica int, now sim.Time) bool
}

// Retrier decides whether a failed request is tried again.
type Retrier interface {
	// Retry is asked when the last live copy of a request fails after
	// attempts copies: the backoff before the next try, or ok=false to
	// fail the request. It enforces the retry budget.
	Retry(attempts int, reason string, now sim.Time) (backoff sim.Time, ok bool)
	// Observe sees every new request (for the budget).
	Observe(now sim.Time)
}

// PrecursorPolicy decides whether a precursor signal (correctable-ECC
// counts rising before an HBM double-bit error, a GPU running hot before a
// thermal failure) drains the replica before the failure it announces.
type PrecursorPolicy interface {
	// Drain is asked at the precursor, lead before the failure (unknown to
	// a real operator; a policy should not use it to cheat, only to model
	// how much warning its signal gives).
	Drain(component string) bool
}
