package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// checkOutstandingIndex makes every decision of the test that the pool's
// routing index takes (least-outstanding, least-kv,
// weighted-least-outstanding) also ask the router's scan and panic if the
// index chose otherwise (fleet.CheckOutstandingIndex): the chaos tests
// drive every writer of Outstanding, KVUtilization and Available
// (failures, probes, breakers, drains, autoscaling, spot, several models),
// which the index must all hear.
func checkOutstandingIndex(t *testing.T) {
	was := fleet.CheckOutstandingIndex
	fleet.CheckOutstandingIndex = true
	t.Cleanup(func() { fleet.CheckOutstandingIndex = was })
}

// stepChecked runs eng event by event until the fleet drains (or its drain
// limit truncates the run), checking after every event that requests are
// conserved, every replica's bookkeeping matches what it holds, no down
// replica is available and every replica's phase is the one its pool
// recorded (fleet.Pool.CheckLifecycle); extra, if set, adds the caller's checks after each
// event. At the end, unless truncated, nothing is in flight. src is the
// scenario, printed with any failure.
func stepChecked(t *testing.T, eng *sim.Engine, fl *fleet.Fleet, rec *fleet.Recorder, src string, extra func(n int)) {
	t.Helper()
	n := 0
	for !fl.Truncated && eng.Step() {
		n++
		require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed+rec.InFlight(), "event %d\n%s", n, src)
		for i, r := range fl.Replicas {
			require.NoError(t, r.CheckInvariants(), "event %d at %v\n%s", n, eng.Now(), src)
			if fl.States()[i].Available {
				require.True(t, r.Up(), "replica %d available but down\n%s", i, src)
				require.Equal(t, fleet.PhaseServing, fl.Life.Phase(i), "replica %d available\n%s", i, src)
			}
		}
		// Every change of a replica's provisioning state went through its
		// pool (the lifecycle recorded it).
		require.NoError(t, fl.CheckLifecycle(), "event %d at %v\n%s", n, eng.Now(), src)
		if fl.Disagg != nil {
			require.NoError(t, fl.Disagg.Decode.CheckLifecycle(), "decode pool, event %d at %v\n%s", n, eng.Now(), src)
		}
		if extra != nil {
			extra(n)
		}
	}
	if !fl.Truncated {
		require.Zero(t, rec.InFlight(), src)
	}
}

// requireDeterministic runs sc twice through the runner and requires
// byte-identical summaries.
func requireDeterministic(t *testing.T, sc *scenario.Scenario, src string) {
	t.Helper()
	var outs [2]string
	for k := range outs {
		res, err := Run(sc, Options{})
		require.NoError(t, err, src)
		js, err := report.Summarize(res).MarshalJSON()
		require.NoError(t, err)
		outs[k] = string(js)
	}
	require.Equal(t, outs[0], outs[1], "determinism\n%s", src)
}
