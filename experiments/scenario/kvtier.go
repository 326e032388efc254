package scenario

import (
	"slices"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/hw"
)

// validateKVTiers records the problems of an enabled [kv_tiers].
func (s *Scenario) validateKVTiers(ps *config.Problems) {
	if !s.KVTiers.Enabled {
		return
	}
	cat := s.Catalog()
	gpus := []hw.GPU{cat.GPUs[s.Cluster.GPU]}
	if s.groups() {
		// Each group's tiers are sized per GPU of its own, and its GPU's
		// NIC reads the store.
		gpus = gpus[:0]
		var names []string
		for _, g := range s.Cluster.Groups {
			if gpu, ok := cat.GPUs[g.GPU]; ok && !slices.Contains(names, g.GPU) {
				names = append(names, g.GPU)
				gpus = append(gpus, gpu)
			}
		}
	}
	s.KVTiers.Validate(gpus, s.Cluster.Replica, "kv_tiers", ps)
}
