package sim

import "math/bits"

// slot is one queued event with its sort key.
type slot struct {
	at  Time
	key uint64  // priority<<56 | seq
	fn  uintptr // the address of its action's closure (see Engine)
	ev  uint32  // its record index (Engine.live, Engine.recs)
}

func (a *slot) less(b *slot) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

// radixQueue is a monotone priority queue of slots (a radix heap; Ahuja,
// Mehlhorn, Orlin and Tarjan 1990, with multi-bit digits) ordered by (at,
// key). It relies on the engine's rule that nothing is scheduled before the
// last event popped. Times are read as radixDigits digits of radixBits bits;
// a slot with at > last goes to the bucket of (level, digit): level the most
// significant digit where at and last differ, digit at's value there (larger
// than last's). Every slot of a lower level precedes every slot of a higher
// one, and within a level a lower digit precedes a higher one, so the first
// non-empty bucket in (level, digit) order holds the minimum. Slots at
// exactly last live in cur, a small binary heap by key (ties at one
// instant). Popping refills cur from the first non-empty bucket: its
// minimum becomes last, and each of its slots moves to a strictly lower
// level (the slots of the other buckets keep their places). A slot moves at
// most once per level below its first, so push is O(1) and pop O(1)
// amortized plus the tie heap; with 6-bit digits a slot scheduled up to
// 2^18 ns (0.26 ms) ahead moves at most twice, one 2^24 ns (17 ms) ahead
// three times, where one-bit digits moved a slot about ten times at 10^5
// pending. A slot pushed before last (possible only after a peek that did
// not pop, e.g. Run stopping at its until) precedes everything else and
// waits in early, a small heap by (at, key).
type radixQueue struct {
	last    Time
	early   []slot // heap by (at, key); every at < last (pushed after a peek)
	cur     []slot // heap by key; every at == last
	buckets [radixDigits << radixBits][]slot
	levels  uint16              // bit l set when level l has a non-empty bucket
	digits  [radixDigits]uint64 // bit d of digits[l] set when bucket (l, d) is non-empty
	n       int
}

// radixBits is the width of a digit; radixDigits digits cover 64 bits.
const (
	radixBits   = 6
	radixDigits = (64 + radixBits - 1) / radixBits
)

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

// place puts s (at >= last) in cur or its bucket.
func (q *radixQueue) place(s slot) {
	x := uint64(s.at ^ q.last)
	if x == 0 {
		q.curPush(s)
		return
	}
	l := uint(bits.Len64(x)-1) / radixBits
	d := uint64(s.at) >> (l * radixBits) & (1<<radixBits - 1)
	i := l<<radixBits | uint(d)
	q.buckets[i] = append(q.buckets[i], s)
	q.levels |= 1 << l
	q.digits[l] |= 1 << d
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

// refill moves the first non-empty bucket's slots down, its minimum time
// becoming last and its slots at that time filling cur.
func (q *radixQueue) refill() {
	l := uint(bits.TrailingZeros16(q.levels))
	d := uint(bits.TrailingZeros64(q.digits[l]))
	i := l<<radixBits | d
	q.digits[l] &^= 1 << d
	if q.digits[l] == 0 {
		q.levels &^= 1 << l
	}
	b := q.buckets[i]
	if l == 0 {
		// A level-0 bucket holds one time: its slots become cur whole
		// (cur is empty; its array becomes the bucket's).
		q.last = b[0].at
		q.buckets[i] = q.cur[:0]
		q.cur = b
		for k := (len(b) - 2) / 2; k >= 0; k-- {
			heapDown(b, k, b[k])
		}
		return
	}
	m := b[0].at
	for k := 1; k < len(b); k++ {
		if b[k].at < m {
			m = b[k].at
		}
	}
	q.last = m
	for k := range b {
		q.place(b[k]) // to cur or a level below l: never back into b
		b[k] = slot{}
	}
	q.buckets[i] = b[:0]
}

// filter keeps the slots for which keep is true, in place.
func (q *radixQueue) filter(keep func(*slot) bool) {
	q.early = heapFilter(q.early, keep)
	q.cur = heapFilter(q.cur, keep)
	q.n = len(q.early) + len(q.cur)
	for i := range q.buckets {
		b := q.buckets[i]
		if len(b) == 0 {
			continue
		}
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
			l, d := uint(i)>>radixBits, uint(i)&(1<<radixBits-1)
			q.digits[l] &^= 1 << d
			if q.digits[l] == 0 {
				q.levels &^= 1 << l
			}
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
