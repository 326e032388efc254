package fleet

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// TestClientTTFTSharedEqualsSeparate: a Recorder's ClientTTFT, shared with
// TTFT until the first failure, ends in the state (buckets, sum, order of
// exact values) of a sketch that was given every completion's TTFT and
// every failure's wait, as before the sharing; TTFT holds only the
// completions; after Finish, merging into TTFT leaves ClientTTFT alone.
// Enough values to pass the exact limit, with the first failure early,
// late, or never.
func TestClientTTFTSharedEqualsSeparate(t *testing.T) {
	state := func(s *quantile.Sketch) string {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		return string(b)
	}
	for _, firstFail := range []int{-1, 0, 3, 2000, 9000} {
		rng := rand.New(rand.NewPCG(1, uint64(firstFail+2)))
		m := NewRecorder(SLO{})
		wantTTFT, wantClient := quantile.New(), quantile.New()
		failed := false
		for i := range 10000 {
			req := workloads.Request{ID: uint64(i + 1), Arrival: sim.Time(i) * sim.Millisecond, InputTokens: 10, OutputTokens: 5}
			wait := sim.Time(rng.Int64N(int64(3 * sim.Second)))
			if i == firstFail || (failed && rng.IntN(10) == 0) {
				failed = true
				m.RequestFailed(&req, 0, req.Arrival+wait, engine.FailReplicaDown)
				wantClient.Add(max(0, wait.Milliseconds()))
				continue
			}
			m.RequestDone(&engine.Outcome{Req: &req, Scheduled: req.Arrival, FirstToken: req.Arrival + wait, Finished: req.Arrival + 2*wait})
			wantTTFT.Add(wait.Milliseconds())
			wantClient.Add(wait.Milliseconds())
		}
		require.Equal(t, firstFail < 0, m.ClientTTFT == m.TTFT, "shared until the first failure")
		m.Finish()
		require.NotSame(t, m.TTFT, m.ClientTTFT)
		require.Equal(t, state(wantTTFT), state(m.TTFT), "first failure %d", firstFail)
		require.Equal(t, state(wantClient), state(m.ClientTTFT), "first failure %d", firstFail)
		m.TTFT.Add(12345)
		require.Equal(t, state(wantClient), state(m.ClientTTFT), "after Finish, TTFT is its own")
	}
}
