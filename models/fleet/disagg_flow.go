package fleet

import (
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Disagg is a disaggregated fleet's decode pool and the KV handoff between
// the pools (disagg.go describes the request path). It is the Observer of
// every replica of both pools: it keeps what the gateway must not see (the
// prefill's end, the decode's start) and passes on the rest.
type Disagg struct {
	eng    *sim.Engine
	gw     *Gateway
	pool   *Pool // the prefill pool
	router Router
	topo   *disaggTopology

	// Decode is the decode pool (its replicas, rotation, warm spares,
	// breaker and health, as the primary pool's); DecodeGPUs its GPUs.
	Decode     *Pool
	DecodeGPUs int
	decBase    int // fleet index of decode replica 0
	decBlock   int64
	decUsable  int64 // blocks a decode replica can ever give one request
	avail      []bool
	wirePerTok float64
	layerwise  bool
	layers     int
	// transferAware picks the decode replica where the KV lands first
	// (DisaggConfig.DecodeChoice) instead of asking the router.
	transferAware bool

	live    map[*engine.Copy]*handoff
	held    [][]*handoff // per prefill replica: handoffs holding KV there
	waitQ   []*handoff   // waiting for a decode replica with room, FIFO
	waitH   int
	waiting int
	pending []int64 // per decode replica: blocks of landed requests not admitted yet
	// sendFree and recvFree are when each replica's side of each link kind
	// has served the bytes queued on it (each end is a FIFO queue serving at
	// its line rate; a transfer is done when both its ends have served it)
	// is free: a transfer queues for both ends.
	sendFree, recvFree [nLinks][]sim.Time
	spare              []*handoff
	scratch            []*handoff

	heldBlocks int64
	heldT      sim.Time
	out        engine.Outcome // the Outcome of the CopyDone call under way

	// ProbeStats counts the decode pool's probes, ejections and times to
	// isolate ([policies.probe], as the prefill pool's).
	ProbeStats GatewayStats
	// Autoscaler, when StartDecodeAutoscaler was called, scales the decode
	// pool on its own signal; Spot, when StartDecodeSpot was, interrupts
	// its spot replicas. Nil otherwise.
	Autoscaler *Autoscaler
	Spot       *Spot

	Stats DisaggStats
	Split TTFTSplit
	// OnTransfer, if set, sees every completed transfer (tests, traces).
	OnTransfer func(TransferRecord)
}

// handoff is one request between prefill and decode.
type handoff struct {
	c          *engine.Copy
	gen        uint32
	state      uint8
	dead       bool // withdrawn while queued: dropped when it reaches the head
	queued     bool
	pre, dec   int
	link       int
	heldPos    int
	preKV      *engine.KVCache // the prefill replica's cache its blocks are in
	decKV      *engine.KVCache // the decode replica's cache its reservation is in
	heldBlocks int64
	entries    []*engine.CacheEntry
	resBlocks  int64
	pendBlocks int64
	ev         sim.EventID
	onLand     sim.Action // land(this), bound once per record
	bytes      float64
	bps        float64
	cached     int32
	preempts   int32
	layerwise  bool

	arrival, sched, prefDone, reserved, landed sim.Time
	sendAt, recvAt                             sim.Time // when each end began serving it
}

// Handoff states.
const (
	hsHolding  uint8 = iota // prefilled, holding KV, waiting for a decode replica
	hsTransfer              // KV on the wire
	hsLanded                // in a decode replica's queue, KV in place
	hsDecoding              // admitted by the decode replica
)

var _ engine.Observer = (*Disagg)(nil)

// EnableDisagg turns the fleet into a disaggregated one: its pool becomes
// the prefill pool and cfg.Decode, routed by router, the decode pool.
// cluster is the prefill pool's configuration (as given to NewFleet).
// Call before Start, after any AddFallback.
func (f *Fleet) EnableDisagg(cat *hw.Catalog, cfg DisaggConfig, cluster FleetConfig, router Router, prefix string) error {
	var ps config.Problems
	cfg.ResolveDefaults(cluster)
	mem := cfg.Validate(cat, cluster, prefix, &ps)
	if err := ps.Err(); err != nil {
		return err
	}
	gp, gd, llm := cat.GPUs[cluster.GPU], cat.GPUs[cfg.Decode.GPU], cat.LLMs[cluster.Model]
	dc := cfg.Decode
	// The decode pool's step model is deployed as a co-located replica's
	// is, with its own layout (tp, dp, ep, pp), so an MoE model keeps its
	// expert terms and speculative decoding its verify
	// steps (spec.go: each verify step emits τ tokens on average; the
	// memory plan keeps k KV positions per running sequence).
	dep := dc.Deployment()
	perf, err := hw.NewDeployedStepModel(gd, llm, dep, hw.Precision(dc.Replica.Weights), hw.Precision(dc.Replica.KVDType), cat.Profiles[dc.Replica.Perf.Profile])
	if err != nil {
		return err
	}
	p, g := f.Pool, f.Gateway
	n, m := len(p.Replicas), dc.Replicas
	d := &Disagg{eng: p.eng, gw: g, pool: p, router: router, topo: newDisaggTopology(cluster, gp, dc, gd, cfg.Link),
		DecodeGPUs: m * dc.GPUsPerReplica(), Decode: newPool(p.eng, m), decBase: n + len(g.Fallback.Replicas),
		decBlock: int64(dc.Replica.BlockTokens), avail: make([]bool, m), wirePerTok: wireBytesPerToken(llm, cluster, dc),
		layerwise: cfg.Layerwise, layers: max(llm.Layers, 1), transferAware: cfg.DecodeChoice == DecodeTransferAware,
		live: map[*engine.Copy]*handoff{}, held: make([][]*handoff, n), pending: make([]int64, m),
		Split: TTFTSplit{PrefillQueue: quantile.New(), Prefill: quantile.New(), DecodeWait: quantile.New(),
			Transfer: quantile.New(), DecodeFirst: quantile.New(), ToClient: quantile.New()}}
	d.topo.nPre = n // warm spares are prefill replicas too
	for k := range d.sendFree {
		d.sendFree[k] = make([]sim.Time, n)
		d.recvFree[k] = make([]sim.Time, m)
	}
	dp := d.Decode
	dp.tp, dp.Memory, dp.Place = d.topo.dec.TP, mem, d.topo.dec
	for j := 0; j < m; j++ {
		r := engine.NewReplica(d.decBase+j, p.eng, dc.Replica, perf, mem.KVBlocks, d, &dp.states[j])
		r.ServeDecodes(d)
		dp.Replicas = append(dp.Replicas, r)
	}
	dp.watch() // a decode replica going down or coming up refreshes it
	dp.health = newHealth(p.eng, dp, &d.ProbeStats, f.busy)
	dp.onAvailable = func() { d.pump(d.eng.Now()) }
	if m > 0 {
		d.decUsable = d.Decode.Replicas[0].UsableKVBlocks()
	}
	for i, r := range p.Replicas {
		r.ServePrefills(d)
		r.SetObserver(d)
		i, prev := i, r.OnChange()
		r.SetOnChange(func() {
			if prev != nil {
				prev()
			}
			d.prefillChanged(i)
		})
	}
	dp.Base = d.decBase
	g.pools, g.disagg = append(g.pools, dp), d
	f.Disagg = d
	return nil
}

// DecodeStates is the decode pool's routing snapshot (read-only).
func (d *Disagg) DecodeStates() []engine.ReplicaState { return d.Decode.states }

// Between is the number of requests between the pools: prefilled, and
// not yet in a decode replica's queue (waiting for room, or in transfer).
func (d *Disagg) Between() int {
	n := 0
	for _, l := range d.held {
		n += len(l)
	}
	return n
}

// HeldOn implements HandOff: the prefix-cache entries handoffs hold on r
// and their private blocks there, a prefill replica's held KV, a decode
// replica's reservations (CheckInvariants).
func (d *Disagg) HeldOn(r *engine.Replica, entries map[*engine.CacheEntry]bool) int64 {
	var n int64
	if !d.isDecode(r.Index()) {
		for _, h := range d.held[r.Index()] {
			if h.preKV == r.KV() {
				n += h.heldBlocks
				for _, e := range h.entries {
					entries[e] = true
				}
			}
		}
		return n
	}
	for _, l := range d.held {
		for _, h := range l {
			if h.state == hsTransfer && d.decBase+h.dec == r.Index() && h.decKV == r.KV() {
				n += h.resBlocks
			}
		}
	}
	return n
}

// HeldBlocks is the KV blocks prefill replicas hold for requests waiting
// for, or in, a transfer.
func (d *Disagg) HeldBlocks() int64 { return d.heldBlocks }

func (d *Disagg) isDecode(i int) bool { return i >= d.decBase }

// finish closes time-weighted statistics at end.
func (d *Disagg) finish(end sim.Time) {
	d.accountHeld(end)
	if d.Autoscaler != nil {
		d.Autoscaler.Finish(end)
	}
	for _, r := range d.Decode.Replicas {
		r.Finish(end)
	}
}

func (d *Disagg) accountHeld(now sim.Time) {
	if now > d.heldT {
		d.Stats.HeldBlockNs += float64(now-d.heldT) * float64(d.heldBlocks)
		d.heldT = now
	}
}

func (d *Disagg) decBlocksFor(tokens int64) int64 { return (tokens + d.decBlock - 1) / d.decBlock }

// Hold implements HandOff: it keeps the KV of c's prefill, which just
// produced its token on r, for the transfer.
func (d *Disagg) Hold(r *engine.Replica, c *engine.Copy, kv *engine.KVCache, blocks int64, entries []*engine.CacheEntry) []*engine.CacheEntry {
	h := d.newHandoff()
	h.c, h.gen, h.pre, h.preKV = c, c.Gen, r.Index(), kv
	h.heldBlocks = blocks
	h.entries, entries = entries, h.entries[:0]
	h.heldPos = len(d.held[h.pre])
	d.held[h.pre] = append(d.held[h.pre], h)
	d.accountHeld(d.eng.Now())
	d.heldBlocks += h.heldBlocks
	d.live[h.c] = h
	return entries
}

func (d *Disagg) newHandoff() *handoff {
	if n := len(d.spare); n > 0 {
		h := d.spare[n-1]
		d.spare = d.spare[:n-1]
		return h
	}
	h := &handoff{heldPos: -1}
	h.onLand = func(at sim.Time) { d.land(h, at) }
	return h
}

func (d *Disagg) recycle(h *handoff) {
	entries, onLand := h.entries[:0], h.onLand
	*h = handoff{entries: entries, heldPos: -1, onLand: onLand}
	d.spare = append(d.spare, h)
}

// releaseHeld frees the prefill KV h holds (if its replica still has it).
func (d *Disagg) releaseHeld(h *handoff, now sim.Time) {
	if h.heldPos < 0 {
		return
	}
	l := d.held[h.pre]
	last := l[len(l)-1]
	l[h.heldPos] = last
	last.heldPos = h.heldPos
	l[len(l)-1] = nil
	d.held[h.pre] = l[:len(l)-1]
	h.heldPos = -1
	d.accountHeld(now)
	d.heldBlocks -= h.heldBlocks
	d.pool.Replicas[h.pre].ReleaseKV(h.preKV, h.heldBlocks, h.entries, now)
	clear(h.entries)
	h.entries = h.entries[:0]
	h.heldBlocks = 0
}

// releaseReservation frees the decode blocks h reserved for its transfer.
func (d *Disagg) releaseReservation(h *handoff, now sim.Time) {
	if h.resBlocks == 0 {
		return
	}
	d.Decode.Replicas[h.dec].ReleaseKV(h.decKV, h.resBlocks, nil, now)
	h.resBlocks = 0
}

// drop ends h's handoff whatever its stage (the copy was withdrawn, failed
// or lost its KV), freeing what it holds; it does not touch the copy.
func (d *Disagg) drop(h *handoff, now sim.Time) {
	delete(d.live, h.c)
	switch h.state {
	case hsTransfer:
		d.eng.Cancel(h.ev)
		d.releaseReservation(h, now)
	case hsLanded:
		d.pending[h.dec] -= h.pendBlocks
	}
	d.releaseHeld(h, now)
	if h.queued {
		h.dead = true // pump recycles it
		d.waiting--
		return
	}
	d.recycle(h)
}

// Withdrawn implements HandOff: the gateway withdrew c.
func (d *Disagg) Withdrawn(c *engine.Copy) {
	if h := d.live[c]; h != nil {
		d.drop(h, d.eng.Now())
	}
}

// CopyStarted implements Observer.
func (d *Disagg) CopyStarted(c *engine.Copy, at sim.Time) {
	if !d.isDecode(c.Replica) {
		d.gw.CopyStarted(c, at)
		return
	}
	if h := d.live[c]; h != nil && h.state == hsLanded {
		d.pending[h.dec] -= h.pendBlocks
		h.pendBlocks = 0
		h.state = hsDecoding
		d.pump(at)
	}
}

// FirstToken implements Observer: the client's first token is the decode
// replica's; the prefill's token is not streamed.
func (d *Disagg) FirstToken(c *engine.Copy, at sim.Time) {
	if d.isDecode(c.Replica) {
		d.gw.FirstToken(c, at)
	}
}

// CopyDone implements Observer: a prefill hands its KV over; a decode
// completes the request.
func (d *Disagg) CopyDone(c *engine.Copy, o *engine.Outcome) {
	now := o.Finished
	d.gw.wake(now) // a prefill slot is free (late binding's queue)
	h := d.live[c]
	if h == nil {
		// Not a handoff (cannot happen: every prefill holds its KV), or a
		// copy the gateway has let go.
		if c.Client != nil {
			d.gw.CopyDone(c, o)
		}
		return
	}
	if !d.isDecode(c.Replica) {
		if h.gen != c.Gen || c.Client == nil {
			d.drop(h, now) // withdrawn while its last step ended
			return
		}
		h.arrival, h.sched, h.prefDone = o.Req.Arrival, o.Scheduled, o.Finished
		h.cached, h.preempts = o.CachedTokens, o.Preemptions
		// The prefill replica's breaker hears its success here: the
		// request completes on a decode replica, whose index the gateway
		// would see. Its latency is this prefill's time to first token
		// (from this replica's queue: a re-prefill's own).
		d.gw.recordBreaker(c.Replica, now, true, (o.FirstToken - o.Enqueued).Milliseconds())
		d.dispatch(h, now)
		return
	}
	d.out = engine.Outcome{Copy: c, Req: o.Req, Replica: o.Replica, Enqueued: o.Enqueued, Scheduled: h.sched,
		FirstToken: o.FirstToken, Finished: o.Finished, CachedTokens: h.cached, Preemptions: h.preempts + o.Preemptions,
		ClientDelay: o.ClientDelay, FinishDelay: o.FinishDelay}
	s := &d.Split
	s.PrefillQueue.Add((h.sched - h.arrival).Milliseconds())
	s.Prefill.Add((h.prefDone - h.sched).Milliseconds())
	s.DecodeWait.Add((h.reserved - h.prefDone).Milliseconds())
	s.Transfer.Add((h.landed - h.reserved).Milliseconds())
	first := (o.FirstToken - h.landed).Milliseconds()
	s.DecodeFirst.Add(first)
	s.ToClient.Add(o.ClientDelay.Milliseconds())
	j := h.dec
	d.drop(h, now)
	d.gw.CopyDone(c, &d.out)
	d.Decode.recordBreaker(j, now, true, first) // the decode replica's share of the TTFT (disagg_faults.go)
	d.pump(now)
}

// CopyFailed implements Observer: a prefill's failure is the gateway's; a
// decode replica's loses the KV, and the request is prefilled again.
func (d *Disagg) CopyFailed(c *engine.Copy, at sim.Time, reason string) {
	h := d.live[c]
	if !d.isDecode(c.Replica) || h == nil {
		d.gw.CopyFailed(c, at, reason)
		return
	}
	if reason == engine.FailTooLong || reason == engine.FailContext {
		d.drop(h, at)
		d.gw.CopyFailed(c, at, reason)
		d.pump(at)
		return
	}
	d.Stats.DecodeLost++
	j, lat := h.dec, (at - h.landed).Milliseconds()
	d.rePrefill(h, at, reason)
	d.Decode.recordBreaker(j, at, false, lat) // it lost the request's KV
	d.pump(at)
}

// rePrefill sends h's copy, whose KV was lost, to a prefill replica again.
func (d *Disagg) rePrefill(h *handoff, now sim.Time, reason string) {
	c := h.c
	d.Stats.RePrefills++
	d.Stats.RePrefillTokens += int64(c.Req.InputTokens)
	d.drop(h, now)
	p := d.pool
	i, ok := d.gw.route(c.Req)
	if !ok || i < 0 || i >= len(p.Replicas) {
		d.gw.CopyFailed(c, now, reason)
		return
	}
	p.Replicas[i].Submit(c)
}

// dispatch queues prefilled h for a decode replica.
func (d *Disagg) dispatch(h *handoff, now sim.Time) {
	h.state = hsHolding
	total := int64(h.c.Req.InputTokens) + int64(h.c.Req.OutputTokens)
	if len(d.Decode.Replicas) == 0 || d.decBlocksFor(total) > d.decUsable {
		d.Stats.TooLong++
		c := h.c
		d.drop(h, now)
		d.gw.CopyFailed(c, now, engine.FailTooLong)
		return
	}
	d.enqueue(h)
	d.pump(now)
	if h.queued && !h.dead {
		d.Stats.Backpressured++
	}
}

func (d *Disagg) enqueue(h *handoff) {
	h.queued = true
	d.waitQ = append(d.waitQ, h)
	d.waiting++
	d.Stats.WaitingPeak = max(d.Stats.WaitingPeak, d.waiting)
}

// pump starts the transfers of waiting requests, in order, while a decode
// replica has room for the one at the head.
func (d *Disagg) pump(now sim.Time) {
	for d.waitH < len(d.waitQ) {
		h := d.waitQ[d.waitH]
		if h.dead {
			d.popWait()
			d.recycle(h)
			continue
		}
		j, ok := d.pick(h)
		if !ok {
			break
		}
		d.popWait()
		h.queued = false
		d.waiting--
		d.startTransfer(h, j, now)
	}
	if d.waitH == len(d.waitQ) {
		clear(d.waitQ)
		d.waitQ, d.waitH = d.waitQ[:0], 0
	} else if d.waitH > 1024 && d.waitH*2 > len(d.waitQ) {
		n := copy(d.waitQ, d.waitQ[d.waitH:])
		clear(d.waitQ[n:])
		d.waitQ, d.waitH = d.waitQ[:n], 0
	}
}

func (d *Disagg) popWait() {
	d.waitQ[d.waitH] = nil
	d.waitH++
}

// pick routes h among the decode replicas that are up and have the blocks
// of its prompt free beside their watermark and the requests that landed
// on them but are not admitted yet.
func (d *Disagg) pick(h *handoff) (int, bool) {
	need := d.decBlocksFor(int64(h.c.Req.InputTokens))
	anyRoom := false
	for j, r := range d.Decode.Replicas {
		st := &d.Decode.states[j]
		d.avail[j] = st.Available
		room := st.Available && r.HasRoom(need, d.pending[j])
		st.Available = room
		anyRoom = anyRoom || room
	}
	j, ok := -1, false
	for tries := 0; anyRoom && tries <= len(d.Decode.Replicas); tries++ {
		if d.transferAware {
			j, ok = d.fastestLanding(h)
		} else {
			j, ok = d.router.Route(h.c.Req, d.Decode.states)
		}
		if !ok || j < 0 || j >= len(d.Decode.Replicas) || !d.Decode.breakerRefuses(j, d.eng.Now()) {
			break
		}
		// Half-open and its breaker admits no more now: choose again
		// without it.
		d.Decode.states[j].Available = false
		j, ok = -1, false
	}
	for i := range d.Decode.Replicas {
		d.Decode.states[i].Available = d.avail[i]
	}
	if !ok || j < 0 || j >= len(d.Decode.Replicas) {
		return -1, false
	}
	return j, true
}

// fastestLanding is the decode replica with room (Available in the masked
// snapshot) where h's KV would land first, given the link kind and the
// queues at both ends; ties go to the fewer outstanding requests, then the
// lower index.
func (d *Disagg) fastestLanding(h *handoff) (int, bool) {
	best, bestEnd, now := -1, sim.Time(0), d.eng.Now()
	bytes := d.wirePerTok * float64(h.c.Req.InputTokens)
	for j := range d.Decode.Replicas {
		st := &d.Decode.states[j]
		if !st.Available {
			continue
		}
		k := d.topo.kind(h.pre, j)
		wire := sim.Time(math.Ceil(bytes / d.topo.bytesPerS(k) * 1e9))
		end := max(now, d.sendFree[k][h.pre], d.recvFree[k][j]) + wire
		if best < 0 || end < bestEnd || (end == bestEnd && st.Outstanding < d.Decode.states[best].Outstanding) {
			best, bestEnd = j, end
		}
	}
	return best, best >= 0
}

// startTransfer reserves h's blocks on decode replica j and puts its KV on
// the link, behind what already queues at either end.
func (d *Disagg) startTransfer(h *handoff, j int, now sim.Time) {
	need := d.decBlocksFor(int64(h.c.Req.InputTokens))
	kv, ok := d.Decode.Replicas[j].ReserveKV(need, now)
	if !ok {
		panic("models: disagg: decode reservation checked but allocation failed")
	}
	h.dec, h.decKV, h.resBlocks, h.reserved = j, kv, need, now
	k := d.topo.kind(h.pre, j)
	h.link = k
	h.bps = d.topo.bytesPerS(k)
	h.bytes = d.wirePerTok * float64(h.c.Req.InputTokens)
	wire := sim.Time(math.Ceil(h.bytes / h.bps * 1e9))
	ready := now
	h.layerwise = false
	if d.layerwise && h.reserved == h.prefDone {
		// Layer-wise: the layers before the last could have been on the
		// wire since the prefill began, if both ends were free then (a
		// link end is free after its sendFree/recvFree: every transfer
		// reserved on it ends by then, so starting in the past overlaps
		// none of them).
		h.layerwise = true
		last := sim.Time(math.Ceil(float64(wire) / float64(d.layers)))
		ready = max(h.sched, now-(wire-last))
	}
	// Each end serves the transfer's bytes after what is queued on it; the
	// transfer is done when both have (a work-conserving queue per end:
	// neither end idles while the other is busy, as a switch buffers).
	sendAt := max(ready, d.sendFree[k][h.pre])
	recvAt := max(ready, d.recvFree[k][j])
	d.sendFree[k][h.pre], d.recvFree[k][j] = sendAt+wire, recvAt+wire
	end := max(sendAt, recvAt) + wire
	d.Stats.LinkBusyNs[k] += int64(wire)
	h.sendAt, h.recvAt = sendAt, recvAt
	h.state = hsTransfer
	h.ev = d.eng.Schedule(end, sim.PriorityNormal, h.onLand)
}

// land ends h's transfer: the prefill replica frees its copy and the
// request joins the decode replica's queue with its KV in place.
func (d *Disagg) land(h *handoff, now sim.Time) {
	h.ev = sim.EventID{}
	d.Stats.Transfers++
	d.Stats.BytesMoved += h.bytes
	d.Stats.TransfersByLink[h.link]++
	d.Stats.BytesByLink[h.link] += h.bytes
	if d.OnTransfer != nil {
		d.OnTransfer(TransferRecord{Prefill: h.pre, Decode: h.dec, Link: h.link, Bytes: h.bytes, BytesPerS: h.bps,
			Ready: h.reserved, PrefillStart: h.sched, Layerwise: h.layerwise, SendStart: h.sendAt, RecvStart: h.recvAt, End: now})
	}
	r := d.Decode.Replicas[h.dec]
	if !r.Up() || r.KV() != h.decKV {
		// The decode replica failed under the transfer: its reservation is
		// gone; the prefill replica still holds the KV, so try again.
		d.Stats.Rerouted++
		d.releaseReservation(h, now) // when it is down with its cache (a restart), the blocks are still taken
		h.state = hsHolding
		d.enqueue(h)
		d.pump(now)
		return
	}
	d.releaseReservation(h, now)
	d.releaseHeld(h, now)
	h.pendBlocks = d.decBlocksFor(int64(h.c.Req.InputTokens))
	d.pending[h.dec] += h.pendBlocks
	h.state, h.landed = hsLanded, now
	r.Submit(h.c)
}

// prefillChanged hears prefill replica i go down or up: going down, it
// lost the KV it held for handoffs, which are prefilled again.
func (d *Disagg) prefillChanged(i int) {
	if d.pool.Replicas[i].Up() || len(d.held[i]) == 0 {
		return
	}
	now := d.eng.Now()
	lost := append(d.scratch[:0], d.held[i]...)
	for _, h := range lost {
		d.rePrefill(h, now, engine.FailReplicaDown)
	}
	clear(lost)
	d.scratch = lost[:0]
	d.pump(now)
}
