package fleet

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// RolloutConfig is a scenario's [rollout] table: a blue-green deployment of
// a new model version. NewReplicas replicas of the cluster are the green
// pool (the scenario's RolloutGreen: the last serving ones, of each group
// in a fleet of groups); at StartS they load the new weights and run a dry-run
// inference, then take a growing share of traffic, step by step, while the
// judge compares them with the blue pool and rolls back at once when the new
// version is worse by a margin.
type RolloutConfig struct {
	// Enabled turns the rollout on. Default false.
	Enabled bool `toml:"enabled"`
	// StartS is when the green pool starts loading, seconds. Default 60.
	StartS float64 `toml:"start_s"`
	// NewReplicas is the green pool's size (the last serving replicas of
	// the cluster, or of each group; the others are blue). Default 1.
	NewReplicas int `toml:"new_replicas"`
	// Steps are the traffic splits "BLUE:GREEN" (each summing to 100), one
	// per StepS. Default ["95:5", "80:20", "0:100"] (the seed's canary,
	// CALIBRATION.md §6).
	Steps []string `toml:"steps"`
	// StepS is how long each step lasts before the next, seconds. Default
	// 100 (the seed's three steps over 5 minutes).
	StepS float64 `toml:"step_s"`
	// LoadS and DryRunS: the green pool loads weights, then passes a
	// dry-run inference, before any traffic. Defaults 180 (CALIBRATION.md
	// §4: 2–4 min) and 5 (assumption).
	LoadS   float64 `toml:"load_s"`
	DryRunS float64 `toml:"dry_run_s"`
	// The new version: SlowFactor multiplies its step times (1: as fast);
	// ErrorRate is the fraction of its requests that fail (a broken build
	// answers 5xx). Defaults 1 and 0.
	SlowFactor float64 `toml:"slow_factor"`
	ErrorRate  float64 `toml:"error_rate"`
	// CheckIntervalS is how often the judge compares the pools; WindowS the
	// outcomes it looks at. Defaults 1 and 30.
	CheckIntervalS float64 `toml:"check_interval_s"`
	WindowS        float64 `toml:"window_s"`
	// The judge (policies.MarginJudge) rolls back when, with at least
	// MinSamples green outcomes in the window, the green error rate exceeds
	// blue's by ErrorMargin, or (with 5 × MinSamples in each pool) green's
	// p99 TTFT exceeds blue's × P99Ratio.
	// Defaults 20, 0.05, 1.5 (assumptions).
	MinSamples  int     `toml:"min_samples"`
	ErrorMargin float64 `toml:"error_margin"`
	P99Ratio    float64 `toml:"p99_ratio"`
	// Judge is "margin" (the rule above) or "mann-whitney": roll back only
	// on a statistically significant regression, at level Alpha per check,
	// that is also large enough to matter: green's error rate above blue's
	// by ErrorMargin (one-sided two-proportion z-test), or green's TTFTs
	// stochastically larger (one-sided Mann–Whitney U test) with a median
	// above blue's × MedianRatio (Kayenta-style canary analysis).
	// Defaults "margin", 0.001 (checks every second over a sliding window
	// are correlated tests: a small per-check level keeps the run's false
	// rollbacks rare; assumption), 1.1 (assumption).
	Judge       string  `toml:"judge"`
	Alpha       float64 `toml:"alpha"`
	MedianRatio float64 `toml:"median_ratio"`
}

// Rollout judges.
const (
	JudgeMargin      = "margin"
	JudgeMannWhitney = "mann-whitney"
)

// DefaultRolloutConfig is off, with the seed's canary ready.
func DefaultRolloutConfig() RolloutConfig {
	return RolloutConfig{StartS: 60, NewReplicas: 1, Steps: []string{"95:5", "80:20", "0:100"}, StepS: 100,
		LoadS: 180, DryRunS: 5, SlowFactor: 1, CheckIntervalS: 1, WindowS: 30, MinSamples: 20, ErrorMargin: 0.05, P99Ratio: 1.5,
		Judge: JudgeMargin, Alpha: 0.001, MedianRatio: 1.1}
}

// Validate records problems under prefix.
func (c *RolloutConfig) Validate(prefix string, replicas int, ps *config.Problems) {
	ps.NonNegative(config.Key(prefix, "start_s"), c.StartS)
	if c.NewReplicas < 1 || c.NewReplicas >= replicas {
		ps.Add(config.Key(prefix, "new_replicas"), "must be between 1 and cluster.replicas−1 (%d), found %d", replicas-1, c.NewReplicas)
	}
	if len(c.Steps) == 0 {
		ps.Add(config.Key(prefix, "steps"), "needs at least one step such as \"95:5\"")
	}
	for i, st := range c.Steps {
		if _, err := ParseSplit(st); err != nil {
			ps.Add(config.Key(prefix, "steps"), "step %d: %v", i, err)
		}
	}
	ps.Positive(config.Key(prefix, "step_s"), c.StepS)
	ps.NonNegative(config.Key(prefix, "load_s"), c.LoadS)
	ps.NonNegative(config.Key(prefix, "dry_run_s"), c.DryRunS)
	if !(c.SlowFactor >= 1) || math.IsInf(c.SlowFactor, 0) {
		ps.Add(config.Key(prefix, "slow_factor"), "must be a finite number >= 1, found %v", c.SlowFactor)
	}
	ps.Fraction(config.Key(prefix, "error_rate"), c.ErrorRate)
	ps.Positive(config.Key(prefix, "check_interval_s"), c.CheckIntervalS)
	ps.Positive(config.Key(prefix, "window_s"), c.WindowS)
	ps.PositiveInt(config.Key(prefix, "min_samples"), c.MinSamples)
	ps.Fraction(config.Key(prefix, "error_margin"), c.ErrorMargin)
	if !(c.P99Ratio >= 1) || math.IsInf(c.P99Ratio, 0) {
		ps.Add(config.Key(prefix, "p99_ratio"), "must be a finite number >= 1, found %v", c.P99Ratio)
	}
	// The judge's name is checked against policies.RolloutJudges, where
	// the judges are registered.
	if !(c.Alpha > 0 && c.Alpha < 0.5) {
		ps.Add(config.Key(prefix, "alpha"), "must be between 0 and 0.5 (exclusive), found %v", c.Alpha)
	}
	if !(c.MedianRatio >= 1) || math.IsInf(c.MedianRatio, 0) {
		ps.Add(config.Key(prefix, "median_ratio"), "must be a finite number >= 1, found %v", c.MedianRatio)
	}
}

// ParseSplit parses "BLUE:GREEN" percentages summing to 100 and returns the
// green share.
func ParseSplit(s string) (float64, error) {
	var b, g float64
	var rest string
	n, err := sscanSplit(s, &b, &g, &rest)
	if err != nil || n != 2 || rest != "" || b < 0 || g < 0 || math.Abs(b+g-100) > 1e-9 {
		return 0, errSplit(s)
	}
	return g / 100, nil
}

// PoolStats are one pool's outcomes in the judge's window.
type PoolStats struct {
	Requests  int
	Errors    int
	P99TTFTMs float64
	// TTFTMs are the successful requests' TTFTs in the window, sorted
	// ascending; valid only during the judge's call.
	TTFTMs []float64
}

// RolloutJudge decides whether the new version must be rolled back.
type RolloutJudge interface {
	Rollback(green, blue PoolStats) bool
}

// RolloutStats reports a rollout.
type RolloutStats struct {
	State         string  `json:"state"` // "not started", "loading", "in progress", "completed", "rolled back"
	GreenRequests int64   `json:"green_requests"`
	GreenErrors   int64   `json:"green_errors"`
	FirstTrafficS float64 `json:"first_traffic_s"`
	RolledBackS   float64 `json:"rolled_back_s"` // when the rollback happened (0: none)
	DetectionS    float64 `json:"detection_s"`   // rollback − first green traffic
	CompletedS    float64 `json:"completed_s"`   // when the last step began (0: not reached)
}

type outcomeAt struct {
	at    sim.Time
	err   bool
	ttftM float64
}

// rollout is the fleet's blue-green state: which replicas are green, the
// traffic split, the judge's windows. The gateway asks it which pool a new
// request may go to and tells it every outcome.
type rollout struct {
	eng    *sim.Engine
	pool   *Pool
	busy   func() bool // the fleet still has work: keep judging
	cfg    RolloutConfig
	judge  RolloutJudge
	rng    *rand.Rand
	green  []bool
	share  float64
	sent   [2]int64 // blue, green routed while a split is active
	step   int
	stats  RolloutStats
	window [2][]outcomeAt
	done   bool
}

// StartRollout arms a blue-green rollout of the primary pool's replicas
// green (its green pool: ascending indices, others blue); call before
// Start. The green replicas are held out of service (HoldRollout) until
// their new version is loaded, and again after a rollback; other
// mechanisms hold them with their own holds meanwhile (a spot
// interruption, a failure, a probe's restart), and a restart or a spot
// replacement runs the new version too (Replica.SetBuild).
func (f *Fleet) StartRollout(c RolloutConfig, green []int, judge RolloutJudge, rng *rand.Rand) {
	p := f.Pool
	n := len(p.Replicas)
	ro := &rollout{eng: p.eng, pool: p, busy: f.busy, cfg: c, judge: judge, rng: rng, green: make([]bool, n),
		stats: RolloutStats{State: "not started"}}
	for _, i := range green {
		ro.green[i] = true
		p.Hold(i, HoldRollout) // not loaded yet
	}
	f.Gateway.ro = ro
	start := sim.FromSeconds(c.StartS)
	ro.eng.Schedule(start, sim.PriorityNormal, func(now sim.Time) {
		ro.stats.State = "loading"
		ready := now + sim.FromSeconds(c.LoadS+c.DryRunS)
		ro.eng.Schedule(ready, sim.PriorityNormal, func(now sim.Time) {
			for i := range ro.green {
				if ro.green[i] {
					p.Replicas[i].SetBuild(c.SlowFactor)
					p.Release(i, HoldRollout)
				}
			}
			ro.stats.State = "in progress"
			ro.stats.FirstTrafficS = now.Seconds()
			ro.nextStep(now)
			ro.eng.Schedule(now+sim.FromSeconds(c.CheckIntervalS), sim.PriorityNormal, ro.check)
		})
	})
}

// Rollout reports the rollout, or nil if there is none.
func (f *Fleet) Rollout() *RolloutStats {
	if f.Gateway.ro == nil {
		return nil
	}
	return &f.Gateway.ro.stats
}

func (ro *rollout) nextStep(now sim.Time) {
	if ro.done {
		return
	}
	ro.share, _ = ParseSplit(ro.cfg.Steps[ro.step])
	ro.sent = [2]int64{}
	if ro.step == len(ro.cfg.Steps)-1 {
		ro.stats.CompletedS = now.Seconds()
		if ro.share == 1 {
			ro.stats.State = "completed"
		}
		return
	}
	ro.step++
	ro.eng.Schedule(now+sim.FromSeconds(ro.cfg.StepS), sim.PriorityNormal, ro.nextStep)
}

func (ro *rollout) check(now sim.Time) {
	if ro.done {
		return
	}
	var ps [2]PoolStats
	for p := 0; p < 2; p++ {
		w := ro.window[p]
		cut := 0
		for cut < len(w) && w[cut].at < now-sim.FromSeconds(ro.cfg.WindowS) {
			cut++
		}
		w = append(w[:0], w[cut:]...)
		ro.window[p] = w
		var lat []float64
		for _, o := range w {
			ps[p].Requests++
			if o.err {
				ps[p].Errors++
			} else {
				lat = append(lat, o.ttftM)
			}
		}
		if len(lat) > 0 {
			sort.Float64s(lat)
			ps[p].P99TTFTMs = lat[int(math.Ceil(0.99*float64(len(lat))))-1]
		}
		ps[p].TTFTMs = lat
	}
	if ro.judge != nil && ro.judge.Rollback(ps[1], ps[0]) {
		ro.done = true
		ro.share = 0
		ro.stats.State = "rolled back"
		ro.stats.RolledBackS = now.Seconds()
		ro.stats.DetectionS = now.Seconds() - ro.stats.FirstTrafficS
		for i := range ro.green {
			if ro.green[i] {
				ro.pool.Hold(i, HoldRollout)
			}
		}
		return
	}
	if !ro.busy() {
		return
	}
	ro.eng.Schedule(now+sim.FromSeconds(ro.cfg.CheckIntervalS), sim.PriorityNormal, ro.check)
}

// split says which pool a new request goes to: green when the green pool is
// behind its share (deterministic, no coin flips), and hides the other pool
// from the router. It returns the replicas hidden. A nil rollout hides
// nothing.
func (ro *rollout) split(hidden []int) []int {
	if ro == nil || ro.stats.State == "not started" || ro.stats.State == "loading" || ro.done && ro.share == 0 {
		return hidden
	}
	total := ro.sent[0] + ro.sent[1] + 1
	green := float64(ro.sent[1]+1) <= ro.share*float64(total)+1e-9
	if green {
		ro.sent[1]++
	} else {
		ro.sent[0]++
	}
	states := ro.pool.states
	for i, g := range ro.green {
		if g != green && states[i].Available {
			states[i].Available = false
			ro.pool.fixIndex(i)
			hidden = append(hidden, i)
		}
	}
	return hidden
}

// outcome records a finished copy for the judge; it reports whether the
// new version turns it into an error.
func (ro *rollout) outcome(replica int, now sim.Time, ttftMs float64) (fail bool) {
	if replica < 0 || replica >= len(ro.green) || ro.stats.State != "in progress" && ro.stats.State != "completed" {
		return false
	}
	pool := 0
	if ro.green[replica] {
		pool = 1
		ro.stats.GreenRequests++
		if ro.cfg.ErrorRate > 0 && ro.rng.Float64() < ro.cfg.ErrorRate {
			fail = true
			ro.stats.GreenErrors++
		}
	}
	ro.window[pool] = append(ro.window[pool], outcomeAt{at: now, err: fail, ttftM: ttftMs})
	return fail
}

// failed records a copy that failed on replica, for the judge.
func (ro *rollout) failed(replica int, now sim.Time) {
	if replica < 0 || replica >= len(ro.green) || ro.stats.State != "in progress" && ro.stats.State != "completed" {
		return
	}
	pool := 0
	if ro.green[replica] {
		pool = 1
		ro.stats.GreenRequests++
		ro.stats.GreenErrors++
	}
	ro.window[pool] = append(ro.window[pool], outcomeAt{at: now, err: true})
}
