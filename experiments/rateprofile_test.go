package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// A piecewise arrival profile file is read relative to the scenario, and a
// bad line in it is refused at validation with the CSV's file and line.
func TestRateProfileFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	write("day.csv", "t_s,rate_per_s\n0,5\n30,40\n60,5\n")
	write("bad.csv", "t_s,rate_per_s\n0,5\n30,-2\n")
	scenarioTOML := func(profile string) string {
		return `name = "ramp"
[cluster]
replicas = 2
[workload]
duration_s = 60
[workload.arrival]
process = "piecewise"
profile_file = "` + profile + `"
repeat_s = 60
`
	}
	sc, err := scenario.Load(write("ok.toml", scenarioTOML("day.csv")))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	// Mean rate (5+40)/2 = 22.5 req/s over 60 s: 1,350 expected.
	require.InDelta(t, 1350, float64(s.Requests.Arrived), 4*37)

	_, err = scenario.Load(write("bad.toml", scenarioTOML("bad.csv")))
	require.ErrorContains(t, err, "bad.toml:8: workload.arrival.profile_file:")
	require.ErrorContains(t, err, "bad.csv:3: rate_per_s must be a finite number >= 0")

	_, err = scenario.Load(write("gone.toml", scenarioTOML("gone.csv")))
	require.ErrorContains(t, err, "gone.toml:8: workload.arrival.profile_file:")
}
