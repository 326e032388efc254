package models

import (
	"fmt"
	"slices"
)

// CheckInvariants recomputes the replica's bookkeeping from its sequences
// and reports the first mismatch: the routing snapshot's counts, and KV
// blocks used = blocks held by running sequences + blocks of referenced
// cache entries; and the planning summary of the batch, when valid, equals
// one rebuilt from the sequences; the pool's routing index, if any, holds
// the replica's key as its snapshot entry gives it. Tests call it after
// every event.
func (r *Replica) CheckInvariants() error {
	if err := r.ri.check(r.idx); err != nil {
		return fmt.Errorf("replica %d: %w", r.idx, err)
	}
	live, waiting := 0, 0
	var held int64
	entries := map[*cacheEntry]bool{}
	for _, s := range r.running {
		held += s.missBlocks + s.tailBlocks
		for _, e := range s.entries {
			entries[e] = true
		}
		if !s.cancelled && !s.finished {
			live++
		}
	}
	for i := 0; i < r.waiting.len(); i++ {
		s := r.waiting.buf[(r.waiting.head+i)%len(r.waiting.buf)]
		if !s.cancelled {
			waiting++
			live++
		}
		if s.missBlocks+s.tailBlocks != 0 || len(s.entries) != 0 {
			return fmt.Errorf("replica %d: a waiting sequence holds KV", r.idx)
		}
	}
	if r.disagg != nil {
		held += r.disagg.heldOn(r, entries) // KV kept for, or reserved by, transfers (disagg_flow.go)
	}
	for e := range entries {
		if e.refs <= 0 {
			return fmt.Errorf("replica %d: a running sequence holds an unreferenced cache entry", r.idx)
		}
		held += e.blocks
	}
	switch {
	case r.heldOut != 0 && !r.hung:
		return fmt.Errorf("replica %d: %d withdrawn copies held while not stalled", r.idx, r.heldOut)
	case r.state.Outstanding != live+r.heldOut:
		return fmt.Errorf("replica %d: snapshot says %d outstanding, it holds %d and %d withdrawn while stalled", r.idx, r.state.Outstanding, live, r.heldOut)
	case r.state.Waiting != waiting:
		return fmt.Errorf("replica %d: snapshot says %d waiting, it holds %d", r.idx, r.state.Waiting, waiting)
	case !r.down && held != r.kv.Used():
		return fmt.Errorf("replica %d: %d KV blocks used, sequences hold %d", r.idx, r.kv.Used(), held)
	case r.kv.Used()+r.kv.Cached()+r.kv.Free() != r.kv.Total():
		return fmt.Errorf("replica %d: KV blocks do not add up", r.idx)
	}
	if r.agg.valid {
		fresh := newBatchAgg(r.blockTokens)
		fresh.rebuild(r)
		a := r.agg
		if a.decoders != fresh.decoders || a.prefilling != fresh.prefilling || a.ctx != fresh.ctx ||
			a.minRem != fresh.minRem || a.far != fresh.far || a.farMin != fresh.farMin || !slices.Equal(a.free, fresh.free) {
			return fmt.Errorf("replica %d: batch summary %+v, the batch gives %+v", r.idx, a, fresh)
		}
	}
	return nil
}
