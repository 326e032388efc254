package fleet

import (
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Weight load paths (ColdStartConfig.LoadPath).
const (
	LoadNVMe    = "nvme"    // each server's local NVMe, shared by its GPUs
	LoadNetwork = "network" // a shared network file system or object store, shared by every loader at once
	LoadPeer    = "peer"    // GPU to GPU from a running replica (RDMA or NVLink)
)

// LoadPaths lists the weight load paths.
var LoadPaths = []string{LoadNVMe, LoadNetwork, LoadPeer}

// ColdStartConfig is how long a replica takes from "start it" to serving,
// from physics: provisioning + engine start + weight load + warm-up, where
// the weight load is the weight bytes each GPU must read over the load
// path's bandwidth per GPU. Defaults are assumptions, stated per field; a
// scenario should set what its fleet measures.
type ColdStartConfig struct {
	// ProvisionS is the time to get a node, seconds: 0 for standby nodes
	// already booted; minutes for cloud instances (assumption: cloud GPU
	// instances commonly take 3–10 min to launch and pass health checks).
	// Default 0.
	ProvisionS float64 `toml:"provision_s"`
	// EngineStartS is process and CUDA context start, NCCL init and
	// scheduler set-up, seconds. Default 30 (assumption: vLLM/TensorRT-LLM
	// start-ups log 20–60 s before weight loading on 8-GPU servers).
	EngineStartS float64 `toml:"engine_start_s"`
	// WarmupS is CUDA-graph capture and the first compiled batches,
	// seconds. Default 20 (assumption: vLLM logs "Graph capturing
	// finished" after 10–30 s).
	WarmupS float64 `toml:"warmup_s"`
	// LoadPath is where the weights come from: "nvme" (default), "network"
	// or "peer".
	LoadPath string `toml:"load_path"`
	// NVMeBytesPerS is one server's local NVMe read bandwidth, bytes/s,
	// shared by its GPUsPerServer GPUs. Default 6.5e9 (a PCIe Gen4 data
	// centre NVMe drive's sequential read spec, e.g. 6.5–7 GB/s; one drive,
	// assumption).
	NVMeBytesPerS float64 `toml:"nvme_bytes_per_s"`
	// GPUsPerServer is how many GPUs share a server's NVMe. Default 8 (an
	// HGX server; a GB200 compute tray has 4).
	GPUsPerServer int `toml:"gpus_per_server"`
	// NetworkBytesPerS is the shared store's total read bandwidth, bytes/s,
	// split evenly between the GPUs loading at the same moment. Default
	// 20e9 (assumption: a mid-size parallel file system tier).
	NetworkBytesPerS float64 `toml:"network_bytes_per_s"`
	// NICBytesPerS caps one GPU's share of a network or peer load, bytes/s.
	// Default 50e9 (one 400 Gb/s NIC per GPU, e.g. ConnectX-7, as on HGX
	// H100 and GB200 systems).
	NICBytesPerS float64 `toml:"nic_bytes_per_s"`
}

// DefaultColdStart returns the defaults documented on ColdStartConfig.
func DefaultColdStart() ColdStartConfig {
	return ColdStartConfig{EngineStartS: 30, WarmupS: 20, LoadPath: LoadNVMe, NVMeBytesPerS: 6.5e9,
		GPUsPerServer: 8, NetworkBytesPerS: 20e9, NICBytesPerS: 50e9}
}

// Validate records the problems of c under prefix.
func (c *ColdStartConfig) Validate(prefix string, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	ps.NonNegative(k("provision_s"), c.ProvisionS)
	ps.NonNegative(k("engine_start_s"), c.EngineStartS)
	ps.NonNegative(k("warmup_s"), c.WarmupS)
	ps.OneOf(k("load_path"), c.LoadPath, LoadPaths)
	ps.Positive(k("nvme_bytes_per_s"), c.NVMeBytesPerS)
	ps.PositiveInt(k("gpus_per_server"), c.GPUsPerServer)
	ps.Positive(k("network_bytes_per_s"), c.NetworkBytesPerS)
	ps.Positive(k("nic_bytes_per_s"), c.NICBytesPerS)
}

// LoadBytesPerS is the bandwidth one GPU gets to read its weights, bytes/s,
// when loaders GPUs (this one included, >= 1) load at the same moment and
// peers replicas are serving (a "peer" load needs one; without, it reads
// from the network store instead).
func (c *ColdStartConfig) LoadBytesPerS(loaders, peers int) float64 {
	loaders = max(loaders, 1)
	switch {
	case c.LoadPath == LoadNVMe:
		return c.NVMeBytesPerS / float64(c.GPUsPerServer)
	case c.LoadPath == LoadPeer && peers > 0:
		return c.NICBytesPerS
	}
	return math.Min(c.NetworkBytesPerS/float64(loaders), c.NICBytesPerS)
}

// RestartColdStart returns the cold start of replica i of the fleet
// restarting now under c, for failure repairs and restarts: its own weight
// bytes per GPU (its group's), loaded beside the replicas already
// recovering (their GPUs share a network store), from a serving replica of
// its model when the path is "peer".
func (f *Fleet) RestartColdStart(c ColdStartConfig) func(i int) sim.Time {
	p := f.Pool
	gpus := func(i int) int { return p.ReplicaTP(i) }
	weights := func(i int) float64 {
		if g := p.GroupOf(i); g != nil {
			return g.Memory.WeightBytes
		}
		return p.Memory.WeightBytes
	}
	model := func(i int) int16 {
		if p.model != nil {
			return p.model[i]
		}
		return 0
	}
	return func(i int) sim.Time {
		loaders, peers := gpus(i), 0
		for j, r := range p.Replicas {
			switch {
			case j == i:
			case r.Recovering():
				loaders += gpus(j)
			case r.Up() && !r.Hung() && model(j) == model(i):
				peers++
			}
		}
		return c.Duration(weights(i), loaders, peers)
	}
}

// Duration is the cold start of a replica whose GPUs each hold
// weightBytesPerGPU, with loaders GPUs loading at once and peers replicas
// serving. The bandwidth share is taken when the load starts and held for
// its length: later loaders do not slow it (an approximation of fair
// sharing that is exact when starts do not overlap).
func (c *ColdStartConfig) Duration(weightBytesPerGPU float64, loaders, peers int) sim.Time {
	load := weightBytesPerGPU / c.LoadBytesPerS(loaders, peers)
	return sim.FromSeconds(c.ProvisionS + c.EngineStartS + load + c.WarmupS)
}
