package engine

// kvAllocator places the KV of a replica's sequences in its blocks (the
// replica's KVCache), one implementation per ReplicaConfig.Allocator:
// pagedKV (blocks anywhere, with the prefix cache) and contiguousKV (one
// first-fit region per sequence). The scheduler calls it when a sequence is
// admitted, grows, finishes its prompt or ends; it never plans steps.
//
// Every method that takes blocks keeps the replica's watermark free.
type kvAllocator interface {
	// newCache returns an empty block store of blocks blocks for this
	// allocator (at start, and when a failure loses the KV).
	newCache(blocks int64) *KVCache
	// fits reports whether waiting s could be placed now while reserve more
	// blocks stay free.
	fits(s *seq, reserve int64) bool
	// place gives waiting s the KV of its prompt if it fits (as fits), and
	// returns the prompt tokens whose KV is already there (prefix-cache
	// hits, never the last token, which is recomputed for its logits).
	place(s *seq, reserve int64) (done int32, ok bool)
	// whole takes need blocks for the whole length of s at once (static
	// batching) if they fit, and reports whether it did.
	whole(s *seq, need int64) bool
	// grow takes n > 0 more blocks for tokens running sequences decode.
	grow(n int64) bool
	// prefilled is told that s computed the last token of its prompt.
	prefilled(s *seq)
	// finish releases the KV of s, which produced its last token, keeping
	// in the prefix cache what a later request may reuse.
	finish(s *seq)
	// release returns every block s holds.
	release(s *seq)
}

// newKVAllocator returns the allocator r's configuration names.
func newKVAllocator(r *Replica) kvAllocator {
	if r.cfg.Allocator == AllocContiguous {
		return contiguousKV{r: r}
	}
	return pagedKV{r: r}
}
