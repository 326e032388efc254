package experiments

import (
	"encoding/json"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// Every built-in scenario, and every arm and sweep point of one, is data:
// it marshals to JSON (no function or channel in the configuration), and
// its provenance hash reads it, not a fallback.
func TestScenariosMarshalToJSON(t *testing.T) {
	for _, name := range BuiltinNames() {
		sc, err := LoadBuiltin(name)
		require.NoError(t, err, name)
		_, err = json.Marshal(sc)
		require.NoError(t, err, name)
		if len(sc.Sweep.Params) > 0 {
			var axes []scenario.Axis
			for _, spec := range sc.Sweep.Params {
				ax, err := scenario.ParseAxis(spec)
				require.NoError(t, err, name)
				axes = append(axes, ax)
			}
			points, _, err := SweepScenarios(sc, axes)
			require.NoError(t, err, name)
			for _, p := range points {
				_, err = json.Marshal(p)
				require.NoError(t, err, "%s point %s", name, p.Name)
			}
		}
		if len(sc.Arms) == 0 {
			continue
		}
		arms, err := ArmsFromScenario(sc)
		require.NoError(t, err, name)
		for _, a := range arms {
			_, err = json.Marshal(a.Scenario)
			require.NoError(t, err, "%s arm %s", name, a.Name)
		}
	}
}
