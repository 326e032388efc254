package experiments

import (
	"errors"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
)

// errDisaggSize is what `size` says of a disaggregated scenario: it
// searches one pool size and prices one pool.
var errDisaggSize = errors.New("a disaggregated fleet has two pool sizes: size it with SizeMix (fleetsim size does)")

// injectDecodeFault schedules scripted fault fc on decode replica j of d.
func injectDecodeFault(eng *sim.Engine, d *fleet.Disagg, j int, fc failures.Scripted) {
	r := d.Decode.Replicas[j]
	at := sim.FromSeconds(fc.AtS)
	switch fc.Mode {
	case failures.Fail, failures.OOM:
		reason := engine.FailCrashed
		if fc.Mode == failures.OOM {
			reason = engine.FailOOM
		}
		cold := sim.FromSeconds(fc.ColdStartS)
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			if !r.Up() {
				return
			}
			d.Decode.MarkFault(j, now)
			r.Fail(now, reason)
			if fc.RestartS > 0 {
				eng.Schedule(now+sim.FromSeconds(fc.RestartS), sim.PriorityFailure, func(t sim.Time) {
					if !r.Up() && !r.Recovering() {
						r.Recover(t, cold, nil)
					}
				})
			}
		})
	case failures.Hang:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			d.Decode.MarkFault(j, now)
			r.Hang(now)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(now sim.Time) {
				if r.Hung() {
					r.Unhang(now)
				}
			})
		}
	case failures.Slow:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			d.Decode.MarkFault(j, now)
			r.SetSlow(fc.Factor)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(sim.Time) { r.SetSlow(1) })
		}
	}
}

// enableDisagg makes fleet disaggregated when the scenario says so;
// cluster is the prefill pool as built.
func enableDisagg(eng *sim.Engine, fl *fleet.Fleet, sc *scenario.Scenario, cluster fleet.FleetConfig) error {
	d := sc.Disagg
	if !d.Enabled {
		return nil
	}
	d.ResolveDefaults(cluster)
	d.Decode.Replicas = sc.DecodeReplicas() // warm spares beyond the serving decode replicas
	router, err := policies.NewRouter(d.Router, max(d.Decode.Replicas, 1), sim.NewStream(sc.Seed, streams.DecodeRouter))
	if err != nil {
		return err
	}
	if err := fl.EnableDisagg(sc.Catalog(), d.DisaggConfig, cluster, router, "disagg"); err != nil {
		return err
	}
	for _, fc := range d.Faults {
		injectDecodeFault(eng, fl.Disagg, fc.Replica, fc)
	}
	return nil
}
