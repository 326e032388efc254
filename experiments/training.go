package experiments

import (
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/policies"
)

// runTraining simulates one replication of a training scenario.
func runTraining(sc *scenario.Scenario) (*report.Result, error) {
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
	month := report.Ratio(report.HoursPerMonth, r.WallHours)
	ts := &report.TrainingStats{Result: r, LostUSDPerMonth: results.Round6(r.LostUSD * month),
		SlowdownUSDPerMonth: results.Round6(r.Lost.Slowdown * r.PricePerGPUHour * month)}
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
	return &report.Result{Scenario: sc, Events: run.Events, EndTime: run.Horizon, Training: ts, TrainingTrace: run.Trace}, nil
}
