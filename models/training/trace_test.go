package training

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
)

// TestTraceTimeline: a scripted run (1 spare; host 0 fails at 2.5 h with a
// 3 h repair, host 1 at 3 h while the job restarts, so it waits for spares;
// a 0.8-speed straggler from 6 h to 7 h) traced event by event: progress
// drops to the last checkpoint at a failure, stays flat while stopped,
// checkpoints advance in whole intervals, and the end agrees with Result.
func TestTraceTimeline(t *testing.T) {
	slow := failures.Event{Time: 6 * sim.Hour, Category: "thermal", Mode: failures.ModeFailSlow, Scope: failures.ScopeGPU,
		FirstGPU: 3, GPUs: 1, Repair: sim.Hour, SpeedFraction: 0.8, Precursor: failures.NoPrecursor}
	eng := sim.NewEngine()
	j, err := New(smallConfig(), Deps{Engine: eng, Topology: failures.HGX(4, 4),
		Failures:   &sliceSource{[]failures.Event{fail(9000*sim.Second, 0, 3*sim.Hour), fail(9000*sim.Second+700*sim.Second, 1, 3*sim.Hour), slow}},
		Checkpoint: fixed(sim.Hour), MTBF: 100 * sim.Hour, Rand: sim.NewStream(1, "training")})
	require.NoError(t, err)
	j.Start()
	eng.Run(j.Horizon())
	r := j.Result()
	tr := j.Trace()

	var events []string
	for _, p := range tr {
		events = append(events, p.Event+"/"+p.State)
	}
	require.Equal(t, []string{"start/running", "failure/detecting", "detected/restarting", "failure/detecting",
		"detected/waiting-spares", "repaired/restarting", "restarted/running", "repaired/running",
		"fail-slow/running", "straggler-end/running", "end/running"}, events)

	for i, p := range tr {
		if i > 0 {
			require.GreaterOrEqual(t, p.Time, tr[i-1].Time)
			require.GreaterOrEqual(t, p.CommittedS, tr[i-1].CommittedS, "checkpoints are never lost")
			require.GreaterOrEqual(t, p.Checkpoints, tr[i-1].Checkpoints)
			if tr[i-1].State != "running" {
				require.Equal(t, tr[i-1].WorkS, p.WorkS, "no progress while stopped (%s)", p.Event)
			}
		}
		require.InDelta(t, float64(p.Checkpoints)*3600, p.CommittedS, 1e-6, "whole intervals are committed")
		require.LessOrEqual(t, p.CommittedS, p.WorkS)
		if p.Event == "failure" {
			require.Equal(t, p.CommittedS, p.WorkS, "a failure loses the work since the last checkpoint")
		}
		if i > 0 && tr[i-1].State == "running" {
			require.Greater(t, p.WorkS+p.LostS, tr[i-1].WorkS, "a running job progresses (%s)", p.Event)
		}
	}
	// Two checkpoints (at 1 h and 2 h of compute, +60 s writes) before the
	// failure at 2.5 h.
	require.EqualValues(t, 2, tr[1].Checkpoints)
	// 9000 s of wall time: 7200 s committed, 2 × 60 s of writes, and the
	// 1680 s since the last checkpoint lost.
	require.InDelta(t, 1680, tr[1].LostS, 1e-6)
	require.Equal(t, 0, tr[4].SparesAvailable, "the one spare went to the first restart")
	require.Equal(t, 2, tr[4].HostsOut)
	end := tr[len(tr)-1]
	require.Equal(t, j.Horizon(), end.Time)
	require.InEpsilon(t, r.ProductiveGPUHours, end.WorkS*16/3600, 1e-12)
	require.Equal(t, r.FinalState, end.State)
}
