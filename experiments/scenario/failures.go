package scenario

import (
	"fmt"

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
// NVLink domain). A disaggregated fleet's decode pool is sized the same
// way on its own GPUs (failures.decode_spares). Its problems, and those of
// the keys it reads, are left to Validate.
func (s *Scenario) resolveServingSpares(has func(string) bool, ps *config.Problems) {
	f := &s.Failures
	if f.SpareCoverage == 0 {
		return
	}
	switch {
	case has("failures.spares"):
		ps.Add("failures.spare_coverage", "sizes the spares: remove failures.spares (%d) or this key", f.Spares)
		return
	case s.Disagg.Enabled && has("failures.decode_spares"):
		ps.Add("failures.spare_coverage", "sizes the decode pool's spares too: remove failures.decode_spares (%d) or this key", f.DecodeSpares)
		return
	case len(s.Cluster.Groups) > 0:
		s.resolveGroupSpares(has, ps)
		return
	}
	n, ok := s.coverageSpares(s.Cluster.GPU, s.Cluster.Replicas, s.Cluster.GPUsPerReplica())
	if !ok {
		return
	}
	f.Spares = n
	if f.Spares > s.Cluster.Replicas {
		// M/G/∞ counts failures in repair as if the fleet were endless: past
		// the fleet's own size the count means nothing.
		ps.Add("failures.spare_coverage", "would hold %d replicas in repair at once, more than cluster.replicas (%d): "+
			"the sizing assumes few are out at once; lower failures.rate_multiplier or set failures.spares", f.Spares, s.Cluster.Replicas)
	}
	if !s.Disagg.Enabled {
		return
	}
	d := s.Disagg.DisaggConfig
	d.ResolveDefaults(s.Cluster)
	dec := d.Decode
	if n, ok = s.coverageSpares(dec.GPU, dec.Replicas, dec.GPUsPerReplica()); !ok {
		return
	}
	f.DecodeSpares = n
	if f.DecodeSpares > dec.Replicas {
		ps.Add("failures.spare_coverage", "would hold %d decode replicas in repair at once, more than disagg.decode.replicas (%d): "+
			"the sizing assumes few are out at once; lower failures.rate_multiplier or set failures.spares and failures.decode_spares", f.DecodeSpares, dec.Replicas)
	}
}

// resolveGroupSpares sets each group's spares from
// failures.spare_coverage: the fewest that cover its replicas in repair
// with that probability, on its own GPUs (a group's servers fail on their
// own, and its spares stand in for its replicas only). A group that sets
// its spares itself is a problem, as failures.spares is for a fleet of
// one kind.
func (s *Scenario) resolveGroupSpares(has func(string) bool, ps *config.Problems) {
	for i, g := range s.Cluster.Groups {
		if key := fmt.Sprintf("cluster.groups.%d.spares", i); has(key) {
			ps.Add("failures.spare_coverage", "sizes each group's spares: remove %s (%d) or this key", key, g.Spares)
			return
		}
	}
	for i := range s.Cluster.Groups {
		g := &s.Cluster.Groups[i]
		n, ok := s.coverageSpares(g.GPU, g.Replicas, g.TP)
		if !ok {
			continue
		}
		g.Spares = n
		if n > g.Replicas {
			ps.Add("failures.spare_coverage", "would hold %d replicas of group %d in repair at once, more than its replicas (%d): "+
				"the sizing assumes few are out at once; lower failures.rate_multiplier or set each group's spares", n, i, g.Replicas)
		}
	}
}

// coverageSpares is the fewest warm spares that cover, with probability
// failures.spare_coverage, the replicas in repair of a pool of replicas
// replicas of w GPUs each on gpuName; ok=false when the [failures] keys it
// reads are not valid (Validate reports them).
func (s *Scenario) coverageSpares(gpuName string, replicas, w int) (n int, ok bool) {
	f := &s.Failures
	gpu, known := s.Catalog().GPUs[gpuName]
	if !f.Enabled || !known || w <= 0 || replicas <= 0 || !(f.SpareCoverage > 0 && f.SpareCoverage < 1) ||
		!(f.RateMultiplier > 0) || f.ServersPerRack <= 0 {
		return 0, false
	}
	prof, err := f.BuildProfile()
	if err != nil {
		return 0, false
	}
	gpus := replicas * w
	var topo failures.Topology
	if gpu.DomainGPUs == 72 {
		topo = failures.NVL72((gpus + 71) / 72)
	} else {
		topo = failures.HGX((gpus+7)/8, f.ServersPerRack)
	}
	if f.RacksPerRow > 0 {
		topo.RacksPerRow = f.RacksPerRow
	}
	return prof.Scaled(f.RateMultiplier).UnitSparesAt(topo, gpus, w, f.SpareCoverage), true
}
