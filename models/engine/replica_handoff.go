package engine

import "github.com/fleetsim/fleetsim/sim"

// HandOff is a disaggregated fleet's hand-off between its prefill and
// decode pools, as the replicas of both see it: a prefill replica gives it
// the KV of each finished prefill to hold for the transfer; a copy the
// gateway withdraws may be one it is moving; the invariant checks ask what
// KV it holds on a replica. The replica calls it once per prefill, and on
// cancellations and checks: never per step.
type HandOff interface {
	// Hold takes the KV of c's prefill, which just produced its token on r:
	// blocks private blocks of r's cache kv and the prefix-cache entries
	// the prefill references, in entries (whose slice it keeps). It returns
	// an empty slice for the replica to reuse.
	Hold(r *Replica, c *Copy, kv *KVCache, blocks int64, entries []*CacheEntry) []*CacheEntry
	// Withdrawn: the gateway withdrew c from a replica (Replica.Cancel).
	Withdrawn(c *Copy)
	// HeldOn adds to entries the prefix-cache entries the hand-off holds on
	// r and returns its private blocks there: KV kept for, or reserved by,
	// transfers.
	HeldOn(r *Replica, entries map[*CacheEntry]bool) int64
}

// ServePrefills makes r a prefill replica of a disaggregated fleet, whose
// hand-off is h: it serves one output token per request (the decode pool
// produces the rest), and a finished prefill's KV goes to h instead of
// being freed. Call before the run starts.
func (r *Replica) ServePrefills(h HandOff) {
	r.handoff, r.prefillOnly = h, true
	r.alloc = heldKV{pagedKV{r: r}, h}
}

// ServeDecodes makes r a decode replica of a disaggregated fleet, whose
// hand-off is h: a request's first admission finds its prompt's KV in
// place (transferred). Call before the run starts.
func (r *Replica) ServeDecodes(h HandOff) {
	r.handoff = h
	r.alloc = landKV{pagedKV{r: r}}
}

// UsableKVBlocks is the most KV blocks the replica can ever give one
// request: all but its watermark.
func (r *Replica) UsableKVBlocks() int64 { return r.kv.Total() - r.watermark }

// HasRoom reports whether the replica has need KV blocks free beside its
// watermark, pending blocks promised to requests not admitted yet, and the
// blocks its decode run under way will take.
func (r *Replica) HasRoom(need, pending int64) bool {
	free := r.kv.Available() - r.watermark - pending
	return free >= need && free-r.runCommitted() >= need
}

// ReserveKV takes blocks KV blocks of the replica's cache at now (a
// transfer's landing place) and returns the cache they are in; ok=false
// when they are not free.
func (r *Replica) ReserveKV(blocks int64, now sim.Time) (kv *KVCache, ok bool) {
	r.account(now)
	return r.kv, r.kv.Alloc(blocks)
}

// ReleaseKV gives back, at now, blocks private KV blocks and the
// references to entries that were taken from cache kv (held for a transfer,
// or reserved by one), if kv is still the replica's cache (a restart
// replaces it), and lets an idle replica plan again.
func (r *Replica) ReleaseKV(kv *KVCache, blocks int64, entries []*CacheEntry, now sim.Time) {
	if r.kv != kv {
		return
	}
	r.account(now)
	for _, e := range entries {
		r.kv.Unref(e)
	}
	r.kv.Release(blocks)
	r.nudge(now)
}

// runCommitted is the blocks the decode run under way will take when it
// ends (it planned on them being there).
func (r *Replica) runCommitted() int64 {
	if r.runSteps <= 0 {
		return 0
	}
	return r.demand(r.runSteps)
}

// nudge has an idle replica plan again (KV it was waiting for was freed
// outside its own steps).
func (r *Replica) nudge(now sim.Time) {
	if !r.busy && !r.down && !r.hung && r.state.Waiting > 0 {
		r.kick(now)
	}
}

// heldKV is a prefill replica's allocator: a finished prefill keeps its
// KV for the transfer (HandOff.Hold) instead of releasing it.
type heldKV struct {
	pagedKV
	h HandOff
}

func (a heldKV) finish(s *seq) { handOver(a.h, a.r, s) }

// handOver gives h the KV of prefill sequence s, which just produced its
// token on r: its private blocks and the prefix-cache entries it
// references.
func handOver(h HandOff, r *Replica, s *seq) {
	s.entries = h.Hold(r, s.cp, r.kv, s.missBlocks+s.tailBlocks, s.entries)
	s.missBlocks, s.tailBlocks, s.tailTokens, s.hitSegs = 0, 0, 0, 0
}

// landKV is a decode replica's allocator: a request's first admission
// finds its prompt's KV in place (transferred), all but the last token,
// which is computed again for its logits as on a full prefix-cache hit.
type landKV struct{ pagedKV }

func (a landKV) place(s *seq, reserve int64) (int32, bool) {
	done, ok := a.pagedKV.place(s, reserve)
	if ok && !s.admitted {
		done = max(done, s.prompt-1)
	}
	return done, ok
}
