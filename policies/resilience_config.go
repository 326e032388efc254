package policies

import (
	"math"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// Policy names.
const (
	None          = "none"
	HedgeFixed    = "fixed"
	HedgeAdaptive = "adaptive"
	HedgeTied     = "tied"
	BreakerWindow = "sliding-window"
	RetryBudgeted = "budgeted"
	AdmitQueue    = "queue"
	AdmitTokens   = "tokens"
	AdmitKV       = "kv"
	AdmitLatency  = "latency"
	ProbeLive     = "liveness"
	ProbeDeep     = "deep"
)

// ResilienceConfig is a scenario's [policies] table: the gateway's stack.
// The order they apply in is fixed (see models/policy.go): admission,
// routing around open breakers, hedge timer and client timeout; on a failed
// copy, the breaker's record, then the retry decision; probes run on their
// own clock.
type ResilienceConfig struct {
	// TimeoutS is the client timeout in seconds: a request that has not
	// streamed its first token by then fails and its copies are withdrawn.
	// 0 (default): none.
	TimeoutS float64 `toml:"timeout_s"`
	// TotalTimeoutS fails a request not finished by then, streaming or
	// not. 0 (default): none.
	TotalTimeoutS float64         `toml:"total_timeout_s"`
	Hedge         HedgeConfig     `toml:"hedge"`
	Breaker       BreakerConfig   `toml:"breaker"`
	Retry         RetryConfig     `toml:"retry"`
	Admission     AdmissionConfig `toml:"admission"`
	Probe         ProbeConfig     `toml:"probe"`
	Queue         QueueConfig     `toml:"queue"`
}

// Binding names ([policies.queue] binding) and queue orders.
const (
	BindEarly          = "early"
	BindLate           = "late"
	OrderFIFO          = "fifo"
	OrderShortestFirst = "shortest-prompt"
)

// QueueConfig is [policies.queue]: when the gateway binds a request to a
// replica (fleet.QueuePolicy).
type QueueConfig struct {
	// Binding: "early" (default: route on arrival; requests wait in the
	// replicas' queues) or "late" (hold requests at the gateway while no
	// replica has a free slot; send the next when one frees).
	Binding string `toml:"binding"`
	// Order of the late-binding queue: "fifo" (default) or
	// "shortest-prompt" (fewest prompt tokens first, then arrival).
	Order string `toml:"order"`
	// SlotsPerReplica is what "a free slot" counts against: 0 (default)
	// uses each replica's max_seqs, so the gateway sends no more than a
	// replica can batch.
	SlotsPerReplica int `toml:"slots_per_replica"`
	// MaxQueued sheds a request that arrives to find this many waiting at
	// the gateway. 0 (default): no cap but run.max_in_flight.
	MaxQueued int `toml:"max_queued"`
	// RecheckMs is how often a waiting queue is re-checked when no request
	// ends (replicas recovering or added free slots without a completion).
	// Default 50 (assumption: a gateway's flow-control loop runs every few
	// tens of ms; a completion wakes it at once).
	RecheckMs float64 `toml:"recheck_ms"`
}

// HedgeConfig is [policies.hedge].
type HedgeConfig struct {
	// Name: "none" (default), "fixed" (hedge after DelayMs), "adaptive"
	// (after the running Quantile of recent TTFTs), "tied" (send two copies
	// at once; the loser is withdrawn when the winner starts).
	Name string `toml:"name"`
	// DelayMs is the fixed delay, and the adaptive one until MinSamples
	// TTFTs are in. Default 800 (the seed's p95 TTFT trigger,
	// CALIBRATION.md §6).
	DelayMs float64 `toml:"delay_ms"`
	// Quantile of recent TTFTs an adaptive hedger waits for. Default 0.95
	// (Tail at Scale, CALIBRATION.md §5).
	Quantile float64 `toml:"quantile"`
	// Window is how many recent TTFTs the adaptive quantile uses. Default 1000.
	Window int `toml:"window"`
	// MinSamples before the adaptive delay is used. Default 100.
	MinSamples int `toml:"min_samples"`
	// Budget caps hedges as a fraction of requests, 0..1. Default 0.05
	// (CALIBRATION.md §5: ~5% extra load).
	Budget float64 `toml:"budget"`
	// OnlyStalled hedges a request only when the replica holding it has
	// gone silent (hung: no token from any stream on it) for StallMs: a
	// copy that is merely slow (a long prompt, a busy replica) is not
	// duplicated. Default false (Tail at Scale's blind hedge).
	OnlyStalled bool `toml:"only_stalled"`
	// StallMs is how long a replica must have been silent, ms >= 0. Default
	// 0: silent at the moment the hedge delay expires.
	StallMs float64 `toml:"stall_ms"`
	// PerPromptLength: an adaptive hedger takes its quantile over the
	// TTFTs of prompts of about the request's length (power-of-two buckets
	// of prompt tokens, each its own Window, used once it has MinSamples),
	// so a long prompt is not hedged for being long. Default true (issue
	// 12: a quantile of all TTFTs mostly hedged long prompts, and their
	// duplicated prefills cost the typical request's TTFT); false takes
	// it over all TTFTs (Tail at Scale's rule as written).
	PerPromptLength bool `toml:"per_prompt_length"`
}

// BreakerConfig is [policies.breaker]. Defaults: the seed's breaker,
// CALIBRATION.md §6.
type BreakerConfig struct {
	// Name: "none" (default) or "sliding-window".
	Name string `toml:"name"`
	// WindowS is the sliding window in seconds. Default 10.
	WindowS float64 `toml:"window_s"`
	// ErrorRate trips the breaker at or above this fraction of errors.
	// Default 0.15.
	ErrorRate float64 `toml:"error_rate"`
	// P99Ms trips it when the window's p99 latency reaches this; 0 turns the
	// latency rule off. Default 3500.
	P99Ms float64 `toml:"p99_ms"`
	// MinSamples in the window before it may trip. Default 20.
	MinSamples int `toml:"min_samples"`
	// CooldownS is how long it stays open. Default 5. Must not exceed the
	// window.
	CooldownS float64 `toml:"cooldown_s"`
	// HalfOpenProbes is how many requests a half-open breaker lets through
	// at once, and how many must succeed to close it. Default 5.
	HalfOpenProbes int `toml:"half_open_probes"`
}

// RetryConfig is [policies.retry].
type RetryConfig struct {
	// Name: "none" (default) or "budgeted".
	Name string `toml:"name"`
	// MaxAttempts is the most copies a request gets, first try included.
	// Default 3.
	MaxAttempts int `toml:"max_attempts"`
	// Budget caps retries as a fraction of requests, 0..1. Default 0.1.
	Budget float64 `toml:"budget"`
	// BackoffBaseMs and BackoffMaxMs shape exponential backoff with full
	// jitter. Defaults 50 and 2000.
	BackoffBaseMs float64 `toml:"backoff_base_ms"`
	BackoffMaxMs  float64 `toml:"backoff_max_ms"`
}

// AdmissionConfig is [policies.admission].
type AdmissionConfig struct {
	// Name: "none" (default), "queue" (waiting requests per replica),
	// "tokens" (outstanding tokens per replica), "kv" (mean KV use) — the
	// leading indicators — or "latency" (observed p99 TTFT, lagging).
	Name string `toml:"name"`
	// Limit is the threshold in the indicator's unit: requests, tokens, a
	// fraction, or milliseconds. Default 0 (must be set when Name is set).
	Limit float64 `toml:"limit"`
	// WindowS is the lagging indicator's window. Default 10.
	WindowS float64 `toml:"window_s"`
	// Action on refusal: "shed" (default: count it shed at once) or
	// "defer" (hold it at the gateway and ask again every DeferMs, up to
	// DeferMax times, then shed).
	Action   string  `toml:"action"`
	DeferMs  float64 `toml:"defer_ms"`  // default 200
	DeferMax int     `toml:"defer_max"` // default 10
}

// ProbeConfig is [policies.probe].
type ProbeConfig struct {
	// Kind: "none" (default), "liveness" (fails only if the process is
	// dead: a zombie passes) or "deep" (a canned inference that fails on
	// hangs, slow answers and HBM pressure).
	Kind string `toml:"kind"`
	// IntervalS between probes of a replica. Default 5 (Meta RSC runs
	// health checks every 5 min for training; serving probes are faster —
	// assumption).
	IntervalS float64 `toml:"interval_s"`
	// TimeoutMs: a deep probe slower than this fails. Default 2000.
	TimeoutMs float64 `toml:"timeout_ms"`
	// FailuresToEject consecutive failures take the replica out of
	// rotation for a restart. Default 2.
	FailuresToEject int `toml:"failures_to_eject"`
	// KVPressure is the KV use above which a deep probe fails. Default 0.98.
	KVPressure float64 `toml:"kv_pressure"`
	// RestartS is the restart (process or reboot) after an ejection.
	// Default 60.
	RestartS float64 `toml:"restart_s"`
	// ColdStartS is the weight loading after a restart. Default 180 (the
	// seeds' 2–4 min, CALIBRATION.md §4 and §6).
	ColdStartS float64 `toml:"cold_start_s"`
}

// DefaultResilienceConfig has every policy off, with the documented
// parameters ready for when a name is set.
func DefaultResilienceConfig() ResilienceConfig {
	return ResilienceConfig{
		Hedge:     HedgeConfig{Name: None, DelayMs: 800, Quantile: 0.95, Window: 1000, MinSamples: 100, Budget: 0.05, PerPromptLength: true},
		Breaker:   BreakerConfig{Name: None, WindowS: 10, ErrorRate: 0.15, P99Ms: 3500, MinSamples: 20, CooldownS: 5, HalfOpenProbes: 5},
		Retry:     RetryConfig{Name: None, MaxAttempts: 3, Budget: 0.1, BackoffBaseMs: 50, BackoffMaxMs: 2000},
		Admission: AdmissionConfig{Name: None, WindowS: 10, Action: "shed", DeferMs: 200, DeferMax: 10},
		Probe:     ProbeConfig{Kind: None, IntervalS: 5, TimeoutMs: 2000, FailuresToEject: 2, KVPressure: 0.98, RestartS: 60, ColdStartS: 180},
		Queue:     QueueConfig{Binding: BindEarly, Order: OrderFIFO, RecheckMs: 50},
	}
}

// Validate records every problem under prefix (e.g. "policies").
func (c *ResilienceConfig) Validate(prefix string, ps *config.Problems) {
	k := func(s string) string { return config.Key(prefix, s) }
	ps.NonNegative(k("timeout_s"), c.TimeoutS)
	ps.NonNegative(k("total_timeout_s"), c.TotalTimeoutS)
	h := c.Hedge
	Hedgers.Validate(k("hedge.name"), h.Name, ps)
	ps.NonNegative(k("hedge.stall_ms"), h.StallMs)
	if h.OnlyStalled && h.Name == HedgeTied {
		ps.Add(k("hedge.only_stalled"), "does not apply to tied requests (both copies go at once)")
	}
	ps.Positive(k("hedge.delay_ms"), h.DelayMs)
	if h.Quantile <= 0 || h.Quantile >= 1 || math.IsNaN(h.Quantile) {
		ps.Add(k("hedge.quantile"), "must be between 0 and 1 (exclusive), found %v", h.Quantile)
	}
	ps.PositiveInt(k("hedge.window"), h.Window)
	ps.PositiveInt(k("hedge.min_samples"), h.MinSamples)
	if h.MinSamples > h.Window {
		ps.Add(k("hedge.min_samples"), "must not exceed hedge.window (%d), found %d", h.Window, h.MinSamples)
	}
	budget(ps, k("hedge.budget"), h.Budget)
	b := c.Breaker
	Breakers.Validate(k("breaker.name"), b.Name, ps)
	ps.Positive(k("breaker.window_s"), b.WindowS)
	ps.Fraction(k("breaker.error_rate"), b.ErrorRate)
	ps.NonNegative(k("breaker.p99_ms"), b.P99Ms)
	ps.PositiveInt(k("breaker.min_samples"), b.MinSamples)
	ps.Positive(k("breaker.cooldown_s"), b.CooldownS)
	if b.CooldownS > b.WindowS {
		ps.Add(k("breaker.window_s"), "the window (%g s) must not be shorter than the cooldown (%g s)", b.WindowS, b.CooldownS)
	}
	ps.PositiveInt(k("breaker.half_open_probes"), b.HalfOpenProbes)
	r := c.Retry
	Retriers.Validate(k("retry.name"), r.Name, ps)
	ps.PositiveInt(k("retry.max_attempts"), r.MaxAttempts)
	budget(ps, k("retry.budget"), r.Budget)
	ps.Positive(k("retry.backoff_base_ms"), r.BackoffBaseMs)
	ps.Positive(k("retry.backoff_max_ms"), r.BackoffMaxMs)
	a := c.Admission
	Admitters.Validate(k("admission.name"), a.Name, ps)
	if a.Name != None {
		ps.Positive(k("admission.limit"), a.Limit)
	}
	if a.Name == AdmitKV && a.Limit > 1 {
		ps.Add(k("admission.limit"), "a KV utilisation limit must be at most 1, found %v", a.Limit)
	}
	ps.Positive(k("admission.window_s"), a.WindowS)
	ps.OneOf(k("admission.action"), a.Action, []string{"defer", "shed"})
	ps.Positive(k("admission.defer_ms"), a.DeferMs)
	ps.PositiveInt(k("admission.defer_max"), a.DeferMax)
	p := c.Probe
	Probes.Validate(k("probe.kind"), p.Kind, ps)
	ps.Positive(k("probe.interval_s"), p.IntervalS)
	ps.Positive(k("probe.timeout_ms"), p.TimeoutMs)
	ps.PositiveInt(k("probe.failures_to_eject"), p.FailuresToEject)
	ps.Fraction(k("probe.kv_pressure"), p.KVPressure)
	ps.NonNegative(k("probe.restart_s"), p.RestartS)
	ps.NonNegative(k("probe.cold_start_s"), p.ColdStartS)
	q := c.Queue
	ps.OneOf(k("queue.binding"), q.Binding, []string{BindEarly, BindLate})
	ps.OneOf(k("queue.order"), q.Order, []string{OrderFIFO, OrderShortestFirst})
	if q.SlotsPerReplica < 0 {
		ps.Add(k("queue.slots_per_replica"), "must be >= 0 (0: each replica's max_seqs), found %d", q.SlotsPerReplica)
	}
	if q.MaxQueued < 0 {
		ps.Add(k("queue.max_queued"), "must be >= 0 (0: no cap), found %d", q.MaxQueued)
	}
	ps.Positive(k("queue.recheck_ms"), q.RecheckMs)
	if q.RecheckMs > 0 && (q.RecheckMs < 1 || q.RecheckMs > 3.6e6) {
		ps.Add(k("queue.recheck_ms"), "must be between 1 ms (a hard limit, as every interval) and 3,600,000 (an hour), found %g", q.RecheckMs)
	}
}

func budget(ps *config.Problems, key string, v float64) {
	if math.IsNaN(v) || v < 0 || v > 1 {
		ps.Add(key, "a budget is a fraction of requests between 0 and 1, found %v", v)
	}
}

// BuildDecodeBreaker builds the breaker of a disaggregated fleet's decode
// pool of replicas replicas: c's [policies.breaker] settings with its own
// state (fleet.Policies.DecodeBreaker); nil without a breaker.
func BuildDecodeBreaker(c ResilienceConfig, replicas int) (fleet.Breaker, error) {
	return Breakers.Build(c.Breaker.Name, c.Breaker, Env{Replicas: replicas})
}

// BuildResilience turns a validated configuration into the gateway's
// policies, each built by its kind's registry; rng is the retry jitter's
// own stream.
func BuildResilience(c ResilienceConfig, replicas int, rng *rand.Rand) (fleet.Policies, error) {
	var p fleet.Policies
	p.TimeoutNs = sim.FromSeconds(c.TimeoutS)
	p.TotalTimeoutNs = sim.FromSeconds(c.TotalTimeoutS)
	env := Env{Replicas: replicas}
	var err error
	if p.Hedge, err = Hedgers.Build(c.Hedge.Name, c.Hedge, env); err != nil {
		return p, err
	}
	if p.Breaker, err = Breakers.Build(c.Breaker.Name, c.Breaker, env); err != nil {
		return p, err
	}
	if p.Retry, err = Retriers.Build(c.Retry.Name, c.Retry, Env{Replicas: replicas, RNG: rng}); err != nil {
		return p, err
	}
	if c.Admission.Action == "defer" {
		p.DeferNs, p.DeferMax = sim.FromSeconds(c.Admission.DeferMs/1000), c.Admission.DeferMax
	}
	if p.Admit, err = Admitters.Build(c.Admission.Name, c.Admission, env); err != nil {
		return p, err
	}
	if p.Probe, err = Probes.Build(c.Probe.Kind, c.Probe, env); err != nil {
		return p, err
	}
	if q := c.Queue; q.Binding == BindLate {
		p.Queue = fleet.QueuePolicy{Late: true, ShortestFirst: q.Order == OrderShortestFirst, Slots: q.SlotsPerReplica,
			MaxQueued: q.MaxQueued, RecheckNs: sim.FromSeconds(q.RecheckMs / 1000)}
	}
	return p, nil
}

// probeConfig is the gateway's probe schedule of a given kind.
func probeConfig(kind engine.ProbeKind, c ProbeConfig) fleet.ProbeConfig {
	return fleet.ProbeConfig{Kind: kind, IntervalNs: sim.FromSeconds(c.IntervalS),
		TimeoutNs: sim.FromSeconds(c.TimeoutMs / 1000), FailuresToEject: c.FailuresToEject,
		KVPressure: c.KVPressure, RestartNs: sim.FromSeconds(c.RestartS),
		ColdStartNs: sim.FromSeconds(c.ColdStartS)}
}
