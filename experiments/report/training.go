package report

import (
	"github.com/fleetsim/fleetsim/models/training"
)

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
