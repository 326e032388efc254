package fleet

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

// obsRecorder is a policy that keeps the size it has and records what the
// autoscaler observed.
type obsRecorder struct{ obs []ScaleObs }

func (p *obsRecorder) Desired(o ScaleObs) int {
	p.obs = append(p.obs, o)
	return o.Active + o.Starting
}

// The autoscaler's busy fraction is the replicas' busy time interval by
// interval, a step or run under way counted up to the evaluation: over a
// run without failures the observations add up to exactly the busy time
// the replicas report (the last evaluation comes after the fleet drained).
// Its outstanding tokens are at least one per outstanding request (each
// has a token to go), and none when nothing is outstanding.
func TestScaleObsBusyAndTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	reqs := randomWorkload(rng, 1500, 6, false)
	eng, f := testFleet(t, defaultFleet(3))
	pol := &obsRecorder{}
	interval := 2 * sim.Second
	f.StartAutoscaler(ScaleParams{Min: 3, Max: 3, Initial: 3, Interval: interval, DownWindow: interval}, pol)
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	eng.Run(sim.Forever)
	require.EqualValues(t, len(reqs), f.Rec.Completed)
	require.Greater(t, len(pol.obs), 20)

	var observed float64 // busy replica-ns the observations account for
	for _, o := range pol.obs {
		require.Equal(t, 3, o.Active)
		require.GreaterOrEqual(t, o.BusyFraction, 0.0)
		require.LessOrEqual(t, o.BusyFraction, 1.0)
		require.GreaterOrEqual(t, o.OutstandingTokens, int64(o.Outstanding), "at %v", o.Now)
		if o.Outstanding == 0 {
			require.Zero(t, o.OutstandingTokens, "at %v", o.Now)
		}
		observed += o.BusyFraction * 3 * float64(interval)
	}
	var busy int64
	for _, r := range f.Replicas {
		busy += r.Stats.BusyNs
	}
	require.Greater(t, observed, 0.2*float64(busy), "the fleet was busy")
	require.InDelta(t, float64(busy), observed, 1e-9*float64(busy))
}
