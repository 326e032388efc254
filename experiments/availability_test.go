package experiments

import (
	"testing"

	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// TestAvailabilityFollowsHealth: under failures, precursor drains, repairs
// and cold starts, the router never sees a down replica as available.
func TestAvailabilityFollowsHealth(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 200000
cold_start_s = 60
drain_on_precursor = true
`)
	sc, _ = sc.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "1200"),
		OverrideOverlay("cluster.replicas", "8"), OverrideOverlay("workload.arrival.rate_per_s", "40"))
	eng := sim.NewEngine()
	router, _ := policies.NewRouter(sc.Router, 8, sim.NewStream(sc.Seed, streamRouter))
	rec := models.NewRecorder(sc.SLO)
	fleet, _ := models.NewFleet(eng, sc.Catalog(), sc.Cluster, router, rec, "cluster")
	fleet.SetPolicies(policies.BuildResilience(sc.Policies, 8, sim.NewStream(sc.Seed, streamRetry)))
	if _, err := startFailures(eng, fleet, sc, sc.Seed); err != nil {
		t.Fatal(err)
	}
	src, _ := workloads.New(sc.Workload, sim.NewStream(sc.Seed, streamWorkload))
	fleet.Start(src)
	fleet.StartSampling(10 * sim.Second)
	for eng.Step() {
		for i, r := range fleet.Replicas {
			if fleet.States()[i].Available && !r.Up() {
				t.Fatalf("t=%v replica %d available but down", eng.Now(), i)
			}
		}
	}
}
