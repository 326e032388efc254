package engine

import (
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// Tiered KV cache (LMCache, Mooncake Store, vLLM's CPU offload): below each
// replica's HBM prefix cache sit host DRAM and local SSD (per replica) and
// a store shared by the whole fleet, each an LRU of prefix segments with a
// capacity, a read bandwidth and a latency.
//
//   - Writes: a segment computed by a prefill (and a finished session turn)
//     is written through to every tier, as LMCache stores KV after the
//     prefill; so a block the HBM cache evicts is still found below it
//     (spilled, not lost) while the tier's own LRU keeps it. Writes are
//     asynchronous offloads and cost no step time (assumption).
//   - Reads: admitting a request, its leading segments missing in HBM but
//     held by a tier are loaded into HBM (fresh blocks) instead of being
//     recomputed; the step that admits it takes the loads' time longer
//     (latency + bytes / bandwidth, tier by tier, in order), or, with
//     layer-wise loading, max(its compute, the loads).
//   - The shared store lets a replica hit a prefix another replica
//     computed.

// KVTiersConfig is a scenario's [kv_tiers] table.
type KVTiersConfig struct {
	// Enabled turns the tiers on. Default false.
	Enabled bool `toml:"enabled"`
	// HostDRAMGBPerGPU is host DRAM for KV per GPU of a replica, in GB
	// (a server with 2 TB for 8 GPUs: 256). 0: no host tier.
	HostDRAMGBPerGPU float64 `toml:"host_dram_gb_per_gpu"`
	// HostReadGBPerS is each GPU's host-to-device bandwidth in GB/s.
	// Default 50 (assumption: PCIe Gen5 x16 is 63 GB/s per direction by
	// the PCI-SIG figure; ~80% of it for KV block copies).
	HostReadGBPerS float64 `toml:"host_read_gb_per_s"`
	// HostLatencyUs is a host load's fixed cost in µs. Default 10
	// (assumption: a DMA setup and launch).
	HostLatencyUs float64 `toml:"host_latency_us"`
	// SSDGBPerGPU is local NVMe for KV per GPU of a replica, in GB. 0: no
	// SSD tier.
	SSDGBPerGPU float64 `toml:"ssd_gb_per_gpu"`
	// SSDReadGBPerS is the SSD read bandwidth per GPU in GB/s. Default 6
	// (assumption: one PCIe Gen4 NVMe drive, ~7 GB/s sequential read by
	// vendors' datasheets, per GPU as in DGX H100's 8 data drives).
	SSDReadGBPerS float64 `toml:"ssd_read_gb_per_s"`
	// SSDLatencyUs is an SSD load's fixed cost in µs. Default 100
	// (assumption: NVMe read latency plus a host bounce).
	SSDLatencyUs float64 `toml:"ssd_latency_us"`
	// StoreGB is the fleet's shared KV store in GB (Mooncake Store). 0: no
	// store.
	StoreGB float64 `toml:"store_gb"`
	// StoreReadGBPerS is the store's read bandwidth per GPU in GB/s; 0
	// (default) uses the GPU's RDMA NIC (catalog nic_bytes_per_s).
	StoreReadGBPerS float64 `toml:"store_read_gb_per_s"`
	// StoreLatencyUs is a store load's fixed cost in µs. Default 50
	// (assumption: an RDMA round trip plus the store's lookup).
	StoreLatencyUs float64 `toml:"store_latency_us"`
	// Layerwise overlaps loads with the step's compute, layer by layer.
	// Default false.
	Layerwise bool `toml:"layerwise"`
	// Prices of the tiers' capacity in USD per GB-month, added to the
	// fleet's cost. Defaults (assumptions, to be replaced by a quote):
	// host DRAM and the store (DRAM-backed, as Mooncake Store) 0.12, from
	// ~$4/GB for DDR5 server memory written off over 36 months; SSD 0.003,
	// from ~$0.10/GB for enterprise NVMe over 36 months.
	HostUSDPerGBMonth  float64 `toml:"host_usd_per_gb_month"`
	SSDUSDPerGBMonth   float64 `toml:"ssd_usd_per_gb_month"`
	StoreUSDPerGBMonth float64 `toml:"store_usd_per_gb_month"`
}

// DefaultKVTiersConfig is [kv_tiers] with every default (off).
func DefaultKVTiersConfig() KVTiersConfig {
	return KVTiersConfig{HostReadGBPerS: 50, HostLatencyUs: 10, SSDReadGBPerS: 6, SSDLatencyUs: 100, StoreLatencyUs: 50,
		HostUSDPerGBMonth: 0.12, SSDUSDPerGBMonth: 0.003, StoreUSDPerGBMonth: 0.12}
}

// Validate records the problems of an enabled [kv_tiers] under prefix;
// gpus are the fleet's GPUs (the cluster's, or each group's: their NICs
// carry store reads by default).
func (c *KVTiersConfig) Validate(gpus []hw.GPU, rc ReplicaConfig, prefix string, ps *config.Problems) {
	if !c.Enabled {
		return
	}
	for _, k := range []struct {
		key string
		v   float64
	}{{"host_dram_gb_per_gpu", c.HostDRAMGBPerGPU}, {"host_latency_us", c.HostLatencyUs}, {"ssd_gb_per_gpu", c.SSDGBPerGPU},
		{"ssd_latency_us", c.SSDLatencyUs}, {"store_gb", c.StoreGB}, {"store_latency_us", c.StoreLatencyUs},
		{"store_read_gb_per_s", c.StoreReadGBPerS}, {"host_usd_per_gb_month", c.HostUSDPerGBMonth},
		{"ssd_usd_per_gb_month", c.SSDUSDPerGBMonth}, {"store_usd_per_gb_month", c.StoreUSDPerGBMonth}} {
		ps.NonNegative(config.Key(prefix, k.key), k.v)
	}
	if c.HostDRAMGBPerGPU > 0 && !(c.HostReadGBPerS > 0) {
		ps.Add(config.Key(prefix, "host_read_gb_per_s"), "a host DRAM tier needs a bandwidth > 0, found %v", c.HostReadGBPerS)
	}
	if c.SSDGBPerGPU > 0 && !(c.SSDReadGBPerS > 0) {
		ps.Add(config.Key(prefix, "ssd_read_gb_per_s"), "an SSD tier needs a bandwidth > 0, found %v", c.SSDReadGBPerS)
	}
	for _, gpu := range gpus {
		if c.StoreGB > 0 && c.StoreReadGBPerS == 0 && !(gpu.NICBytesPerS > 0) {
			ps.Add(config.Key(prefix, "store_read_gb_per_s"), "the shared store reads over %s's RDMA NIC, which has no bandwidth (nic_bytes_per_s = %g); set a bandwidth > 0", gpu.Name, gpu.NICBytesPerS)
			break
		}
	}
	if !rc.PrefixCaching || rc.Allocator == AllocContiguous {
		ps.Add(config.Key(prefix, "enabled"), "KV tiers extend the prefix cache: they need cluster.replica.prefix_caching = true and the paged allocator")
	}
}

// kvTier is one tier: an LRU of prefix segments within a capacity.
type KVTier struct {
	name      string
	capBlocks int64
	used      int64
	entries   map[uint64]*tierEntry
	lru       tierEntry // sentinel: lru.next is the least recently used
	spare     []*tierEntry
	Stats     TierStats
}

// TierStats counts one tier's work over the run.
type TierStats struct {
	Name string
	// CapacityBytes is its capacity (per replica, or the store's).
	CapacityBytes float64
	// Hits is segments loaded from it into HBM, HitTokens their tokens.
	Hits, HitTokens int64
	// BytesRead and BytesWritten are KV bytes loaded and written through.
	BytesRead, BytesWritten float64
	// LoadNs is the time its loads added to (or overlapped with) steps.
	LoadNs int64
	// Evictions is segments its LRU dropped.
	Evictions int64
}

type tierEntry struct {
	hash       uint64
	blocks     int64
	prev, next *tierEntry
}

func NewKVTier(name string, capBlocks int64, bytesPerBlock float64) *KVTier {
	t := &KVTier{name: name, capBlocks: capBlocks, entries: map[uint64]*tierEntry{}}
	t.lru.next, t.lru.prev = &t.lru, &t.lru
	t.Stats.Name, t.Stats.CapacityBytes = name, float64(capBlocks)*bytesPerBlock
	return t
}

// has reports whether the tier holds hash, and marks it recently used.
func (t *KVTier) has(hash uint64) bool {
	e := t.entries[hash]
	if e == nil {
		return false
	}
	t.unlink(e)
	t.pushBack(e)
	return true
}

// put writes a segment of blocks blocks (or refreshes it), evicting the
// least recently used to make room; one larger than the tier is skipped.
func (t *KVTier) put(hash uint64, blocks int64) bool {
	if e := t.entries[hash]; e != nil {
		t.unlink(e)
		t.pushBack(e)
		return false
	}
	if blocks > t.capBlocks {
		return false
	}
	for t.used+blocks > t.capBlocks {
		old := t.lru.next
		t.unlink(old)
		delete(t.entries, old.hash)
		t.used -= old.blocks
		t.Stats.Evictions++
		t.spare = append(t.spare, old)
	}
	var e *tierEntry
	if n := len(t.spare); n > 0 {
		e = t.spare[n-1]
		t.spare = t.spare[:n-1]
	} else {
		e = &tierEntry{}
	}
	*e = tierEntry{hash: hash, blocks: blocks}
	t.entries[hash] = e
	t.used += blocks
	t.pushBack(e)
	return true
}

func (t *KVTier) unlink(e *tierEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (t *KVTier) pushBack(e *tierEntry) {
	e.prev, e.next = t.lru.prev, &t.lru
	t.lru.prev.next = e
	t.lru.prev = e
}

// tierLink is a replica's path to a tier: its read bandwidth and latency,
// and, for the shared store, how the replica's segments are kept there:
// keyed by their hash xor salt (its KV format's: a replica finds only
// segments of its own format) and sized in the store's blocks (scale of
// them per block of its own).
type tierLink struct {
	t       *KVTier
	bytesPS float64
	latency float64 // seconds
	salt    uint64
	scale   float64
}

// units is blocks of the replica's in the tier's blocks.
func (l *tierLink) units(blocks int64) int64 {
	if l.scale == 1 {
		return blocks
	}
	return int64(math.Ceil(float64(blocks) * l.scale))
}

// replicaTiers is one replica's tiers, fastest first, and the load time
// owed by the step being planned.
type replicaTiers struct {
	links         []tierLink
	bytesPerBlock float64 // one block across the replica's TP group
	layerwise     bool
	loadS         float64
	held          []*CacheEntry
}

// KVTiers are the fleet's tiers: each replica's own, then the shared store.
type KVTiers struct {
	// PerReplica is each replica's tiers (the store, shared, is last when
	// configured).
	PerReplica [][]*KVTier
	// Store is the shared store, nil without one.
	Store *KVTier
}

// Stats sums each tier kind over the replicas (the store once), fastest
// first.
func (k *KVTiers) Stats() []TierStats {
	var out []TierStats
	idx := map[string]int{}
	for _, ts := range k.PerReplica {
		for _, t := range ts {
			if t == k.Store {
				continue
			}
			i, ok := idx[t.name]
			if !ok {
				i = len(out)
				idx[t.name] = i
				out = append(out, TierStats{Name: t.name})
			}
			s := &out[i]
			s.CapacityBytes += t.Stats.CapacityBytes
			s.Hits += t.Stats.Hits
			s.HitTokens += t.Stats.HitTokens
			s.BytesRead += t.Stats.BytesRead
			s.BytesWritten += t.Stats.BytesWritten
			s.LoadNs += t.Stats.LoadNs
			s.Evictions += t.Stats.Evictions
		}
	}
	if k.Store != nil {
		out = append(out, k.Store.Stats)
	}
	return out
}

// TierShape is what sizes one replica's tiers.
type TierShape struct {
	// KVBytesPerBlock is one KV block on one GPU of the replica's TP group
	// of TP GPUs.
	KVBytesPerBlock float64
	TP              int
	// NICBytesPerS is its GPU's NIC bandwidth, which reads the store
	// unless the configuration sets a bandwidth.
	NICBytesPerS float64
	// Format tells the fleet's KV formats apart (a fleet of groups: its
	// model and its KV bytes per block): a replica finds in the shared
	// store only the segments of its own format. 0 for the first.
	Format int
}

// formatSalt keys format f's segments in the shared store apart from the
// others' (0 for the first format: a fleet of one kind's keys are the
// hashes). The constant is 2^64 over the golden ratio, odd: distinct
// formats get distinct salts.
func formatSalt(f int) uint64 { return uint64(f) * 0x9E3779B97F4A7C15 }

// NewKVTiers gives every replica of rs its tiers (cfg) below HBM, sharing
// one store, each sized by its shape (shape(i) for replica i): per-replica
// tiers hold cfg's GB per GPU of its TP group, in its own blocks, read at
// cfg's bandwidth per GPU; the store holds cfg.StoreGB in replica 0's
// blocks (another format's segment takes its bytes' worth of them). Call
// before the run starts.
func NewKVTiers(rs []*Replica, cfg KVTiersConfig, shape func(i int) TierShape) *KVTiers {
	blocksOf := func(gb, bpb float64) int64 {
		if bpb <= 0 {
			return 0
		}
		return int64(gb * 1e9 / bpb)
	}
	k := &KVTiers{}
	var storeBpb float64
	if len(rs) > 0 {
		s0 := shape(0)
		storeBpb = s0.KVBytesPerBlock * float64(s0.TP)
	}
	if cfg.StoreGB > 0 {
		k.Store = NewKVTier("store", blocksOf(cfg.StoreGB, storeBpb), storeBpb)
	}
	for i, r := range rs {
		sh := shape(i)
		tpf := float64(sh.TP)
		bpb := sh.KVBytesPerBlock * tpf
		rt := &replicaTiers{bytesPerBlock: bpb, layerwise: cfg.Layerwise}
		var own []*KVTier
		if cfg.HostDRAMGBPerGPU > 0 {
			t := NewKVTier("host_dram", blocksOf(cfg.HostDRAMGBPerGPU*tpf, bpb), bpb)
			own = append(own, t)
			rt.links = append(rt.links, tierLink{t, cfg.HostReadGBPerS * 1e9 * tpf, cfg.HostLatencyUs * 1e-6, 0, 1})
		}
		if cfg.SSDGBPerGPU > 0 {
			t := NewKVTier("ssd", blocksOf(cfg.SSDGBPerGPU*tpf, bpb), bpb)
			own = append(own, t)
			rt.links = append(rt.links, tierLink{t, cfg.SSDReadGBPerS * 1e9 * tpf, cfg.SSDLatencyUs * 1e-6, 0, 1})
		}
		if k.Store != nil {
			storeBps := cfg.StoreReadGBPerS * 1e9
			if storeBps == 0 {
				storeBps = sh.NICBytesPerS
			}
			scale := 1.0
			if bpb != storeBpb && storeBpb > 0 {
				scale = bpb / storeBpb
			}
			own = append(own, k.Store)
			rt.links = append(rt.links, tierLink{k.Store, storeBps * tpf, cfg.StoreLatencyUs * 1e-6, formatSalt(sh.Format), scale})
		}
		k.PerReplica = append(k.PerReplica, own)
		r.tiers = rt
		if r.prefillOnly {
			// A disaggregated prefill replica: tiered, and it holds its KV
			// for the transfer (Mooncake: the prefill pool writes the store).
			r.alloc = heldTieredKV{tieredKV{pagedKV{r: r}, rt}, r.handoff}
		} else {
			r.alloc = tieredKV{pagedKV{r: r}, rt}
		}
	}
	return k
}

// withLoad is a step of computeNs planned with the loads it admitted
// (replica_step.go): their time is added, or overlapped layer-wise.
func (r *Replica) withLoad(computeNs sim.Time) sim.Time {
	if r.tiers == nil || r.tiers.loadS == 0 {
		return computeNs
	}
	load := sim.Time(math.Ceil(r.tiers.loadS * 1e9))
	r.tiers.loadS = 0
	if r.tiers.layerwise {
		return max(computeNs, load)
	}
	return computeNs + load
}

// tieredKV is the paged allocator of a replica with KV tiers: admission
// first loads the request's leading segments that HBM lacks and a tier
// holds; prefills and finished session turns are written through.
type tieredKV struct {
	pagedKV
	t *replicaTiers
}

func (a tieredKV) place(s *seq, reserve int64) (int32, bool) {
	r := a.r
	if !a.pagedKV.fits(s, reserve) {
		return 0, false
	}
	rt := a.t
	held := rt.held[:0]
	var cum int64
	for _, seg := range s.req.Prefix {
		prev := cum
		cum += int64(seg.Tokens)
		if e := r.kv.Lookup(seg.Hash); e != nil {
			r.kv.Acquire(e) // keep it while later segments are loaded
			held = append(held, e)
			continue
		}
		b := cum/r.blockTokens - prev/r.blockTokens
		var from *tierLink
		for i := range rt.links {
			if rt.links[i].t.has(seg.Hash ^ rt.links[i].salt) {
				from = &rt.links[i]
				break
			}
		}
		if from == nil || !r.kv.Alloc(b) {
			break
		}
		e, _ := r.kv.Insert(seg.Hash, b, int32(b*r.blockTokens))
		held = append(held, e)
		bytes := float64(b) * rt.bytesPerBlock
		d := from.latency + bytes/from.bytesPS
		rt.loadS += d
		st := &from.t.Stats
		st.Hits++
		st.HitTokens += b * r.blockTokens
		st.BytesRead += bytes
		st.LoadNs += int64(math.Ceil(d * 1e9))
	}
	done, ok := a.pagedKV.place(s, reserve)
	for _, e := range held {
		r.kv.Unref(e)
	}
	clear(held)
	rt.held = held[:0]
	return done, ok
}

func (a tieredKV) prefilled(s *seq) {
	a.pagedKV.prefilled(s)
	var before int64
	for _, seg := range s.req.Prefix {
		a.write(seg.Hash, a.segmentBlocks(before, seg))
		before += int64(seg.Tokens)
	}
}

func (a tieredKV) finish(s *seq) {
	if s.req.Session != 0 && int(s.hitSegs) == len(s.req.Prefix) {
		if c := workloads.ContinuationSegment(&s.req); c.Tokens > 0 {
			a.write(c.Hash, min(a.segmentBlocks(int64(s.req.PrefixTokens()), c), s.tailBlocks))
		}
	}
	a.pagedKV.finish(s)
}

// heldTieredKV is a disaggregated prefill replica's allocator with KV
// tiers: it loads and writes through like tieredKV, and keeps a finished
// prefill's KV for its transfer like heldKV.
type heldTieredKV struct {
	tieredKV
	h HandOff
}

func (a heldTieredKV) finish(s *seq) { handOver(a.h, a.r, s) }

// write puts a segment in every tier.
func (a tieredKV) write(hash uint64, blocks int64) {
	for i := range a.t.links {
		l := &a.t.links[i]
		if l.t.put(hash^l.salt, l.units(blocks)) {
			l.t.Stats.BytesWritten += float64(blocks) * a.t.bytesPerBlock
		}
	}
}

// PrefixSavingS is the prefill seconds the replica would not spend on req,
// at perTokS seconds of recompute per prompt token: its leading prompt
// segments found in HBM, at their recompute time, and those found in a KV
// tier, at their recompute time less their load time. It reads the caches
// without touching their LRU order.
func (r *Replica) PrefixSavingS(req *workloads.Request, perTokS float64) float64 {
	if !r.cfg.PrefixCaching || r.down {
		return 0
	}
	var saved float64
	var cum int64
	for _, seg := range req.Prefix {
		prev := cum
		cum += int64(seg.Tokens)
		tokens := float64((cum/r.blockTokens - prev/r.blockTokens) * r.blockTokens)
		if r.kv.Lookup(seg.Hash) != nil {
			saved += tokens * perTokS
			continue
		}
		if r.tiers == nil {
			break
		}
		found := false
		for _, l := range r.tiers.links {
			if _, ok := l.t.entries[seg.Hash^l.salt]; ok {
				bytes := tokens / float64(r.blockTokens) * r.tiers.bytesPerBlock
				saved += tokens*perTokS - (l.latency + bytes/l.bytesPS)
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	return saved
}
