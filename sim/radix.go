package sim

import "math/bits"

// slot is one queued event with its sort key.
type slot struct {
	at  Time
	key uint64 // priority<<56 | seq
	ev  uint32 // index into Engine.events (no pointer: the GC skips the queue)
}

func (a *slot) less(b *slot) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

// radixQueue is a monotone priority queue of slots (a radix heap; Ahuja,
// Mehlhorn, Orlin and Tarjan 1990) ordered by (at, key). It relies on the
// engine's rule that nothing is scheduled before the last event popped: a
// slot goes to bucket i = bit length of (at XOR last), so every slot in a
// lower bucket precedes every slot in a higher one. Slots at exactly last
// live in cur, a small binary heap by key (ties at one instant). Popping
// refills cur from the lowest non-empty bucket, moving each of that bucket's
// slots to a strictly lower bucket: each slot moves at most 64 times in its
// life, and in practice a few, so push is O(1) and pop O(1) amortized
// plus the tie heap. A slot pushed before last (possible only after a peek
// that did not pop, e.g. Run stopping at its until) precedes everything
// else and waits in early, a small heap by (at, key).
type radixQueue struct {
	last    Time
	early   []slot // heap by (at, key); every at < last (pushed after a peek)
	cur     []slot // heap by key; every at == last
	buckets [65][]slot
	mask    uint64 // bit i-1 set when buckets[i] is non-empty (i >= 1)
	n       int
}

func (q *radixQueue) len() int { return q.n }

func (q *radixQueue) push(s slot) {
	q.n++
	if s.at < q.last {
		// Only after a peek that did not pop (Run stopping at until,
		// NextTime): s precedes everything in cur and the buckets.
		q.early = heapPush(q.early, s)
		return
	}
	q.place(s)
}

func (q *radixQueue) place(s slot) {
	if s.at == q.last {
		q.curPush(s)
		return
	}
	i := bits.Len64(uint64(s.at ^ q.last))
	q.buckets[i] = append(q.buckets[i], s)
	q.mask |= 1 << (i - 1)
}

// top returns the minimum slot; the queue must not be empty.
func (q *radixQueue) top() *slot {
	if len(q.early) > 0 {
		return &q.early[0]
	}
	if len(q.cur) == 0 {
		q.refill()
	}
	return &q.cur[0]
}

// pop removes and returns the minimum slot; the queue must not be empty.
func (q *radixQueue) pop() slot {
	q.n--
	var s slot
	if len(q.early) > 0 {
		q.early, s = heapPop(q.early)
		return s
	}
	if len(q.cur) == 0 {
		q.refill()
	}
	q.cur, s = heapPop(q.cur)
	return s
}

// refill moves the lowest bucket's slots down, the minimum time becoming
// last and its slots filling cur.
func (q *radixQueue) refill() {
	i := bits.TrailingZeros64(q.mask) + 1
	b := q.buckets[i]
	m := b[0].at
	for k := 1; k < len(b); k++ {
		if b[k].at < m {
			m = b[k].at
		}
	}
	q.last = m
	q.mask &^= 1 << (i - 1)
	for k := range b {
		q.place(b[k])
		b[k] = slot{}
	}
	q.buckets[i] = b[:0]
}

// filter keeps the slots for which keep is true, in place.
func (q *radixQueue) filter(keep func(*slot) bool) {
	q.early = heapFilter(q.early, keep)
	q.cur = heapFilter(q.cur, keep)
	q.n = len(q.early) + len(q.cur)
	for i := 1; i < len(q.buckets); i++ {
		b := q.buckets[i]
		w := 0
		for k := range b {
			if keep(&b[k]) {
				b[w] = b[k]
				w++
			}
		}
		clear(b[w:])
		q.buckets[i] = b[:w]
		if w == 0 {
			q.mask &^= 1 << (i - 1)
		}
		q.n += w
	}
}

func (q *radixQueue) curPush(s slot) { q.cur = heapPush(q.cur, s) }

// heapPush, heapPop and heapFilter maintain a binary min-heap by slot.less
// (for cur, where every at is equal, that is by key).
func heapPush(h []slot, s slot) []slot {
	h = append(h, s)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = s
	return h
}

func heapPop(h []slot) ([]slot, slot) {
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h[n] = slot{}
	h = h[:n]
	if n > 0 {
		heapDown(h, 0, x)
	}
	return h, top
}

// heapDown places x at or below the hole at i.
func heapDown(h []slot, i int, x slot) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].less(&h[c]) {
			c++
		}
		if !h[c].less(&x) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
}

func heapFilter(h []slot, keep func(*slot) bool) []slot {
	w := 0
	for k := range h {
		if keep(&h[k]) {
			h[w] = h[k]
			w++
		}
	}
	clear(h[w:])
	h = h[:w]
	for i := (w - 2) / 2; i >= 0; i-- {
		heapDown(h, i, h[i])
	}
	return h
}
