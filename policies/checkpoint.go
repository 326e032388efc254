package policies

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/sim"
)

// Checkpoint policy names, as written in a scenario's
// training.checkpoint.policy.
const (
	CheckpointFixed = "fixed"
	CheckpointYoung = "young"
	CheckpointDaly  = "daly"
)

// CheckpointConfig selects the checkpoint-interval policy (a scenario's
// [training.checkpoint] table).
type CheckpointConfig struct {
	// Policy is one of CheckpointPolicyNames(). Default "daly".
	Policy string `toml:"policy"`
	// IntervalS is the fixed interval in seconds of compute (policy
	// "fixed"), > 0. Default 3,600 (an assumption: no CALIBRATION.md row).
	IntervalS float64 `toml:"interval_s"`
}

// DefaultCheckpointConfig is Daly's interval (CALIBRATION.md §1).
func DefaultCheckpointConfig() CheckpointConfig {
	return CheckpointConfig{Policy: CheckpointDaly, IntervalS: 3600}
}

// Validate records every problem of c under prefix.
func (c *CheckpointConfig) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(config.Key(prefix, "policy"), c.Policy, CheckpointPolicyNames())
	if c.Policy == CheckpointFixed {
		ps.Positive(config.Key(prefix, "interval_s"), c.IntervalS)
		if c.IntervalS > 100*365*86400 {
			ps.Add(config.Key(prefix, "interval_s"), "must be at most 100 years, found %v", c.IntervalS)
		}
	}
}

// checkpointFactories is the checkpoint-policy registry, built once here.
var checkpointFactories = map[string]func(CheckpointConfig) (training.CheckpointPolicy, error){
	CheckpointFixed: func(c CheckpointConfig) (training.CheckpointPolicy, error) {
		return FixedInterval{Interval: sim.FromSeconds(c.IntervalS)}, nil
	},
	CheckpointYoung: func(CheckpointConfig) (training.CheckpointPolicy, error) { return Young{}, nil },
	CheckpointDaly:  func(CheckpointConfig) (training.CheckpointPolicy, error) { return Daly{}, nil },
}

// CheckpointPolicyNames returns the registered policy names, sorted.
func CheckpointPolicyNames() []string {
	names := make([]string, 0, len(checkpointFactories))
	for n := range checkpointFactories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewCheckpointPolicy builds the policy cfg names, or returns an error (an
// unknown name lists the known ones).
func NewCheckpointPolicy(cfg CheckpointConfig) (training.CheckpointPolicy, error) {
	var ps config.Problems
	cfg.Validate("checkpoint", &ps)
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("policies: invalid checkpoint config: %w", err)
	}
	f, ok := checkpointFactories[cfg.Policy]
	if !ok { // unreachable after Validate
		return nil, fmt.Errorf("policies: unknown checkpoint policy %q; valid names: %s", cfg.Policy, strings.Join(CheckpointPolicyNames(), ", "))
	}
	return f(cfg)
}

// FixedInterval checkpoints every Interval of compute.
type FixedInterval struct{ Interval sim.Time }

// CheckpointInterval returns f.Interval.
func (f FixedInterval) CheckpointInterval(_, _ sim.Time) sim.Time { return f.Interval }

// Young is Young's first-order optimum τ = √(2δM) (CALIBRATION.md §1).
type Young struct{}

// CheckpointInterval returns YoungInterval(mtbf, writeTime).
func (Young) CheckpointInterval(mtbf, writeTime sim.Time) sim.Time {
	return YoungInterval(mtbf, writeTime)
}

// Daly is Daly's (2006) higher-order optimum (CALIBRATION.md §1).
type Daly struct{}

// CheckpointInterval returns DalyInterval(mtbf, writeTime).
func (Daly) CheckpointInterval(mtbf, writeTime sim.Time) sim.Time {
	return DalyInterval(mtbf, writeTime)
}

var (
	_ training.CheckpointPolicy = FixedInterval{}
	_ training.CheckpointPolicy = Young{}
	_ training.CheckpointPolicy = Daly{}
)

// minInterval is the floor of the computed intervals (a write time of 0
// would give 0).
const minInterval = sim.Second

// YoungInterval is √(2·δ·M) for checkpoint cost δ = writeTime and MTBF M,
// at least one second.
func YoungInterval(mtbf, writeTime sim.Time) sim.Time {
	d, m := writeTime.Seconds(), mtbf.Seconds()
	return clampInterval(math.Sqrt(2 * d * m))
}

// DalyInterval is Daly's higher-order optimum: for δ < 2M,
// √(2δM)·[1 + ⅓√(δ/2M) + (1/9)(δ/2M)] − δ, else M; at least one second.
// It reproduces Daly's examples for δ = 5 min: M = 24 h → 117 min,
// M = 6 h → 57 min, M = 15 min → 9.1 min.
func DalyInterval(mtbf, writeTime sim.Time) sim.Time {
	d, m := writeTime.Seconds(), mtbf.Seconds()
	if d >= 2*m {
		return clampInterval(m)
	}
	x := d / (2 * m)
	return clampInterval(math.Sqrt(2*d*m)*(1+math.Sqrt(x)/3+x/9) - d)
}

func clampInterval(s float64) sim.Time {
	if !(s < 1e9) { // about 30 years; also NaN
		s = 1e9
	}
	return max(sim.FromSeconds(s), minInterval)
}
