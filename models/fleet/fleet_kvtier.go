package fleet

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/workloads"
)

// EnableKVTiers gives every primary replica its tiers (cfg), sharing one
// store (NewKVTiers). gpu is the cluster's GPU (its NIC reads the store by
// default). Call before Start.
func (f *Fleet) EnableKVTiers(cfg engine.KVTiersConfig, gpu hw.GPU) *engine.KVTiers {
	f.KVTiers = engine.NewKVTiers(f.Pool.Replicas, cfg, f.Pool.Memory.KVBytesPerBlock, f.Pool.tp, gpu.NICBytesPerS)
	return f.KVTiers
}

// PrefixIndex tells a router how much prefill a replica would save on a
// request from what its caches hold (Fleet implements it).
type PrefixIndex interface {
	// PrefixSavingS is the prefill seconds primary replica i would not
	// spend on req: its leading prompt segments found in HBM, at their
	// recompute time, and those found in a KV tier, at their recompute
	// time less their load time.
	PrefixSavingS(i int, req *workloads.Request) float64
}

// PrefixAwareRouter is a Router that reads a PrefixIndex; the runner gives
// it the fleet's.
type PrefixAwareRouter interface {
	Router
	SetPrefixIndex(PrefixIndex)
}

var _ PrefixIndex = (*Fleet)(nil)

// PrefixSavingS implements PrefixIndex. A token's recompute time is its
// dense FLOPs at the GPU's peak (2 × parameters / TP per GPU; attention
// and efficiency ignored: a ranking, not a prediction). It reads the
// caches without touching their LRU order.
func (f *Fleet) PrefixSavingS(i int, req *workloads.Request) float64 {
	if i < 0 || i >= len(f.Replicas) || f.PeakFLOPS <= 0 {
		return 0
	}
	return f.Replicas[i].PrefixSavingS(req, 2*f.ParamsPerGPU/f.PeakFLOPS)
}
