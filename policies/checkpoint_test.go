package policies

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

func minutes(t sim.Time) float64 { return t.Seconds() / 60 }

// TestDalyExamples reproduces Daly's (2006) examples for δ = 5 min
// (CALIBRATION.md §1).
func TestDalyExamples(t *testing.T) {
	tests := []struct {
		mtbf     sim.Time
		wantMin  float64
		tolerMin float64
	}{
		{24 * sim.Hour, 117, 0.5},
		{6 * sim.Hour, 57, 0.5},
		{15 * sim.Minute, 9.1, 0.05},
	}
	for _, tt := range tests {
		got := minutes(DalyInterval(tt.mtbf, 5*sim.Minute))
		assert.InDelta(t, tt.wantMin, got, tt.tolerMin, "M = %v", tt.mtbf)
		assert.InDelta(t, got, minutes(Daly{}.CheckpointInterval(tt.mtbf, 5*sim.Minute)), 1e-9)
	}
	// δ >= 2M: checkpoint every M.
	assert.Equal(t, 2*sim.Minute, DalyInterval(2*sim.Minute, 5*sim.Minute))
}

func TestYoung(t *testing.T) {
	// √(2 · 5 min · 24 h) = 120 min.
	assert.InDelta(t, 120, minutes(YoungInterval(24*sim.Hour, 5*sim.Minute)), 1e-9)
	assert.InDelta(t, 60, minutes(Young{}.CheckpointInterval(6*sim.Hour, 5*sim.Minute)), 1e-9)
	// Daly is below Young by about δ for δ ≪ M.
	y, d := YoungInterval(24*sim.Hour, 5*sim.Second), DalyInterval(24*sim.Hour, 5*sim.Second)
	assert.InDelta(t, y.Seconds()-5, d.Seconds(), 2)
	// A free checkpoint still gets a positive interval.
	assert.Equal(t, sim.Second, YoungInterval(sim.Hour, 0))
	assert.Equal(t, sim.Second, DalyInterval(sim.Hour, 0))
}

func TestCheckpointRegistry(t *testing.T) {
	assert.Equal(t, []string{"daly", "fixed", "young"}, CheckpointPolicyNames())
	for _, n := range CheckpointPolicyNames() {
		c := DefaultCheckpointConfig()
		c.Policy = n
		p, err := NewCheckpointPolicy(c)
		require.NoError(t, err, n)
		assert.Greater(t, p.CheckpointInterval(3*sim.Hour, 7*sim.Second), sim.Time(0), n)
	}
	p, err := NewCheckpointPolicy(CheckpointConfig{Policy: CheckpointFixed, IntervalS: 900})
	require.NoError(t, err)
	assert.Equal(t, 15*sim.Minute, p.CheckpointInterval(sim.Hour, sim.Minute))
	_, err = NewCheckpointPolicy(CheckpointConfig{Policy: "sometimes"})
	assert.EqualError(t, err, `policies: invalid checkpoint config: checkpoint.policy: unknown name "sometimes"; valid names: daly, fixed, young`)
	_, err = NewCheckpointPolicy(CheckpointConfig{Policy: CheckpointFixed})
	assert.ErrorContains(t, err, "checkpoint.interval_s: must be a finite number > 0, found 0")
}

func TestCheckpointConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		c    CheckpointConfig
		want []config.Problem
	}{
		{"default", DefaultCheckpointConfig(), nil},
		{"interval unread by daly", CheckpointConfig{Policy: CheckpointDaly, IntervalS: -1}, nil},
		{"fixed negative", CheckpointConfig{Policy: CheckpointFixed, IntervalS: -1},
			[]config.Problem{{Key: "training.checkpoint.interval_s", Msg: "must be a finite number > 0, found -1"}}},
		{"fixed NaN", CheckpointConfig{Policy: CheckpointFixed, IntervalS: math.NaN()},
			[]config.Problem{{Key: "training.checkpoint.interval_s", Msg: "must be a finite number > 0, found NaN"}}},
		{"unknown", CheckpointConfig{Policy: "often"},
			[]config.Problem{{Key: "training.checkpoint.policy", Msg: `unknown name "often"; valid names: daly, fixed, young`}}},
	}
	for _, tt := range tests {
		var ps config.Problems
		tt.c.Validate("training.checkpoint", &ps)
		assert.Equal(t, tt.want, ps.List, tt.name)
	}
}
