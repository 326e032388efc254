package scenario

import (
	"math"
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
	s.checkKVTierRanges(ps)
}

// Upper bounds of [kv_tiers]' numbers (issue 33 item 5): a tier's capacity
// becomes an int64 count of KV blocks (GB × 1e9 ÷ bytes per block, a block
// at least one byte) and a load's time int64 nanoseconds, so each must
// keep those in range; host_dram_gb_per_gpu = 1e17 overflowed to a
// negative cost.
const (
	// MaxTierGBPerGPU bounds host_dram_gb_per_gpu and ssd_gb_per_gpu: a
	// petabyte per GPU, 4,000 times a 2 TB server's DRAM per GPU.
	MaxTierGBPerGPU = 1e6
	// MaxStoreGB bounds store_gb: an exabyte, 1e18 bytes, so that a
	// block count (at least one byte a block) stays below 2^63 (9.2e18).
	MaxStoreGB = 1e9
	// MaxTierLatencyUs bounds the tiers' latencies: a minute, far past any
	// memory or storage tier, so that a load's nanoseconds fit an int64.
	MaxTierLatencyUs = 60e6
	// MinTierGBPerS is the slowest tier bandwidth: 1 MB/s, so that a
	// load's time (bytes ÷ bandwidth) stays finite.
	MinTierGBPerS = 1e-3
	// MaxTierUSDPerGBMonth bounds the tiers' prices: a million dollars a
	// GB-month, so that a cost stays finite.
	MaxTierUSDPerGBMonth = 1e6
)

func (s *Scenario) checkKVTierRanges(ps *config.Problems) {
	c := s.KVTiers
	for _, k := range []struct {
		key string
		v   float64
		max float64
	}{
		{"host_dram_gb_per_gpu", c.HostDRAMGBPerGPU, MaxTierGBPerGPU}, {"ssd_gb_per_gpu", c.SSDGBPerGPU, MaxTierGBPerGPU},
		{"store_gb", c.StoreGB, MaxStoreGB},
		{"host_latency_us", c.HostLatencyUs, MaxTierLatencyUs}, {"ssd_latency_us", c.SSDLatencyUs, MaxTierLatencyUs},
		{"store_latency_us", c.StoreLatencyUs, MaxTierLatencyUs},
		{"host_usd_per_gb_month", c.HostUSDPerGBMonth, MaxTierUSDPerGBMonth}, {"ssd_usd_per_gb_month", c.SSDUSDPerGBMonth, MaxTierUSDPerGBMonth},
		{"store_usd_per_gb_month", c.StoreUSDPerGBMonth, MaxTierUSDPerGBMonth},
	} {
		if k.v > k.max && !math.IsInf(k.v, 1) {
			ps.Add("kv_tiers."+k.key, "must be at most %g (a hard limit), found %g", k.max, k.v)
		}
	}
	for _, k := range []struct {
		key string
		v   float64
		on  bool
	}{
		{"host_read_gb_per_s", c.HostReadGBPerS, c.HostDRAMGBPerGPU > 0}, {"ssd_read_gb_per_s", c.SSDReadGBPerS, c.SSDGBPerGPU > 0},
		{"store_read_gb_per_s", c.StoreReadGBPerS, c.StoreGB > 0 && c.StoreReadGBPerS != 0},
	} {
		if k.on && k.v > 0 && k.v < MinTierGBPerS {
			ps.Add("kv_tiers."+k.key, "must be at least %g GB/s (1 MB/s; a hard limit), found %g", MinTierGBPerS, k.v)
		}
	}
}
