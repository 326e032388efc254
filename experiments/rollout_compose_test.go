package experiments

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// rolloutSrc is a small fleet with a quick rollout of its last new
// replicas, and extra.
func rolloutSrc(replicas, newReplicas int, extra string) string {
	return fmt.Sprintf(`name = "rollout-compose"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = %d
[cluster.replica.perf]
profile = "legacy"
[workload]
duration_s = 900
[workload.arrival]
rate_per_s = 20
[cost]
power = false
[rollout]
enabled = true
start_s = 30
new_replicas = %d
load_s = 30
step_s = 60
judge = "mann-whitney"
%s`, replicas, newReplicas, extra)
}

// TestRolloutWithSpares: the green replicas are the last serving ones, not
// the warm spares after them; spares run the current version and stand in
// for blue replicas only (a failed green replica waits for its repair);
// the rollout completes; the run is deterministic.
func TestRolloutWithSpares(t *testing.T) {
	src := rolloutSrc(4, 2, `[failures]
enabled = true
rate_multiplier = 300000
spares = 2
spare_after_s = 0
`)
	sc, res, s := runConserved(t, src)
	require.Equal(t, []int{2, 3}, sc.RolloutGreen())
	swaps := spareSwaps(t, res)
	t.Logf("swaps %v, rollout %+v", swaps, *s.Resilience.Rollout)
	require.NotEmpty(t, swaps)
	for _, sw := range swaps {
		require.NotContains(t, []int{2, 3}, sw.i, "a spare stood in for green replica %d", sw.i)
		require.NotContains(t, []int{2, 3}, sw.j, "green replica %d became a spare", sw.j)
	}
	greenFails := 0
	for _, p := range res.Timeline {
		if p.Event == "fail" && (p.Replica == 2 || p.Replica == 3) {
			greenFails++
		}
	}
	t.Logf("green failures %d", greenFails)
	require.Positive(t, greenFails, "a green replica failed (and waited for its repair)")
	require.Equal(t, "completed", s.Resilience.Rollout.State)
	requireDeterministic(t, sc, src)
}
