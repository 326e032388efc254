package engine

import "fmt"

// KVCache is a replica's paged KV allocator together with its prefix cache.
// Memory is counted in blocks of a fixed number of tokens. Every block is in
// exactly one of three states:
//
//	used:   held by running sequences, privately or through a referenced
//	        prefix-cache entry
//	cached: held by a prefix-cache entry that no sequence references; it can
//	        be evicted (least recently released first) to satisfy allocations
//	free:   unallocated
//
// so Used()+Cached()+Free() == Total() always holds (tested).
//
// Prefix-cache entries are keyed by a chained segment hash (see
// workloads.Segment): an entry stands for the KV of a whole prompt prefix up to
// and including its segment, so a lookup walks a prompt's segments in order
// and stops at the first miss. Segments are assumed to start on a block
// boundary; a segment of t tokens holds ceil(t/blockTokens) blocks.
type KVCache struct {
	total, used, free, cached int64
	entries                   map[uint64]*CacheEntry
	lru                       CacheEntry // sentinel of a circular list; lru.next is the oldest
	evictions                 int64
	contiguous                bool
	regions                   []region // contiguous mode: free regions by offset
}

// CacheEntry is one entry of the prefix cache: the KV blocks of a prompt
// segment, found by its chained hash.
type CacheEntry struct {
	hash       uint64
	blocks     int64
	tokens     int32
	refs       int32
	prev, next *CacheEntry // LRU links, only while refs == 0
}

// NewKVCache returns an allocator of totalBlocks free blocks.
func NewKVCache(totalBlocks int64) *KVCache {
	c := &KVCache{total: totalBlocks, free: totalBlocks, entries: map[uint64]*CacheEntry{}}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// Total, Used, Cached and Free count blocks in each state.
func (c *KVCache) Total() int64  { return c.total }
func (c *KVCache) Used() int64   { return c.used }
func (c *KVCache) Cached() int64 { return c.cached }
func (c *KVCache) Free() int64   { return c.free }

// Available is the number of blocks an allocation can get: free plus
// evictable.
func (c *KVCache) Available() int64 { return c.free + c.cached }

// Evictions counts prefix-cache entries evicted so far.
func (c *KVCache) Evictions() int64 { return c.evictions }

// Entries is the number of prefix-cache entries.
func (c *KVCache) Entries() int { return len(c.entries) }

// Lookup returns the entry for hash, or nil.
func (c *KVCache) Lookup(hash uint64) *CacheEntry { return c.entries[hash] }

// Alloc takes n blocks into the used state, evicting unreferenced cache
// entries as needed, and reports whether it could. On false nothing is
// allocated (evictions already made stay made).
func (c *KVCache) Alloc(n int64) bool {
	if n < 0 {
		panic(fmt.Sprintf("models: KV alloc of %d blocks", n))
	}
	if n > c.free+c.cached {
		return false
	}
	for c.free < n {
		c.evict(c.lru.next)
	}
	c.free -= n
	c.used += n
	return true
}

// Release returns n used blocks to the free state.
func (c *KVCache) Release(n int64) {
	if n < 0 || n > c.used {
		panic(fmt.Sprintf("models: KV release of %d blocks with %d used", n, c.used))
	}
	c.used -= n
	c.free += n
}

// Acquire adds a reference to e, taking it off the eviction list if it was
// unreferenced.
func (c *KVCache) Acquire(e *CacheEntry) {
	if e.refs == 0 {
		e.prev.next, e.next.prev = e.next, e.prev
		e.prev, e.next = nil, nil
		c.cached -= e.blocks
		c.used += e.blocks
	}
	e.refs++
}

// Unref drops a reference to e; at zero the entry becomes evictable and the
// most recently released.
func (c *KVCache) Unref(e *CacheEntry) {
	if e.refs <= 0 {
		panic("models: KV unref of unreferenced entry")
	}
	e.refs--
	if e.refs == 0 {
		e.prev, e.next = c.lru.prev, &c.lru
		c.lru.prev.next = e
		c.lru.prev = e
		c.used -= e.blocks
		c.cached += e.blocks
	}
}

// Insert turns blocks already-used blocks of a sequence into a cache entry
// for hash with one reference (the sequence's). If hash is already cached it
// returns the existing entry and false: the caller should Acquire it and
// Release its own duplicate blocks.
func (c *KVCache) Insert(hash uint64, blocks int64, tokens int32) (*CacheEntry, bool) {
	if e, ok := c.entries[hash]; ok {
		return e, false
	}
	e := &CacheEntry{hash: hash, blocks: blocks, tokens: tokens, refs: 1}
	c.entries[hash] = e
	return e, true
}

func (c *KVCache) evict(e *CacheEntry) {
	if e == &c.lru {
		panic("models: KV evict from empty list")
	}
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	delete(c.entries, e.hash)
	c.cached -= e.blocks
	c.free += e.blocks
	c.evictions++
}

// check panics if the block states do not add up; used by tests.
// Check panics unless used + cached + free blocks = total, each >= 0
// (tests call it after every event).
func (c *KVCache) Check() {
	if c.used+c.cached+c.free != c.total || c.used < 0 || c.cached < 0 || c.free < 0 {
		panic(fmt.Sprintf("models: KV accounting used %d + cached %d + free %d != total %d",
			c.used, c.cached, c.free, c.total))
	}
}

// Contiguous allocation. A contiguous allocator (first-fit over one linear
// space of blocks, as KV caches were before paging) gives each sequence one
// region; freed regions merge with their neighbours. Free space can then
// be plentiful in total yet too scattered for a long request: external
// fragmentation, 1 − largest free region / total free.

type region struct{ off, n int64 }

// EnableContiguous switches the allocator to contiguous regions; the cache
// must be empty. Prefix caching does not apply to it.
func (c *KVCache) EnableContiguous() {
	if c.used != 0 || c.cached != 0 {
		panic("models: contiguous allocator on a cache in use")
	}
	c.regions = []region{{0, c.total}}
	c.contiguous = true
}

// Contiguous reports whether the allocator is contiguous.
func (c *KVCache) Contiguous() bool { return c.contiguous }

// AllocRegion takes n contiguous blocks, first fit. ok is false when no
// free region is large enough (fragmented reports whether the total free
// space would have been enough).
func (c *KVCache) AllocRegion(n int64) (off int64, ok, fragmented bool) {
	for i, r := range c.regions {
		if r.n >= n {
			off = r.off
			if r.n == n {
				c.regions = append(c.regions[:i], c.regions[i+1:]...)
			} else {
				c.regions[i] = region{r.off + n, r.n - n}
			}
			c.free -= n
			c.used += n
			return off, true, false
		}
	}
	return 0, false, c.free >= n
}

// FreeRegion returns a region, merging it with free neighbours.
func (c *KVCache) FreeRegion(off, n int64) {
	if n <= 0 {
		return
	}
	i := 0
	for i < len(c.regions) && c.regions[i].off < off {
		i++
	}
	c.regions = append(c.regions, region{})
	copy(c.regions[i+1:], c.regions[i:])
	c.regions[i] = region{off, n}
	if i+1 < len(c.regions) && c.regions[i].off+c.regions[i].n == c.regions[i+1].off {
		c.regions[i].n += c.regions[i+1].n
		c.regions = append(c.regions[:i+1], c.regions[i+2:]...)
	}
	if i > 0 && c.regions[i-1].off+c.regions[i-1].n == c.regions[i].off {
		c.regions[i-1].n += c.regions[i].n
		c.regions = append(c.regions[:i], c.regions[i+1:]...)
	}
	c.used -= n
	c.free += n
}

// Fragmentation is the external fragmentation of free space: 1 − largest
// free region / total free (0 for a paged allocator, or nothing free).
func (c *KVCache) Fragmentation() float64 {
	if !c.contiguous || c.free == 0 {
		return 0
	}
	var largest int64
	for _, r := range c.regions {
		largest = max(largest, r.n)
	}
	return 1 - float64(largest)/float64(c.free)
}
