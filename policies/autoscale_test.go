package policies

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

func TestTargetScaler(t *testing.T) {
	o := fleet.ScaleObs{Active: 4, Outstanding: 33, Waiting: 9, KVUtilization: 0.75, ArrivalRatePerS: 40,
		OutstandingTokens: 100_001, BusyFraction: 0.9}
	require.Equal(t, 5, TargetScaler{MetricOutstanding, 8}.Desired(o)) // ⌈33/8⌉
	require.Equal(t, 3, TargetScaler{MetricWaiting, 4}.Desired(o))     // ⌈9/4⌉
	require.Equal(t, 6, TargetScaler{MetricKV, 0.5}.Desired(o))        // ⌈4·0.75/0.5⌉
	require.Equal(t, 5, TargetScaler{MetricRate, 8}.Desired(o))        // exactly 40/8: no extra replica
	require.Equal(t, 11, TargetScaler{MetricTokens, 1e4}.Desired(o))   // ⌈100001/10⁴⌉
	require.Equal(t, 6, TargetScaler{MetricBusy, 0.6}.Desired(o))      // ⌈4·0.9/0.6⌉ = ⌈6⌉
}

func TestSLOScaler(t *testing.T) {
	s := SLOScaler{TTFTP99Ms: 800, DownBelow: 0.5}
	o := fleet.ScaleObs{Active: 8, Starting: 1}
	o.TTFTP99Ms = 900
	require.Equal(t, 11, s.Desired(o), "+25% of 9")
	o.TTFTP99Ms = 300
	require.Equal(t, 8, s.Desired(o), "well under: one fewer")
	o.Waiting = 3
	require.Equal(t, 9, s.Desired(o), "something queues: hold")
	o.TTFTP99Ms, o.Starting = math.NaN(), 0
	require.Equal(t, 9, s.Desired(o), "nothing completed and requests wait: starved, add one")
}

func TestScheduleScaler(t *testing.T) {
	ramp := func(tS float64) float64 { return tS / 10 } // 1 req/s more every 10 s
	s := ScheduleScaler{RateAt: ramp, LeadS: 100, PerReplicaPS: 2}
	require.Equal(t, 10, s.Desired(fleet.ScaleObs{Now: 100 * sim.Second}), "reads the peak 100 s ahead: 20 req/s")
	_, err := NewScalePolicy(AutoscaleConfig{Policy: ScaleSchedule}, nil)
	require.ErrorContains(t, err, "rate profile")
}
