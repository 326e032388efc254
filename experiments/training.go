package experiments

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/policies"
)

// Scenario modes.
const (
	ModeServing  = "serving"
	ModeTraining = "training"
)

// TrainingScenario is a scenario's [training] table (mode = "training"):
// one synchronous job on a cluster, failing as [failures] says.
type TrainingScenario struct {
	training.Config
	// Checkpoint picks the interval: "daly" (default), "young" or "fixed".
	Checkpoint policies.CheckpointConfig `toml:"checkpoint"`
	// Topology is the cluster the job runs on. Default: 2,048 HGX servers
	// (Llama 3, CALIBRATION.md §1).
	Topology failures.TopologyConfig `toml:"topology"`
	// Stragglers are fail-slow GPUs present from the start for the whole
	// run ([[training.stragglers]]): what one bad GPU costs a job.
	Stragglers []training.Straggler `toml:"stragglers"`
}

// DefaultTrainingScenario is Llama 3's job (training.Llama3PretrainConfig).
func DefaultTrainingScenario() TrainingScenario {
	return TrainingScenario{Config: training.Llama3PretrainConfig(), Checkpoint: policies.DefaultCheckpointConfig(),
		Topology: failures.DefaultTopologyConfig()}
}

// Validate records problems under prefix.
func (t *TrainingScenario) Validate(prefix string, ps *config.Problems) {
	t.Config.Validate(prefix, ps)
	t.Checkpoint.Validate(prefix+".checkpoint", ps)
	t.Topology.Validate(prefix+".topology", ps)
	for i := range t.Stragglers {
		t.Stragglers[i].Validate(fmt.Sprintf("%s.stragglers.%d", prefix, i), t.GPUs, ps)
	}
}

// TrainingStats is summary.json's training block.
type TrainingStats struct {
	training.Result
	// LostUSDPerMonth is the lost GPU-hours' cost scaled to a 720-hour
	// month (CALIBRATION.md §6: "$6.5/h and 720 h").
	LostUSDPerMonth float64 `json:"lost_usd_per_month"`
	// SlowdownUSDPerMonth is the part of it due to stragglers.
	SlowdownUSDPerMonth float64 `json:"slowdown_usd_per_month"`
	// Unconfirmed lists the unconfirmed (U) figures the run rests on: the
	// profile's U notes and the job's assumed eviction times.
	Unconfirmed []string `json:"unconfirmed,omitempty"`
}

// runTraining simulates one replication of a training scenario.
func runTraining(sc *Scenario) (*Result, error) {
	t := sc.Training
	prof, err := sc.Failures.BuildProfile()
	if err != nil {
		return nil, err
	}
	mult := sc.Failures.RateMultiplier
	if !sc.Failures.Enabled {
		mult = 0
	}
	pol, err := policies.NewCheckpointPolicy(t.Checkpoint)
	if err != nil {
		return nil, err
	}
	run, err := training.Simulate(training.Spec{Config: t.Config, Topology: t.Topology.Topology(), Profile: prof,
		RateMultiplier: mult, Stragglers: t.Stragglers, Checkpoint: pol, Seed: sc.Seed})
	if err != nil {
		return nil, err
	}
	r := run.Result
	month := ratio(HoursPerMonth, r.WallHours)
	ts := &TrainingStats{Result: r, LostUSDPerMonth: round6(r.LostUSD * month),
		SlowdownUSDPerMonth: round6(r.Lost.Slowdown * r.PricePerGPUHour * month)}
	if mult > 0 {
		for _, n := range prof.Notes {
			if strings.HasPrefix(n, "U:") {
				ts.Unconfirmed = append(ts.Unconfirmed, n)
			}
		}
	}
	if t.EvictStragglers {
		ts.Unconfirmed = append(ts.Unconfirmed, fmt.Sprintf("U: a straggler is seen %g–%g s after it begins "+
			"(training.straggler_detection_*_s; no published figure for MFU-decline detection)", t.StragglerDetectionMinS, t.StragglerDetectionMaxS))
	}
	if t.OverEvictHosts > 0 {
		ts.Unconfirmed = append(ts.Unconfirmed, fmt.Sprintf("U: an over-evicted healthy host is back after %g s "+
			"(training.over_evict_return_s; no published figure)", t.OverEvictReturnS))
	}
	return &Result{Scenario: sc, Events: run.Events, EndTime: run.Horizon, Training: ts, TrainingTrace: run.Trace}, nil
}
