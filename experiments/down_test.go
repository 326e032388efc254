package experiments

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// TestDownReplicasStayDown: run.down_replicas' replicas are in repair for
// the whole run, whatever else restarts replicas: health probes (which
// used to find the down replica failing, restart it, and let it serve),
// calibrated failures and their repairs, a scripted fault with a restart on
// it. A fleet of 4 with 1 down then serves exactly as a fleet of 3 (same
// requests and latencies), and pays for the fourth's GPU-hours in
// cost.wasted.down_usd.
func TestDownReplicasStayDown(t *testing.T) {
	const src = "name = \"down\"\n[cluster]\nmodel = \"llama-3-8b\"\ngpu = \"H100\"\ntp = 1\nreplicas = %d\n[run]\ndown_replicas = %d\n" +
		"[workload]\nduration_s = 200\n[workload.arrival]\nrate_per_s = 20\n%s"
	for name, extra := range map[string]string{
		"alone":    "",
		"liveness": "[policies.probe]\nkind = \"liveness\"\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n",
		"deep":     "[policies.probe]\nkind = \"deep\"\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n",
		"failures": "[failures]\nenabled = true\nrate_multiplier = 300000\n",
		"fault":    "[[faults]]\nreplica = 3\nmode = \"fail\"\nat_s = 10\nduration_s = 5\nrestart_s = 5\n",
	} {
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Parse("down.toml", []byte(fmt.Sprintf(src, 4, 1, extra)))
			require.NoError(t, err)
			res, err := Run(sc, Options{})
			require.NoError(t, err)
			r3 := res.Fleet.Replicas[3]
			require.True(t, r3.Retired())
			require.False(t, r3.Up())
			require.Zero(t, r3.Stats.DecodeTokens+r3.Stats.PrefillTokens, "the replica in repair served")
			s := report.Summarize(res)
			require.Equal(t, s.Requests.Arrived, s.Requests.Completed+s.Requests.Failed+s.Requests.Shed+s.Requests.InFlight)
			if name == "alone" || name == "liveness" {
				three, err := scenario.Parse("down.toml", []byte(fmt.Sprintf(src, 3, 0, extra)))
				require.NoError(t, err)
				r, err := Run(three, Options{})
				require.NoError(t, err)
				s3 := report.Summarize(r)
				require.Equal(t, s3.Requests, s.Requests)
				require.Equal(t, s3.LatencyMs, s.LatencyMs)
				require.InDelta(t, res.EndTime.Seconds()/3600*s.Cost.PricePerGPUHour, s.Cost.Wasted.DownUSD, 1e-6)
			}
		})
	}
}
