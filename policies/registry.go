package policies

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
)

// Router names, as written in a scenario's router.name.
const (
	RouterRoundRobin       = "round-robin"
	RouterRandom           = "random"
	RouterLeastOutstanding = "least-outstanding"
	RouterP2C              = "p2c"
	RouterLeastKV          = "least-kv"
	RouterPrefixAffinity   = "prefix-affinity"
	RouterWeighted         = "weighted-least-outstanding"
	RouterCacheAware       = "cache-aware" // cacheaware.go
	RouterCostAware        = "cost-aware"  // costaware.go
)

// RouterConfig selects and parameterises the router (a scenario's [router]
// table). Start from DefaultRouterConfig and override what the scenario sets;
// the prefix-affinity fields are validated whatever the name, so a scenario
// can switch routers by changing the name alone.
type RouterConfig struct {
	// Name is the router to use, one of RouterNames(). Default
	// "least-outstanding".
	Name string `toml:"name"`
	// LoadBound is prefix-affinity's capacity factor c (dimensionless,
	// finite, >= 1): no replica takes a request that would put it above
	// ceil(c × (outstanding requests + 1) / available replicas). 1 is
	// perfect balance (little affinity), larger values favour affinity.
	// Default 1.25.
	LoadBound float64 `toml:"load_bound"`
	// PrefixSegments is the number K of leading prefix segments (each 512
	// tokens in a Mooncake trace) that identify a request's affinity key:
	// prefix-affinity hashes segment K (or the last one, if the request has
	// fewer). Integer >= 1. Default 1.
	PrefixSegments int `toml:"prefix_segments"`
	// VirtualNodes is the number of points per replica on prefix-affinity's
	// hash ring (integer >= 1); more points spread keys more evenly and cost
	// 16 bytes each. Default 100.
	VirtualNodes int `toml:"virtual_nodes"`
	// TTFTBudgetMs is cost-aware's TTFT budget, ms (finite, >= 0): a group
	// whose prefill estimate for a request exceeds it does not take the
	// request. 0 means the scenario's slo.ttft_ms (no check when that is 0
	// too). Default 0.
	TTFTBudgetMs float64 `toml:"ttft_budget_ms"`
}

// DefaultRouterConfig returns the default router configuration:
// least-outstanding, with prefix-affinity's LoadBound 1.25 (the value
// Mirrokni et al. 2018 report as a good trade-off), PrefixSegments 1 and
// VirtualNodes 100.
func DefaultRouterConfig() RouterConfig {
	return RouterConfig{
		Name:           RouterLeastOutstanding,
		LoadBound:      1.25,
		PrefixSegments: 1,
		VirtualNodes:   100,
	}
}

// Validate records in ps every problem with c, each keyed by prefix (the
// dotted path of the router table, e.g. "router"; "" for none) and the field's
// TOML key.
func (c *RouterConfig) Validate(prefix string, ps *config.Problems) {
	Routers.Validate(config.Key(prefix, "name"), c.Name, ps)
	if !(c.LoadBound >= 1) || math.IsInf(c.LoadBound, 0) {
		ps.Add(config.Key(prefix, "load_bound"), "must be a finite number >= 1, found %v", c.LoadBound)
	}
	if c.PrefixSegments < 1 {
		ps.Add(config.Key(prefix, "prefix_segments"), "must be an integer >= 1, found %d", c.PrefixSegments)
	}
	if c.VirtualNodes < 1 {
		ps.Add(config.Key(prefix, "virtual_nodes"), "must be an integer >= 1, found %d", c.VirtualNodes)
	}
	if !(c.TTFTBudgetMs >= 0) || math.IsInf(c.TTFTBudgetMs, 0) {
		ps.Add(config.Key(prefix, "ttft_budget_ms"), "must be a finite number >= 0, found %v", c.TTFTBudgetMs)
	}
}

// Env is what a policy's constructor may use beyond its own configuration.
type Env struct {
	// Replicas is the number of replicas in the fleet (>= 1).
	Replicas int
	// RNG is the policy's own named random stream; nil where the caller
	// has none (a constructor that draws refuses nil).
	RNG *rand.Rand
	// RateAt is the workload's arrival rate at t seconds from its start,
	// per second (a predictive autoscaler reads it ahead); nil when the
	// workload has no rate profile (a trace). Configuration never holds
	// it: it is the run's, given when a policy is built.
	RateAt func(tS float64) float64
}

// Registry maps the names of one kind of policy (routers, hedgers,
// breakers, retriers, admitters, probes, rollout judges) to constructors
// that take the kind's configuration table. Every registry is built once, in
// this file, and never modified: adding a policy is its own file plus one
// line in its kind's table below. The valid names a scenario may write are
// derived from the registry (never hand-listed), so a name that passes
// validation always builds.
type Registry[C, T any] struct {
	kind      string
	allowNone bool // "none" is valid and builds nothing (a nil policy)
	entries   map[string]func(C, Env) (T, error)
}

func newRegistry[C, T any](kind string, allowNone bool, entries map[string]func(C, Env) (T, error)) *Registry[C, T] {
	return &Registry[C, T]{kind: kind, allowNone: allowNone, entries: entries}
}

// Names lists the valid names, sorted ("none" among them where allowed).
func (r *Registry[C, T]) Names() []string {
	names := make([]string, 0, len(r.entries)+1)
	for n := range r.entries {
		names = append(names, n)
	}
	if r.allowNone {
		names = append(names, None)
	}
	slices.Sort(names)
	return names
}

// Validate records a problem under key when name is not registered.
func (r *Registry[C, T]) Validate(key, name string, ps *config.Problems) {
	ps.OneOf(key, name, r.Names())
}

// Build constructs the policy name names from cfg. "none" (where allowed)
// gives the zero T (a nil interface: the decision is never taken). An
// unknown name is an error listing the valid ones, never a panic.
func (r *Registry[C, T]) Build(name string, cfg C, env Env) (T, error) {
	var zero T
	if r.allowNone && name == None {
		return zero, nil
	}
	f, ok := r.entries[name]
	if !ok {
		return zero, fmt.Errorf("policies: unknown %s %q; valid names: %s", r.kind, name, strings.Join(r.Names(), ", "))
	}
	return f(cfg, env)
}

// needRNG is the error of a constructor that draws and was given no stream.
func needRNG(kind, name string) error {
	return fmt.Errorf("policies: %s %q needs a random stream, got nil", kind, name)
}

// Routers is the router registry.
var Routers = newRegistry("router", false, map[string]func(RouterConfig, Env) (fleet.Router, error){
	RouterRoundRobin: func(RouterConfig, Env) (fleet.Router, error) { return NewRoundRobin(), nil },
	RouterRandom: func(_ RouterConfig, e Env) (fleet.Router, error) {
		if e.RNG == nil {
			return nil, needRNG("router", RouterRandom)
		}
		return NewRandom(e.RNG), nil
	},
	RouterLeastOutstanding: func(RouterConfig, Env) (fleet.Router, error) { return NewLeastOutstanding(), nil },
	RouterWeighted:         func(RouterConfig, Env) (fleet.Router, error) { return NewWeightedLeastOutstanding(), nil },
	RouterP2C: func(_ RouterConfig, e Env) (fleet.Router, error) {
		if e.RNG == nil {
			return nil, needRNG("router", RouterP2C)
		}
		return NewPowerOfTwo(e.RNG), nil
	},
	RouterLeastKV: func(RouterConfig, Env) (fleet.Router, error) { return NewLeastKV(), nil },
	RouterPrefixAffinity: func(c RouterConfig, e Env) (fleet.Router, error) {
		return NewPrefixAffinity(e.Replicas, c.LoadBound, c.PrefixSegments, c.VirtualNodes)
	},
	RouterCacheAware: func(c RouterConfig, _ Env) (fleet.Router, error) { return NewCacheAware(c.LoadBound), nil },
	RouterCostAware: func(c RouterConfig, _ Env) (fleet.Router, error) {
		return NewCostAware(c.LoadBound, c.TTFTBudgetMs), nil
	},
})

// Hedgers is the hedging-policy registry ([policies.hedge] name).
var Hedgers = newRegistry("hedger", true, map[string]func(HedgeConfig, Env) (fleet.Hedger, error){
	HedgeFixed:    func(c HedgeConfig, _ Env) (fleet.Hedger, error) { return NewDelayHedger(c), nil },
	HedgeAdaptive: func(c HedgeConfig, _ Env) (fleet.Hedger, error) { return NewDelayHedger(c), nil },
	HedgeTied:     func(c HedgeConfig, _ Env) (fleet.Hedger, error) { return NewDelayHedger(c), nil },
})

// Breakers is the circuit-breaker registry ([policies.breaker] name).
var Breakers = newRegistry("breaker", true, map[string]func(BreakerConfig, Env) (fleet.Breaker, error){
	BreakerWindow: func(c BreakerConfig, e Env) (fleet.Breaker, error) { return NewWindowBreaker(c, e.Replicas), nil },
})

// Retriers is the retry-policy registry ([policies.retry] name).
var Retriers = newRegistry("retrier", true, map[string]func(RetryConfig, Env) (fleet.Retrier, error){
	RetryBudgeted: func(c RetryConfig, e Env) (fleet.Retrier, error) {
		if e.RNG == nil {
			return nil, needRNG("retrier", RetryBudgeted)
		}
		return NewBudgetRetrier(c, e.RNG), nil
	},
})

// Admitters is the admission-control registry ([policies.admission] name).
var Admitters = newRegistry("admitter", true, map[string]func(AdmissionConfig, Env) (fleet.Admitter, error){
	AdmitQueue:             func(c AdmissionConfig, _ Env) (fleet.Admitter, error) { return &QueueAdmitter{max: c.Limit}, nil },
	AdmitTokens:            func(c AdmissionConfig, _ Env) (fleet.Admitter, error) { return &TokenAdmitter{max: c.Limit}, nil },
	AdmitKV:                func(c AdmissionConfig, _ Env) (fleet.Admitter, error) { return &KVAdmitter{max: c.Limit}, nil },
	AdmitLatency:           newLatencyAdmitter,
	AdmitLeastLoadedTokens: newLeastLoadedTokensAdmitter,
})

// Probes is the health-probe registry ([policies.probe] kind): a probe
// kind builds the gateway's probe schedule.
var Probes = newRegistry("probe", true, map[string]func(ProbeConfig, Env) (fleet.ProbeConfig, error){
	ProbeLive: func(c ProbeConfig, _ Env) (fleet.ProbeConfig, error) {
		return probeConfig(engine.ProbeLiveness, c), nil
	},
	ProbeDeep: func(c ProbeConfig, _ Env) (fleet.ProbeConfig, error) { return probeConfig(engine.ProbeDeep, c), nil },
})

// RolloutJudges is the canary-judge registry ([rollout] judge).
var RolloutJudges = newRegistry("rollout judge", false, map[string]func(fleet.RolloutConfig, Env) (fleet.RolloutJudge, error){
	fleet.JudgeMargin: func(c fleet.RolloutConfig, _ Env) (fleet.RolloutJudge, error) {
		return MarginJudge{MinSamples: c.MinSamples, ErrorMargin: c.ErrorMargin, P99Ratio: c.P99Ratio}, nil
	},
	fleet.JudgeMannWhitney: func(c fleet.RolloutConfig, _ Env) (fleet.RolloutJudge, error) {
		return MannWhitneyJudge{MinSamples: c.MinSamples, ErrorMargin: c.ErrorMargin, Alpha: c.Alpha, MedianRatio: c.MedianRatio}, nil
	},
})

// RouterNames returns the names of the registered routers, sorted.
func RouterNames() []string { return Routers.Names() }

// NewRouter builds the router cfg names for a fleet of replicas replicas
// (>= 1), drawing any randomness from rng (the caller's named stream; it may
// be nil for routers that do not draw). It returns an error, never panics,
// when cfg is invalid (an unknown name lists the known ones), replicas < 1,
// or the router needs rng and it is nil.
func NewRouter(cfg RouterConfig, replicas int, rng *rand.Rand) (fleet.Router, error) {
	var ps config.Problems
	cfg.Validate("router", &ps)
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("policies: invalid router config: %w", err)
	}
	if replicas < 1 {
		return nil, fmt.Errorf("policies: router %q: replicas must be >= 1, found %d", cfg.Name, replicas)
	}
	return Routers.Build(cfg.Name, cfg, Env{Replicas: replicas, RNG: rng})
}

// Scalers are the autoscaling policies ([autoscale] policy); see
// AutoscaleConfig. Whether autoscaling runs at all is [autoscale] enabled.
var Scalers = newRegistry("autoscale policy", false, map[string]func(AutoscaleConfig, Env) (fleet.ScalePolicy, error){
	ScaleTarget:   newTargetScaler,
	ScaleSLO:      newSLOScaler,
	ScaleSchedule: newScheduleScaler,
})
