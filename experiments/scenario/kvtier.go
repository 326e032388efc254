package scenario

import "github.com/fleetsim/fleetsim/internal/config"

// validateKVTiers records the problems of an enabled [kv_tiers].
func (s *Scenario) validateKVTiers(ps *config.Problems) {
	if !s.KVTiers.Enabled {
		return
	}
	s.KVTiers.Validate(s.Catalog().GPUs[s.Cluster.GPU], s.Cluster.Replica, "kv_tiers", ps)
}
