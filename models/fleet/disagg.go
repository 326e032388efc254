package fleet

import (
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Disaggregated serving (xPyD; DistServe, Splitwise, Mooncake, Dynamo,
// llm-d): the fleet's primary pool (the scenario's [cluster]) only
// prefills, a second pool only decodes, and each request's prompt KV moves
// from its prefill replica to a decode replica over a link between them.
//
// The request path, in the order a request lives it (disagg_flow.go):
//
//  1. The gateway routes the request to a prefill replica as usual; that
//     replica serves it as a request for one output token (the prefill's
//     token is not streamed: the decode replica produces every output
//     token, as in vLLM's and llm-d's P/D proxies).
//  2. When the prefill finishes, the prefill replica keeps the prompt's KV
//     blocks (heldKV) until the transfer ends.
//  3. A decode replica with room reserves the blocks the prompt needs
//     (decode admission needs free KV blocks); while no decode replica
//     has room, requests wait in FIFO order holding their prefill KV:
//     backpressure, which fills the prefill pool's KV and so slows its
//     admissions.
//  4. The KV moves over NVLink when both replicas are in one NVLink domain,
//     else over the GPUs' RDMA NICs; every replica's send and receive side
//     of each link kind is a FIFO queue serving bytes at its line rate, and
//     a transfer is done when both of its ends have served it, so
//     concurrent transfers contend at either end.
//  5. When it lands, the prefill replica frees its copy and the request
//     joins the decode replica's queue with its prompt KV in place (only
//     the last prompt token is computed again, for its logits, as on a
//     full prefix-cache hit).
//
// A decode replica that fails loses the KV of what it holds: those
// requests are prefilled again (counted as waste). A prefill replica that
// fails loses the KV it holds for requests waiting or in transfer: they
// are prefilled again too.

// DisaggConfig is a scenario's [disagg] table (without its router, which
// the experiments package adds).
type DisaggConfig struct {
	// Enabled turns disaggregation on: [cluster] becomes the prefill pool.
	// Default false.
	Enabled bool `toml:"enabled"`
	// Link is how KV moves from prefill to decode replicas: "auto"
	// (default: NVLink when the two replicas share an NVLink domain, RDMA
	// otherwise), "nvlink" (every pair must share a domain) or "rdma"
	// (always over the NICs).
	Link string `toml:"link"`
	// Layerwise streams each layer's KV as soon as the prefill has computed
	// it (DistServe, Mooncake), so the transfer overlaps the prefill and
	// only the last layer's share is left when it ends. It applies when a
	// decode replica has room at the prefill's end (the reservation is then
	// taken to have been made at its start: an optimistic assumption for
	// decode memory); a request that waited for room sends after the wait.
	// Default false.
	Layerwise bool `toml:"layerwise"`
	// DecodeChoice is how a prefilled request's decode replica is chosen
	// among those with room for its KV: "router" (default: the
	// [disagg.router]) or "transfer-aware" (where its KV would land first,
	// given the link kind, NVLink or RDMA, and the queues at both ends;
	// then the fewest outstanding requests).
	DecodeChoice string `toml:"decode_choice"`
	// Decode is the decode pool: the keys of [cluster]. Its gpu, model and
	// tp default to the cluster's; model must be the cluster's.
	Decode FleetConfig `toml:"decode"`
}

// Disaggregation link kinds.
const (
	LinkAuto   = "auto"
	LinkNVLink = "nvlink"
	LinkRDMA   = "rdma"
)

// Decode choices (DisaggConfig.DecodeChoice).
const (
	DecodeRouter        = "router"
	DecodeTransferAware = "transfer-aware"
)

// DisaggLinks lists the values of DisaggConfig.Link.
var DisaggLinks = []string{LinkAuto, LinkNVLink, LinkRDMA}

// DefaultDisaggConfig is [disagg] with every default: off, auto links, a
// decode pool whose gpu, model and tp follow the cluster's.
func DefaultDisaggConfig() DisaggConfig {
	return DisaggConfig{Link: LinkAuto, DecodeChoice: DecodeRouter, Decode: FleetConfig{Replicas: 1, Replica: engine.DefaultReplicaConfig()}}
}

// ResolveDefaults fills the decode pool's gpu, model and tp from the
// cluster's where they are not set.
func (c *DisaggConfig) ResolveDefaults(cluster FleetConfig) {
	if c.Decode.GPU == "" {
		c.Decode.GPU = cluster.GPU
	}
	if c.Decode.Model == "" {
		c.Decode.Model = cluster.Model
	}
	if c.Decode.TP == 0 {
		c.Decode.TP = cluster.TP
	}
}

// Validate records every problem of the disaggregated fleet (cluster is
// the prefill pool) under prefix, e.g. "disagg", and returns the decode
// pool's memory plan; call ResolveDefaults first.
func (c *DisaggConfig) Validate(cat *hw.Catalog, cluster FleetConfig, prefix string, ps *config.Problems) engine.MemoryPlan {
	ps.OneOf(config.Key(prefix, "link"), c.Link, DisaggLinks)
	ps.OneOf(config.Key(prefix, "decode_choice"), c.DecodeChoice, []string{DecodeRouter, DecodeTransferAware})
	n := len(ps.List)
	mem := c.Decode.Validate(cat, config.Key(prefix, "decode"), ps)
	if c.Decode.Model != cluster.Model {
		ps.Add(config.Key(prefix, "decode", "model"), "must be the prefill pool's model (cluster.model = %q), found %q", cluster.Model, c.Decode.Model)
	}
	if cluster.Replica.Allocator == engine.AllocContiguous {
		ps.Add("cluster.replica.allocator", "disaggregation needs the paged allocator, found %q", cluster.Replica.Allocator)
	}
	if c.Decode.Replica.Allocator == engine.AllocContiguous {
		ps.Add(config.Key(prefix, "decode", "replica", "allocator"), "disaggregation needs the paged allocator, found %q", c.Decode.Replica.Allocator)
	}
	if cluster.Replica.Batching == engine.BatchStatic || c.Decode.Replica.Batching == engine.BatchStatic {
		ps.Add(config.Key(prefix, "enabled"), "disaggregation needs iteration-level batching (continuous or chunked) in both pools")
	}
	if len(ps.List) > n || cluster.Replicas <= 0 || cluster.TP <= 0 {
		return mem
	}
	gp, okP := cat.GPUs[cluster.GPU]
	if !okP {
		return mem
	}
	gd := cat.GPUs[c.Decode.GPU]
	t := newDisaggTopology(cluster, gp, c.Decode, gd, c.Link)
	if err := t.check(); err != nil {
		ps.Add(config.Key(prefix, "link"), "%v", err)
	}
	return mem
}

// disaggTopology places both pools on NVLink domains and says which link
// joins a prefill replica to a decode replica. The prefill pool sits where
// its own placement puts it; the decode pool packs the domains that follow
// (same GPU type: the first free replica-aligned GPU after the prefill pool, so
// a 1P:3D fleet of TP=2 replicas on an 8-GPU server shares one domain), or
// domains of its own (another GPU type: never one NVLink domain).
type disaggTopology struct {
	pre, dec       Placement
	gpuP, gpuD     hw.GPU
	sameGPU        bool
	decOffset      int // first GPU of the decode pool
	link           string
	nPre, nDec     int
	lanes          int     // GPUs moving a request's KV in parallel: min of the TP degrees
	nvlinkBytesPer float64 // one direction, per GPU
	nicBytesPer    float64 // one direction, per GPU
}

func newDisaggTopology(cluster FleetConfig, gp hw.GPU, dec FleetConfig, gd hw.GPU, link string) *disaggTopology {
	t := &disaggTopology{pre: placement(cluster, gp.DomainGPUs), dec: placement(dec, gd.DomainGPUs), gpuP: gp, gpuD: gd,
		sameGPU: gp.Name == gd.Name, link: link, nPre: cluster.Replicas, nDec: dec.Replicas, lanes: min(kvLanes(cluster), kvLanes(dec))}
	end := t.pre.GPUs
	if t.pre.Spread {
		end = t.pre.Domains * gp.DomainGPUs
	}
	w := dec.GPUsPerReplica()
	t.decOffset = (end + w - 1) / w * w
	// NVLink: half the bidirectional per-GPU figure each way (catalog.go).
	t.nvlinkBytesPer = min(gp.NVLinkBytesPerS, gd.NVLinkBytesPerS) / 2
	t.nicBytesPer = min(gp.NICBytesPerS, gd.NICBytesPerS)
	return t
}

// kvLanes is the GPUs that hold one request's KV in a replica of c: the
// TP group of one data-parallel rank (a request lives on one rank), times
// the pipeline stages (each holds its layers' share).
func kvLanes(c FleetConfig) int {
	l := c.Layout()
	return l.TP * l.PP
}

// domains are the NVLink domains of prefill replica p and decode replica d.
func (t *disaggTopology) domains(p, d int) (dp, dd int) {
	fp, _ := t.pre.ReplicaGPUs(p)
	fd, _ := t.dec.ReplicaGPUs(d)
	return fp / t.gpuP.DomainGPUs, (t.decOffset + fd) / t.gpuD.DomainGPUs
}

// kind is the link between prefill replica p and decode replica d.
func (t *disaggTopology) kind(p, d int) int {
	if t.link == LinkRDMA {
		return linkRDMA
	}
	if t.link == LinkNVLink {
		return linkNVLink
	}
	if dp, dd := t.domains(p, d); t.sameGPU && dp == dd {
		return linkNVLink
	}
	return linkRDMA
}

// bytesPerS is the bandwidth one transfer over link kind k gets: every lane
// (GPU pair) moves its share at once.
func (t *disaggTopology) bytesPerS(k int) float64 {
	if k == linkNVLink {
		return float64(t.lanes) * t.nvlinkBytesPer
	}
	return float64(t.lanes) * t.nicBytesPer
}

// check reports a link the topology does not have.
func (t *disaggTopology) check() error {
	for p := 0; p < t.nPre; p++ {
		for d := 0; d < t.nDec; d++ {
			k := t.kind(p, d)
			if k == linkNVLink {
				dp, dd := t.domains(p, d)
				if !t.sameGPU || dp != dd {
					return fmt.Errorf("%q: prefill replica %d (%s, NVLink domain %d) and decode replica %d (%s, domain %d) do not share an NVLink domain; use \"auto\" or \"rdma\"",
						t.link, p, t.gpuP.Name, dp, d, t.gpuD.Name, dd)
				}
			}
			if k == linkRDMA && !(t.nicBytesPer > 0) {
				return fmt.Errorf("prefill replica %d and decode replica %d need an RDMA link, but %s/%s have no NIC bandwidth (nic_bytes_per_s %g/%g)",
					p, d, t.gpuP.Name, t.gpuD.Name, t.gpuP.NICBytesPerS, t.gpuD.NICBytesPerS)
			}
		}
	}
	return nil
}

// Link kinds (indices into the link queues).
const (
	linkNVLink = iota
	linkRDMA
	nLinks
)

// LinkName names link kind k for reports.
func LinkName(k int) string {
	if k == linkNVLink {
		return LinkNVLink
	}
	return LinkRDMA
}

// DisaggStats counts what the KV handoff did.
type DisaggStats struct {
	// Transfers is KV transfers completed; BytesMoved their bytes (the sum
	// over transferred requests of wire bytes per token × prompt tokens).
	Transfers  int64
	BytesMoved float64
	// ByLink is transfers and bytes per link kind (LinkName).
	TransfersByLink [nLinks]int64
	BytesByLink     [nLinks]float64
	// LinkBusyNs is the time each link kind's send sides were busy,
	// summed over replicas (each transfer's bytes over its bandwidth).
	LinkBusyNs [nLinks]int64
	// Backpressured is requests whose prefill output had to wait for a
	// decode replica with free KV; WaitingPeak the most waiting at once;
	// HeldBlockNs ∫ blocks held on prefill replicas by waiting or
	// transferring requests dt.
	Backpressured int64
	WaitingPeak   int
	HeldBlockNs   float64
	// RePrefills is requests prefilled again because the KV they had was
	// lost (a failed decode or prefill replica); RePrefillTokens their
	// prompt tokens, computed twice.
	RePrefills      int64
	RePrefillTokens int64
	// DecodeLost is the re-prefills whose KV was lost with a decode
	// replica (a failure, a probe's restart, a drain's end); the rest lost
	// it with a prefill replica.
	DecodeLost int64
	// Rerouted is transfers whose decode replica failed under them: the
	// KV, still held by the prefill replica, went to another one.
	Rerouted int64
	// TooLong is requests whose prompt can never fit a decode replica.
	TooLong int64
}

// TTFTSplit is the time to first token of completed requests split into
// its stages, in milliseconds; the six add up to the TTFT. PrefillQueue
// runs from arrival to the (last) prefill's first admission (the front
// end included), Prefill to its end, DecodeWait while the prefill output
// waits for a decode replica with free KV (backpressure), Transfer while
// its KV queues for and crosses the link, DecodeFirst from its landing to
// the first token (the decode queue and one step), ToClient from there to
// the client (the engine's output lag and the stream).
type TTFTSplit struct {
	PrefillQueue, Prefill, DecodeWait, Transfer, DecodeFirst, ToClient *quantile.Sketch
}

// TransferRecord is one KV transfer, for tests and traces.
type TransferRecord struct {
	Prefill, Decode int // replica indices within their pools
	Link            int // linkNVLink or linkRDMA (LinkName)
	Bytes           float64
	BytesPerS       float64
	Ready           sim.Time // when both ends were reserved for it
	// PrefillStart is when its prefill began; a layer-wise transfer may
	// start before Ready, never before PrefillStart.
	PrefillStart sim.Time
	Layerwise    bool
	// SendStart and RecvStart are when the sending and the receiving end
	// began serving its bytes (each for Bytes/BytesPerS); End is when both
	// had.
	SendStart, RecvStart, End sim.Time
}

// wireBytesPerToken is the KV bytes per prompt token a transfer moves: the
// decode side's layout (each of its TP GPUs needs its heads, replicated
// heads included) in the narrower of the two KV precisions (assumption:
// the sender converts, e.g. BF16 → FP8, before sending, as quantising on
// the sender halves the bytes on the wire).
func wireBytesPerToken(llm hw.LLM, pre, dec FleetConfig) float64 {
	b := math.Min(hw.Precision(pre.Replica.KVDType).Bytes(), hw.Precision(dec.Replica.KVDType).Bytes())
	return llm.KVBytesPerTokenGPU(b, dec.TP) * float64(dec.TP)
}

// NVLinkDomains is the NVLink domains (servers, racks) both pools occupy:
// the prefill pool's, and those of the decode pool's replicas that lie
// outside them (same GPU type: the decode pool packs the GPUs after the
// prefill pool's and may share its last domain) or all of the decode
// pool's (another GPU type: other servers).
func (d *Disagg) NVLinkDomains() int {
	t := d.topo
	n := t.pre.Domains
	if !t.sameGPU {
		return n + t.dec.Domains
	}
	g := t.gpuD.DomainGPUs
	last := n - 1 // the highest domain counted so far; decode domains only grow with j
	seen := map[int]bool{}
	for j := 0; j < t.nDec; j++ {
		f, k := t.dec.ReplicaGPUs(j)
		for dom := (t.decOffset + f) / g; dom <= (t.decOffset+f+k-1)/g; dom++ {
			if dom > last && !seen[dom] {
				seen[dom] = true
				n++
			}
		}
	}
	return n
}
