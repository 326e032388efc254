package experiments

import (
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
)

// perModelRecorders gives rec one recorder per served model (with the
// model's SLO) when the fleet serves several.
func perModelRecorders(s *scenario.Scenario, rec *fleet.Recorder) {
	if len(s.Serve) < 2 {
		return
	}
	for _, c := range s.Serve {
		rec.PerModel = append(rec.PerModel, fleet.NewRecorder(c.SLOFor(s.SLO)))
	}
}
