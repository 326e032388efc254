package scenario

import (
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
)

// GroupSpares is the warm spares of a fleet of groups (each group's
// spares), 0 without [failures] (nothing fails: no spares are built).
func (s *Scenario) GroupSpares() int {
	n := 0
	if s.Failures.Enabled {
		for _, g := range s.Cluster.Groups {
			n += max(g.Spares, 0)
		}
	}
	return n
}

// resolveServingSpares sets failures.spares from failures.spare_coverage,
// if given: the fewest warm spare replicas that cover the replicas in
// repair with that probability, for replicas packed on the cluster's GPUs
// (HGX servers, ServersPerRack to a rack, or NVL72 racks for a 72-GPU
// NVLink domain). Its problems, and those of the keys it reads, are left
// to Validate.
func (s *Scenario) resolveServingSpares(has func(string) bool, ps *config.Problems) {
	f := &s.Failures
	if f.SpareCoverage == 0 {
		return
	}
	switch {
	case has("failures.spares"):
		ps.Add("failures.spare_coverage", "sizes the spares: remove failures.spares (%d) or this key", f.Spares)
		return
	case len(s.Cluster.Groups) > 0 || s.Disagg.Enabled:
		return // refused (Rules: spare_coverage+groups, spare_coverage+disagg)
	}
	gpu, ok := s.Catalog().GPUs[s.Cluster.GPU]
	w := s.Cluster.GPUsPerReplica()
	if !f.Enabled || !ok || w <= 0 || s.Cluster.Replicas <= 0 || !(f.SpareCoverage > 0 && f.SpareCoverage < 1) ||
		!(f.RateMultiplier > 0) || f.ServersPerRack <= 0 {
		return
	}
	prof, err := f.BuildProfile()
	if err != nil {
		return
	}
	gpus := s.Cluster.Replicas * w
	var topo failures.Topology
	if gpu.DomainGPUs == 72 {
		topo = failures.NVL72((gpus + 71) / 72)
	} else {
		topo = failures.HGX((gpus+7)/8, f.ServersPerRack)
	}
	if f.RacksPerRow > 0 {
		topo.RacksPerRow = f.RacksPerRow
	}
	f.Spares = prof.Scaled(f.RateMultiplier).UnitSparesAt(topo, gpus, w, f.SpareCoverage)
	if f.Spares > s.Cluster.Replicas {
		// M/G/∞ counts failures in repair as if the fleet were endless: past
		// the fleet's own size the count means nothing.
		ps.Add("failures.spare_coverage", "would hold %d replicas in repair at once, more than cluster.replicas (%d): "+
			"the sizing assumes few are out at once; lower failures.rate_multiplier or set failures.spares", f.Spares, s.Cluster.Replicas)
	}
}
