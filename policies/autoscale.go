package policies

import (
	"errors"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// Autoscaling policy names (AutoscaleConfig.Policy).
const (
	ScaleTarget   = "target"   // target tracking on a load metric
	ScaleSLO      = "slo"      // step scaling on the observed p99 TTFT
	ScaleSchedule = "schedule" // predictive, from the workload's known rate profile
)

// Target-tracking metrics (AutoscaleConfig.Metric).
const (
	MetricOutstanding = "outstanding" // requests waiting + running, per replica
	MetricWaiting     = "waiting"     // requests queued, per replica
	MetricKV          = "kv"          // mean KV-cache utilisation, 0..1
	MetricRate        = "rate"        // arrivals per second, per replica
	MetricTokens      = "tokens"      // tokens still to process (prefill + decode), per replica
	MetricBusy        = "busy"        // mean fraction of the interval spent stepping (GPU utilisation), 0..1
)

var scaleMetrics = []string{MetricBusy, MetricKV, MetricOutstanding, MetricRate, MetricTokens, MetricWaiting}

// AutoscaleConfig is a scenario's [autoscale] table: the policy that
// decides how many replicas the fleet wants, the mechanics (bounds,
// interval, cooldowns, drain) and the cold start of a new replica. The
// fleet's cluster.replicas is the most it can grow to.
type AutoscaleConfig struct {
	// Enabled turns autoscaling on. Default false (a static fleet).
	Enabled bool `toml:"enabled"`
	// Policy is "target" (default), "slo" or "schedule".
	Policy string `toml:"policy"`
	// MinReplicas is the fewest replicas (>= 1). Default 1.
	MinReplicas int `toml:"min_replicas"`
	// InitialReplicas is how many serve at the start (min..cluster.replicas);
	// 0 means MinReplicas. Default 0.
	InitialReplicas int `toml:"initial_replicas"`
	// IntervalS is the time between evaluations, seconds. Default 30
	// (assumption: Kubernetes HPA's default sync period is 15 s; KEDA
	// polls every 30 s).
	IntervalS float64 `toml:"interval_s"`
	// UpCooldownS: after a scale-up, no further scale-up for this long,
	// seconds. Default 60 (assumption, so a cold start can begin to show).
	UpCooldownS float64 `toml:"scale_up_cooldown_s"`
	// DownWindowS is the scale-down stabilisation window, seconds: the
	// fleet shrinks only to the largest size the policy asked for over
	// this window. Default 300 (Kubernetes HPA's default downscale
	// stabilisation window).
	DownWindowS float64 `toml:"scale_down_window_s"`
	// DrainGraceS is how long a scaled-down replica may take to finish what
	// it holds before what is left fails (and may be retried), seconds.
	// Default 60.
	DrainGraceS float64 `toml:"drain_grace_s"`
	// Metric is what "target" tracks: "outstanding" (default), "waiting",
	// "tokens", "rate", "kv" or "busy".
	Metric string `toml:"metric"`
	// Target is the metric's value per replica that "target" aims for (> 0;
	// "kv" and "busy" in (0, 1]): desired = ceil(total / Target) for the
	// per-replica metrics, ceil(active × utilisation / Target) for "kv"
	// and "busy". For
	// "schedule" it is the arrival rate one replica takes, per second.
	// Default 32 (outstanding requests per replica; an assumption to tune
	// per model and SLO, e.g. with `fleetsim size`), and for "kv" and
	// "busy" 0.8 (DefaultTarget); "tokens" has none: it must be set.
	Target float64 `toml:"target"`
	// TTFTP99Ms is "slo"'s target p99 TTFT over an interval, ms (> 0): it
	// adds replicas (a quarter more, at least one) when the p99 is above it
	// and removes one when it is under ScaleDownBelow × it with nothing
	// queued. Default 800 (the mission's sizing example).
	TTFTP99Ms float64 `toml:"ttft_p99_ms"`
	// ScaleDownBelow is "slo"'s scale-down threshold as a fraction of
	// TTFTP99Ms, in (0, 1). Default 0.5.
	ScaleDownBelow float64 `toml:"scale_down_below"`
	// LeadS is how far ahead "schedule" reads the rate profile, seconds
	// (>= 0): it should cover a cold start. Default 300.
	LeadS float64 `toml:"lead_s"`
	// ColdStart is a new replica's start-up time from physics.
	ColdStart fleet.ColdStartConfig `toml:"cold_start"`
}

// DefaultAutoscaleConfig returns the defaults documented on
// AutoscaleConfig (disabled).
func DefaultAutoscaleConfig() AutoscaleConfig {
	return AutoscaleConfig{Policy: ScaleTarget, MinReplicas: 1, IntervalS: 30, UpCooldownS: 60, DownWindowS: 300,
		DrainGraceS: 60, Metric: MetricOutstanding, Target: 32, TTFTP99Ms: 800, ScaleDownBelow: 0.5, LeadS: 300,
		ColdStart: fleet.DefaultColdStart()}
}

// DefaultUtilisationTarget is "kv"'s and "busy"'s target when the scenario
// sets none: 80% (assumption: a fifth of each replica's KV cache or GPU
// time left for the growth of the running sequences and for bursts while a
// new replica cold-starts; the usual 32 is outside their (0, 1] range).
const DefaultUtilisationTarget = 0.8

// DefaultTarget gives Target its default for c's policy and metric, for a
// scenario that does not set it: DefaultUtilisationTarget for "kv" and
// "busy" tracking, 0 (none: Validate asks for one) for "tokens", whose
// scale is the workload's lengths; the others keep 32.
func (c *AutoscaleConfig) DefaultTarget() {
	if c.Policy != ScaleTarget {
		return
	}
	switch c.Metric {
	case MetricKV, MetricBusy:
		c.Target = DefaultUtilisationTarget
	case MetricTokens:
		c.Target = 0
	}
}

// Validate records the problems of c under prefix; maxReplicas is
// cluster.replicas.
func (c *AutoscaleConfig) Validate(prefix string, maxReplicas int, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	Scalers.Validate(k("policy"), c.Policy, ps)
	if c.MinReplicas < 1 || (maxReplicas > 0 && c.MinReplicas > maxReplicas) {
		ps.Add(k("min_replicas"), "must be an integer in [1, cluster.replicas = %d], found %d", maxReplicas, c.MinReplicas)
	}
	if c.InitialReplicas != 0 && (c.InitialReplicas < c.MinReplicas || c.InitialReplicas > maxReplicas) {
		ps.Add(k("initial_replicas"), "must be 0 (min_replicas) or in [min_replicas, cluster.replicas] = [%d, %d], found %d",
			c.MinReplicas, maxReplicas, c.InitialReplicas)
	}
	ps.Positive(k("interval_s"), c.IntervalS)
	ps.NonNegative(k("scale_up_cooldown_s"), c.UpCooldownS)
	ps.NonNegative(k("scale_down_window_s"), c.DownWindowS)
	ps.NonNegative(k("drain_grace_s"), c.DrainGraceS)
	ps.OneOf(k("metric"), c.Metric, scaleMetrics)
	if c.Policy == ScaleTarget && c.Metric == MetricTokens && c.Target == 0 {
		ps.Add(k("target"), "set it with metric = %q: outstanding tokens per replica have no default (their scale is the workload's lengths: e.g. the requests a replica should hold times a request's mean prompt and output tokens)", MetricTokens)
	} else {
		ps.Positive(k("target"), c.Target)
	}
	if c.Policy == ScaleTarget && (c.Metric == MetricKV || c.Metric == MetricBusy) && c.Target > 1 {
		ps.Add(k("target"), "a %s target is a utilisation in (0, 1], found %v", c.Metric, c.Target)
	}
	ps.Positive(k("ttft_p99_ms"), c.TTFTP99Ms)
	if !(c.ScaleDownBelow > 0 && c.ScaleDownBelow < 1) {
		ps.Add(k("scale_down_below"), "must be in (0, 1), found %v", c.ScaleDownBelow)
	}
	ps.NonNegative(k("lead_s"), c.LeadS)
	c.ColdStart.Validate(k("cold_start"), ps)
}

// Params is the autoscaler's mechanics for a fleet of maxReplicas TP-GPU
// replicas whose GPUs each load weightBytesPerGPU.
func (c *AutoscaleConfig) Params(maxReplicas, tp int, weightBytesPerGPU float64) fleet.ScaleParams {
	initial := c.InitialReplicas
	if initial == 0 {
		initial = c.MinReplicas
	}
	return fleet.ScaleParams{Min: c.MinReplicas, Max: maxReplicas, Initial: initial,
		Interval: sim.FromSeconds(c.IntervalS), UpCooldown: sim.FromSeconds(c.UpCooldownS),
		DownWindow: sim.FromSeconds(c.DownWindowS), DrainGrace: sim.FromSeconds(c.DrainGraceS),
		ColdStart: c.ColdStart, WeightBytesPerGPU: weightBytesPerGPU, TP: tp, WatchTTFT: c.Policy == ScaleSLO}
}

// NewScalePolicy builds the policy c names. rateAt is the workload's
// arrival rate at t seconds, which "schedule" reads ahead; nil when the
// workload has no rate profile (a trace).
func NewScalePolicy(c AutoscaleConfig, rateAt func(tS float64) float64) (fleet.ScalePolicy, error) {
	return Scalers.Build(c.Policy, c, Env{Replicas: 1, RateAt: rateAt})
}

// TargetScaler is target tracking: as many replicas as bring the metric
// per replica to Target.
type TargetScaler struct {
	Metric string
	Target float64
}

// Desired implements fleet.ScalePolicy.
func (t TargetScaler) Desired(o fleet.ScaleObs) int {
	var need float64
	switch t.Metric {
	case MetricWaiting:
		need = float64(o.Waiting) / t.Target
	case MetricKV:
		need = float64(o.Active) * o.KVUtilization / t.Target
	case MetricRate:
		need = o.ArrivalRatePerS / t.Target
	case MetricTokens:
		need = float64(o.OutstandingTokens) / t.Target
	case MetricBusy:
		need = float64(o.Active) * o.BusyFraction / t.Target
	default:
		need = float64(o.Outstanding) / t.Target
	}
	return int(math.Ceil(need - 1e-9))
}

// SLOScaler steps on the observed p99 TTFT: a quarter more replicas (at
// least one) when it is over the target, one fewer when it is well under
// and nothing waits, no change when nothing completed.
type SLOScaler struct {
	TTFTP99Ms, DownBelow float64
}

// Desired implements fleet.ScalePolicy.
func (s SLOScaler) Desired(o fleet.ScaleObs) int {
	have := o.Active + o.Starting
	switch {
	case math.IsNaN(o.TTFTP99Ms):
		if o.Waiting > 0 && o.Starting == 0 {
			return have + 1 // requests queue and none completes: starved
		}
		return have
	case o.TTFTP99Ms > s.TTFTP99Ms:
		return have + max(1, have/4)
	case o.TTFTP99Ms < s.DownBelow*s.TTFTP99Ms && o.Waiting == 0:
		return have - 1
	}
	return have
}

// ScheduleScaler is predictive: as many replicas as the workload's known
// rate LeadS seconds from now needs at Target arrivals/s per replica.
type ScheduleScaler struct {
	RateAt       func(tS float64) float64
	LeadS        float64
	PerReplicaPS float64
}

// Desired implements fleet.ScalePolicy.
func (s ScheduleScaler) Desired(o fleet.ScaleObs) int {
	now := o.Now.Seconds()
	// The most the rate reaches between now and the lead, sampled each
	// tenth of the lead (a rising edge inside the window counts).
	peak := s.RateAt(now)
	for i := 1; i <= 10; i++ {
		peak = max(peak, s.RateAt(now+s.LeadS*float64(i)/10))
	}
	return int(math.Ceil(peak/s.PerReplicaPS - 1e-9))
}

func newTargetScaler(c AutoscaleConfig, _ Env) (fleet.ScalePolicy, error) {
	return TargetScaler{Metric: c.Metric, Target: c.Target}, nil
}

func newSLOScaler(c AutoscaleConfig, _ Env) (fleet.ScalePolicy, error) {
	return SLOScaler{TTFTP99Ms: c.TTFTP99Ms, DownBelow: c.ScaleDownBelow}, nil
}

func newScheduleScaler(c AutoscaleConfig, env Env) (fleet.ScalePolicy, error) {
	if env.RateAt == nil {
		return nil, errors.New("policies: the schedule autoscaler needs the workload's rate profile (a generated workload, not a trace)")
	}
	return ScheduleScaler{RateAt: env.RateAt, LeadS: c.LeadS, PerReplicaPS: c.Target}, nil
}
