package engine

import (
	"fmt"

	"github.com/fleetsim/fleetsim/workloads"
)

// pagedKV is the paged allocator (vLLM's PagedAttention): a sequence's KV
// is blocks of BlockTokens anywhere in memory, taken as it grows; with
// prefix caching, the leading prompt segments other requests computed are
// shared through cache entries, and a finished session turn stays cached
// for the next.
//
// A sequence holds s.entries (shared prefix segments), s.missBlocks
// (private blocks of prefix segments not cached yet) and s.tailBlocks
// (private blocks of the rest of its prompt and its output).
type pagedKV struct{ r *Replica }

var _ kvAllocator = pagedKV{}

func (a pagedKV) newCache(blocks int64) *KVCache { return NewKVCache(blocks) }

func (a pagedKV) fits(s *seq, reserve int64) bool {
	r := a.r
	_, _, need := a.matchPrefix(s)
	return r.kv.Available()-need-reserve >= r.watermark
}

func (a pagedKV) place(s *seq, reserve int64) (int32, bool) {
	r := a.r
	if !r.cfg.PrefixCaching || len(s.req.Prefix) == 0 {
		return a.placePlain(s, reserve)
	}
	hits, hitTokens, need := a.matchPrefix(s)
	if r.kv.Available()-need-reserve < r.watermark {
		return 0, false
	}
	if r.cfg.PrefixCaching {
		for i := int32(0); i < hits; i++ {
			e := r.kv.Lookup(s.req.Prefix[i].Hash)
			r.kv.Acquire(e)
			s.entries = append(s.entries, e)
		}
	}
	var segTokens, segBlocks int64
	if r.cfg.PrefixCaching {
		for i, seg := range s.req.Prefix {
			if int32(i) >= hits {
				segBlocks += a.segmentBlocks(segTokens, seg)
			}
			segTokens += int64(seg.Tokens)
		}
	}
	s.hitSegs = hits
	s.missBlocks = segBlocks
	s.tailTokens = int64(s.prompt) - segTokens/r.blockTokens*r.blockTokens
	s.tailBlocks = r.blocksFor(s.tailTokens)
	if !r.kv.Alloc(s.missBlocks + s.tailBlocks) {
		panic(fmt.Sprintf("models: replica %d: admission checked but allocation failed", r.idx))
	}
	// Cache hits count as computed, but the last prompt token is always
	// recomputed to produce logits (as vLLM does).
	return int32(min(hitTokens, int64(s.prompt)-1)), true
}

// placePlain is place for a sequence without a prefix to match (none, or
// prefix caching off): its whole prompt is its private tail, by the same
// arithmetic with no segment.
func (a pagedKV) placePlain(s *seq, reserve int64) (int32, bool) {
	r := a.r
	tail := int64(s.prompt)
	blocks := r.blocksFor(tail)
	if r.kv.Available()-blocks-reserve < r.watermark {
		return 0, false
	}
	s.hitSegs, s.missBlocks = 0, 0
	s.tailTokens, s.tailBlocks = tail, blocks
	if !r.kv.Alloc(blocks) {
		panic(fmt.Sprintf("models: replica %d: admission checked but allocation failed", r.idx))
	}
	return int32(min(0, tail-1)), true // (no hit; the last prompt token is recomputed)
}

func (a pagedKV) whole(s *seq, need int64) bool {
	r := a.r
	if r.kv.Available()-need < r.watermark {
		return false
	}
	r.kv.Alloc(need)
	return true
}

func (a pagedKV) grow(n int64) bool { return a.r.kv.Alloc(n) }

func (a pagedKV) prefilled(s *seq) { a.cacheSegments(s) }

func (a pagedKV) finish(s *seq) {
	a.cacheContinuation(s)
	a.release(s)
}

func (a pagedKV) release(s *seq) {
	r := a.r
	for _, e := range s.entries {
		r.kv.Unref(e)
	}
	s.entries = s.entries[:0]
	r.kv.Release(s.missBlocks + s.tailBlocks)
	s.missBlocks, s.tailBlocks, s.tailTokens = 0, 0, 0
	s.hitSegs = 0
}

// matchPrefix returns the cached leading segments of s (count, and the
// prompt tokens their whole blocks cover) and the blocks s would still need
// to allocate for its prompt.
//
// Prefix hits are whole blocks of the replica's block_tokens: segment i,
// ending at cumulative token C_i of the prompt, holds the full blocks that
// end in it (C_i/B − C_{i−1}/B of them, maybe none); the tokens past the
// prefix's last full block are the sequence's private tail. A hit on
// segments 0..h−1 covers (C_{h−1}/B)·B tokens.
func (a pagedKV) matchPrefix(s *seq) (hits int32, hitTokens int64, need int64) {
	r := a.r
	var segBlocks, cum int64
	var evictableHit int64
	if r.cfg.PrefixCaching {
		missing := false
		for _, seg := range s.req.Prefix {
			prev := cum
			cum += int64(seg.Tokens)
			b := cum/r.blockTokens - prev/r.blockTokens
			if !missing {
				if e := r.kv.Lookup(seg.Hash); e != nil {
					hits++
					hitTokens = cum / r.blockTokens * r.blockTokens
					if e.refs == 0 {
						evictableHit += e.blocks
					}
					continue
				}
				missing = true
			}
			segBlocks += b
		}
	}
	tail := int64(s.prompt) - cum/r.blockTokens*r.blockTokens
	need = segBlocks + r.blocksFor(tail) + evictableHit
	return hits, hitTokens, need
}

// segmentBlocks is the number of full blocks segment i of s's prefix holds
// (see matchPrefix), given the tokens of the segments before it.
func (a pagedKV) segmentBlocks(before int64, seg workloads.Segment) int64 {
	return (before+int64(seg.Tokens))/a.r.blockTokens - before/a.r.blockTokens
}

// cacheSegments moves s's freshly computed prefix segments into the cache.
func (a pagedKV) cacheSegments(s *seq) {
	n := int32(len(s.req.Prefix))
	if !a.r.cfg.PrefixCaching || s.hitSegs >= n {
		return
	}
	var before int64
	for i := int32(0); i < n; i++ {
		seg := s.req.Prefix[i]
		if i >= s.hitSegs {
			s.missBlocks -= a.share(s, seg, a.segmentBlocks(before, seg))
		}
		before += int64(seg.Tokens)
	}
	s.hitSegs = n
}

// cacheContinuation keeps the KV of a finished session turn's prompt tail
// and answer in the prefix cache, as the segment the session's next turn
// will name (workloads.ContinuationSegment), the way vLLM keeps a finished
// request's full blocks cached.
func (a pagedKV) cacheContinuation(s *seq) {
	if !a.r.cfg.PrefixCaching || s.req.Session == 0 || int(s.hitSegs) != len(s.req.Prefix) {
		return
	}
	c := workloads.ContinuationSegment(&s.req)
	if c.Tokens <= 0 {
		return
	}
	b := a.segmentBlocks(int64(s.req.PrefixTokens()), c)
	s.tailBlocks -= a.share(s, c, min(b, s.tailBlocks))
}

// share turns b of s's private blocks into the cache entry for seg, held by
// s, and returns b. If another sequence cached the same prefix meanwhile, s
// shares that entry and its own duplicate blocks are freed.
func (a pagedKV) share(s *seq, seg workloads.Segment, b int64) int64 {
	r := a.r
	e, fresh := r.kv.Insert(seg.Hash, b, int32(b*r.blockTokens))
	if !fresh {
		r.kv.Acquire(e)
		r.kv.Release(b)
	}
	s.entries = append(s.entries, e)
	return b
}
