package experiments

import (
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
)

// startFailures starts the scenario's stochastic failures on fleet, whose
// replicas beyond cluster.replicas are warm spares (newFleet).
func startFailures(eng *sim.Engine, fl *fleet.Fleet, sc *scenario.Scenario, seed uint64) (*failures.Injector, error) {
	d := failures.Deps{Slots: sc.Cluster.Replicas, DecodeSlots: sc.Disagg.Decode.Replicas, Rand: sim.NewStream(seed, streams.Failures),
		DurationS: sc.Workload.DurationS, HorizonS: sc.Run.HorizonS}
	// Each group of a fleet of groups fails from a stream of its own; the
	// first draws the fleet's stream, so that a fleet of one group fails
	// as the same fleet of one kind does.
	d.GroupRand = func(k int) *rand.Rand {
		if k == 0 {
			return sim.NewStream(seed, streams.Failures)
		}
		return sim.NewStream(seed, streams.GroupFailures(fl.Groups[k].Name))
	}
	if c := sc.RestartColdStart(); c != nil && !sc.Has("failures.cold_start_s") {
		// Repairs end in a cold start from physics (a cold_start_s set
		// here is kept).
		d.ColdStart = fl.RestartColdStart(*c)
	}
	if sc.Failures.DrainOnPrecursor {
		d.Drainer = policies.PrecursorDrain{}
	}
	if sc.GroupSpares() > 0 {
		d.SpareKind = fl.SpareKinds() // a group's spares stand in for its own replicas only
	}
	if green := sc.RolloutGreen(); len(green) > 0 {
		// Warm spares run the current (blue) version: they stand in for
		// blue replicas only (a kind no spare has), and a failed green
		// replica waits for its repair, which keeps it on the new version.
		if d.SpareKind == nil {
			d.SpareKind = make([]int, len(fl.Replicas))
		}
		for _, i := range green {
			d.SpareKind[i] = -1
		}
	}
	return failures.NewApplier(eng, fl).Start(sc.Failures, d)
}
