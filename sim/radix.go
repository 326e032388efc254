package sim

import "math/bits"

// slot is one queued event with its sort key.
type slot struct {
	at  Time
	key uint64 // priority<<56 | seq
	ev  *event
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
// plus the tie heap.
type radixQueue struct {
	last    Time
	cur     []slot // heap by key; every at == last
	buckets [65][]slot
	mask    uint64 // bit i-1 set when buckets[i] is non-empty (i >= 1)
	n       int
}

func (q *radixQueue) len() int { return q.n }

func (q *radixQueue) push(s slot) {
	if s.at < q.last {
		q.rebase(s.at)
	}
	q.n++
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
	if len(q.cur) == 0 {
		q.refill()
	}
	return &q.cur[0]
}

// pop removes and returns the minimum slot; the queue must not be empty.
func (q *radixQueue) pop() slot {
	if len(q.cur) == 0 {
		q.refill()
	}
	q.n--
	return q.curPop()
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

// rebase lowers last to t (a push before last, possible only after a peek
// that did not pop): every slot is placed again.
func (q *radixQueue) rebase(t Time) {
	all := q.drain(nil)
	q.last = t
	for _, s := range all {
		q.place(s)
	}
}

// drain empties the queue's structure into out (n is kept) and returns it.
func (q *radixQueue) drain(out []slot) []slot {
	out = append(out, q.cur...)
	clear(q.cur)
	q.cur = q.cur[:0]
	for i := range q.buckets {
		out = append(out, q.buckets[i]...)
		clear(q.buckets[i])
		q.buckets[i] = q.buckets[i][:0]
	}
	q.mask = 0
	return out
}

// filter keeps the slots for which keep is true.
func (q *radixQueue) filter(keep func(*slot) bool) {
	all := q.drain(nil)
	q.n = 0
	for k := range all {
		if keep(&all[k]) {
			q.n++
			q.place(all[k])
		}
	}
}

func (q *radixQueue) curPush(s slot) {
	h := append(q.cur, s)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].key <= s.key {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = s
	q.cur = h
}

func (q *radixQueue) curPop() slot {
	h := q.cur
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h[n] = slot{}
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].key < h[c].key {
			c++
		}
		if x.key <= h[c].key {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = x
	}
	q.cur = h
	return top
}
