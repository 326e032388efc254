package engine

import "fmt"

// contiguousKV is the contiguous allocator, as KV caches were before
// paging: each sequence gets one first-fit region for its whole length
// (prompt and every output token: a region cannot grow in place), so free
// space fragments. When no region is large enough although the free space
// would be, the allocation fails the way a fragmented CUDA heap does: the
// worker dies out of memory at the end of the event (Replica.checkOOM), and
// the scheduler cannot know in advance. When the free space is simply too
// small, the sequence waits. It has no prefix cache (configuration
// validation requires prefix_caching = false with it).
//
// A sequence holds s.tailBlocks blocks from block s.region.
type contiguousKV struct{ r *Replica }

var _ kvAllocator = contiguousKV{}

func (a contiguousKV) newCache(blocks int64) *KVCache {
	c := NewKVCache(blocks)
	c.EnableContiguous()
	return c
}

// length is the blocks of s's whole remaining length.
func (a contiguousKV) length(s *seq) int64 {
	return a.r.blocksFor(int64(s.prompt) + int64(s.req.OutputTokens-s.gen))
}

// fits ignores reserve: a region is reserved whole, so running sequences
// never take more blocks.
func (a contiguousKV) fits(s *seq, _ int64) bool {
	r := a.r
	return r.kv.Free()-a.length(s) >= r.watermark
}

func (a contiguousKV) place(s *seq, _ int64) (int32, bool) {
	r := a.r
	need := a.length(s)
	if r.kv.Free()-need < r.watermark {
		return 0, false
	}
	off, ok, frag := r.kv.AllocRegion(need)
	if !ok {
		if frag {
			r.oom = true
			r.Stats.FragAtOOM = max(r.Stats.FragAtOOM, r.kv.Fragmentation())
		}
		return 0, false
	}
	s.region, s.tailBlocks, s.tailTokens = off, need, int64(s.prompt)
	s.missBlocks, s.hitSegs = 0, 0
	return 0, true
}

func (a contiguousKV) whole(s *seq, need int64) bool {
	r := a.r
	if r.kv.Available()-need < r.watermark {
		return false
	}
	off, ok, frag := r.kv.AllocRegion(need)
	if !ok {
		if frag {
			r.oom = true
		}
		return false
	}
	s.region = off
	return true
}

// grow is never needed: every region covers its sequence's whole length.
func (a contiguousKV) grow(n int64) bool {
	panic(fmt.Sprintf("models: replica %d: a contiguous KV region cannot grow by %d blocks", a.r.idx, n))
}

func (a contiguousKV) prefilled(*seq) {}

func (a contiguousKV) finish(s *seq) { a.release(s) }

func (a contiguousKV) release(s *seq) {
	a.r.kv.FreeRegion(s.region, s.tailBlocks)
	s.missBlocks, s.tailBlocks, s.tailTokens = 0, 0, 0
	s.hitSegs = 0
}
