package fleet

import (
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// TestFailStopFailsInFlightAndRecovers: a replica that fails loses every
// request it holds (counted as failed), takes nothing while down, and comes
// back after its cold start with an empty prefix cache.
func TestFailStopFailsInFlightAndRecovers(t *testing.T) {
	cfg := defaultFleet(2)
	eng, f := testFleet(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := randomWorkload(rng, 600, 10, true)
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	r := f.Replicas[0]
	var heldAtFail int
	eng.Schedule(20*sim.Second, sim.PriorityFailure, func(now sim.Time) {
		heldAtFail = r.Outstanding()
		r.Fail(now, engine.FailReplicaDown)
		f.states[0].Available = false
		r.Recover(now, 3*sim.Minute, func() { f.states[0].Available = true })
	})
	eng.Schedule(20*sim.Second+sim.Millisecond, sim.PriorityNormal, func(sim.Time) {
		require.Zero(t, r.KV().Used()+r.KV().Cached(), "KV and prefix cache lost")
		require.Zero(t, r.Outstanding())
		require.False(t, r.Up())
	})
	for eng.Step() {
		require.Equal(t, f.Rec.Arrived, f.Rec.Completed+f.Rec.Failed+f.Rec.Shed+f.Rec.InFlight())
		r.KV().Check()
		require.NoError(t, r.CheckInvariants())
	}
	require.Positive(t, heldAtFail)
	require.EqualValues(t, heldAtFail, f.Rec.Failed, "exactly the requests it held fail")
	require.EqualValues(t, engine.FailReplicaDown, firstKey(f.Rec.FailedBy))
	require.Zero(t, f.Rec.InFlight())
	require.True(t, r.Up(), "back after the cold start")
	require.Positive(t, r.Stats.WastedPrefillTokens)
}

func firstKey(m map[string]int64) string {
	for k := range m {
		return k
	}
	return ""
}

// TestHangStallsUntilRecovered: a zombie keeps accepting requests and never
// finishes them; recovering it fails what it held.
func TestHangStallsUntilRecovered(t *testing.T) {
	eng, f := testFleet(t, defaultFleet(1))
	var reqs []workloads.Request
	for i := 0; i < 50; i++ {
		reqs = append(reqs, workloads.Request{ID: uint64(i + 1), Arrival: sim.Time(i) * sim.Second, InputTokens: 500, OutputTokens: 300})
	}
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	r := f.Replicas[0]
	eng.Schedule(10*sim.Second+sim.Millisecond, sim.PriorityFailure, func(now sim.Time) { r.Hang(now) })
	eng.Run(60 * sim.Second)
	completedAtHang := f.Rec.Completed
	require.True(t, r.Hung())
	require.Positive(t, r.Outstanding(), "requests pile up on the zombie")
	eng.Run(120 * sim.Second)
	require.Equal(t, completedAtHang, f.Rec.Completed, "nothing completes while hung")
	eng.Schedule(eng.Now(), sim.PriorityFailure, func(now sim.Time) { r.Recover(now, sim.Minute, nil) })
	eng.Run(sim.Forever)
	require.EqualValues(t, 50, f.Rec.Completed+f.Rec.Failed)
	require.Positive(t, f.Rec.Failed)
}

// TestSlowReplicaIsSlower: fail-slow stretches every step by its factor.
func TestSlowReplicaIsSlower(t *testing.T) {
	e2e := func(factor float64) float64 {
		eng, f := testFleet(t, defaultFleet(1))
		f.Replicas[0].SetSlow(factor)
		rng := rand.New(rand.NewPCG(4, 4))
		require.NoError(t, f.Start(&sliceSource{reqs: randomWorkload(rng, 200, 1, false)}))
		eng.Run(sim.Forever)
		return f.Rec.TPOT.Quantile(0.5)
	}
	base, slow := e2e(1), e2e(1.5)
	require.InEpsilon(t, 1.5, slow/base, 0.1)
}

// TestCancelRunningAndWaiting: cancelled copies leave at once (waiting) or
// at the next step boundary (running), free their KV and count as wasted.
func TestCancelRunningAndWaiting(t *testing.T) {
	for _, mode := range engine.BatchingModes {
		cfg := defaultFleet(1)
		cfg.Replica.Batching = mode
		cfg.Replica.MaxSeqs = 4
		eng, f := testFleet(t, cfg)
		r := f.Replicas[0]
		var copies []*engine.Copy
		for i := 0; i < 8; i++ {
			cr := f.newClientReq(&workloads.Request{ID: uint64(i + 1), InputTokens: 300, OutputTokens: 2000})
			c := f.newCopy(cr, engine.CopyPrimary)
			f.Rec.Arrived++
			r.Submit(c)
			copies = append(copies, c)
		}
		eng.Run(2 * sim.Second)
		// Cancel two running and two waiting copies, as a gateway would.
		for _, i := range []int{0, 1, 6, 7} {
			r.Cancel(copies[i])
			f.Rec.Failed++ // the gateway's bookkeeping of withdrawn requests
		}
		require.Equal(t, 4, r.Outstanding(), mode)
		eng.Run(sim.Forever)
		require.EqualValues(t, 4, f.Rec.Completed, mode)
		require.Zero(t, r.KV().Used(), mode)
		require.EqualValues(t, 4, r.Stats.Cancelled, mode)
		require.Positive(t, r.Stats.WastedDecodeTokens, mode)
		r.KV().Check()
	}
}

// TestCancelOnStalledReplicaStaysOutstanding: a copy withdrawn from a
// stalled (hung) replica keeps counting in its Outstanding until the replica
// resumes, so that least-outstanding and P2C do not see the stalled replica
// as idle and send it more traffic (issue 12, item 7); a healthy replica's
// withdrawn copies leave the count at once.
func TestCancelOnStalledReplicaStaysOutstanding(t *testing.T) {
	for _, mode := range engine.BatchingModes {
		cfg := defaultFleet(1)
		cfg.Replica.Batching = mode
		cfg.Replica.MaxSeqs = 4
		eng, f := testFleet(t, cfg)
		r := f.Replicas[0]
		var copies []*engine.Copy
		for i := 0; i < 8; i++ {
			cr := f.newClientReq(&workloads.Request{ID: uint64(i + 1), InputTokens: 300, OutputTokens: 2000})
			c := f.newCopy(cr, engine.CopyPrimary)
			f.Rec.Arrived++
			r.Submit(c)
			copies = append(copies, c)
		}
		eng.Run(2 * sim.Second)
		r.Hang(eng.Now())
		for _, i := range []int{0, 6} { // one running, one waiting
			r.Cancel(copies[i])
			f.Rec.Failed++
		}
		require.Equal(t, 8, r.Outstanding(), "%s: stalled, it still holds them", mode)
		require.NoError(t, r.CheckInvariants(), mode)
		r.Unhang(eng.Now())
		require.Equal(t, 6, r.Outstanding(), mode)
		require.NoError(t, r.CheckInvariants(), mode)
		r.Cancel(copies[7]) // healthy: at once
		f.Rec.Failed++
		require.Equal(t, 5, r.Outstanding(), mode)
		// A replica that fails while stalled forgets them with everything else.
		r.Hang(eng.Now())
		r.Cancel(copies[5])
		f.Rec.Failed++
		r.Fail(eng.Now(), engine.FailCrashed)
		require.Zero(t, r.Outstanding(), mode)
		require.NoError(t, r.CheckInvariants(), mode)
	}
}
