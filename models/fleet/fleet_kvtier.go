package fleet

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/workloads"
)

// EnableKVTiers gives every primary replica its tiers (cfg), sharing one
// store (NewKVTiers). gpus are the catalog's GPUs and gpu the cluster's
// (its NIC reads the store by default). In a fleet of groups each
// replica's tiers are sized per GPU of its own group (its TP, its KV block
// bytes, its GPU's NIC), and each distinct model and KV block size is a
// format of its own in the shared store (engine.TierShape). Call before
// Start.
func (f *Fleet) EnableKVTiers(cfg engine.KVTiersConfig, gpus map[string]hw.GPU, gpu string) *engine.KVTiers {
	p := f.Pool
	one := engine.TierShape{KVBytesPerBlock: p.Memory.KVBytesPerBlock, TP: p.tp, NICBytesPerS: gpus[gpu].NICBytesPerS}
	shape := func(int) engine.TierShape { return one }
	if len(p.Groups) > 0 {
		type format struct {
			model string
			bpb   float64
		}
		formats := map[format]int{}
		shapes := make([]engine.TierShape, len(p.Replicas))
		for i := range shapes {
			g := p.GroupOf(i)
			fm := format{g.Model, g.Memory.KVBytesPerBlock * float64(g.TP)}
			if _, ok := formats[fm]; !ok {
				formats[fm] = len(formats)
			}
			shapes[i] = engine.TierShape{KVBytesPerBlock: g.Memory.KVBytesPerBlock, TP: g.TP, NICBytesPerS: gpus[g.GPU].NICBytesPerS, Format: formats[fm]}
		}
		shape = func(i int) engine.TierShape { return shapes[i] }
	}
	f.KVTiers = engine.NewKVTiers(p.Replicas, cfg, shape)
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
