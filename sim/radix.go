package sim

import (
	"math/bits"
	"slices"
)

// slot is one queued event with its sort key.
type slot struct {
	at  Time
	key uint64  // priority<<56 | seq
	fn  uintptr // the address of its action's closure (see Engine)
	ev  uint32  // its record index (Engine.live, Engine.recs)
}

// after is 1 when a is ordered after (at, key), else 0, without a branch.
func (a *slot) after(at Time, key uint64) uint64 { return lessBorrow(at, key, a.at, a.key) }

// lessBorrow is 1 when (at, key) is ordered before (at2, key2), else 0:
// the borrow of the 128-bit subtraction (at, key) − (at2, key2), no branch
// (times are never negative, so their bits compare as unsigned). Which of
// two events is the earlier is data a branch predictor cannot learn (the
// timers' climbs, the rank sort of short runs).
func lessBorrow(at Time, key uint64, at2 Time, key2 uint64) uint64 {
	_, b := bits.Sub64(key, key2, 0)
	_, b = bits.Sub64(uint64(at), uint64(at2), b)
	return b
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
// last event popped.
//
// Times are read as digits of radixWidths bits (level 0 the least
// significant). The front of the
// queue is cur, a run of slots whose times lie in [last, curHi], sorted in
// descending order so that popping takes the last element. Every other slot
// has at > curHi and waits in the bucket of (level, digit): level the most
// significant digit where at and last differ, digit at's value there
// (larger than last's). Every slot of a lower level precedes every slot of
// a higher one, and within a level a lower digit precedes a higher one, so
// the first non-empty bucket in (level, digit) order holds the minimum: a
// bit per bucket in words, in that order, and a bit per word in summary,
// find it with two trailing-zero counts.
//
// When cur is spent, refill takes the first non-empty bucket (l, d): the
// lower bound of its times (last's digits above l, then d, then zeros)
// becomes last. A bucket of at most radixCurMax slots, or one of level 0 (a
// single time), becomes cur whole: it is sorted, and curHi becomes the
// upper bound of its times. A larger bucket is spread over the levels below
// l relative to the new last (its slots at exactly last into cur, curHi =
// last), and refill goes on until cur is not empty. A slot moves at most
// once per level below its first, so push is O(1) and pop O(1) amortized
// plus the sort of a small run. At 10^5 pending in the hold model (a slot
// every 10 ns, scheduled ~1 ms ahead) a slot is placed at level 2 or 3,
// moves down to level 1, and its level-1 bucket (64 ns, ~6 slots) becomes
// cur; spreading that bucket over level 0 instead cost a move and a refill
// per slot.
//
// A slot pushed into cur's range is inserted in order when at most
// radixShiftMax slots of cur precede it (events scheduled for now come
// after few); otherwise (e.g. many ties at one instant pushed in sequence
// order, each after all the others) it goes to side, a binary heap by (at,
// key), as does a slot pushed before last (possible only after a peek that
// did not pop, e.g. Run stopping at its until). The minimum is the smaller
// of cur's last slot and side's top; buckets are refilled only when both
// are empty.
type radixQueue struct {
	last    Time
	curHi   Time                    // every at in cur is in [last, curHi]; every bucketed at is above curHi
	cur     []slot                  // sorted by (at, key), descending: the minimum is last
	side    []slot                  // heap by (at, key); every at <= curHi
	buckets [radixWords * 64][]slot // bucket (l, d) is buckets[radixLevel[l].base+d]
	words   [radixWords]uint64      // bit i&63 of words[i>>6] set when buckets[i] is not empty
	summary uint64                  // bit w set when words[w] is not 0
	n       int
	topSide bool // the slot top returned is side's (see popTop)
}

// radixWidths are the widths in bits of the digits, from the least
// significant; they cover 64 bits. Level 0's 6 bits make a level-1 bucket
// span 64 ns, a run of a few slots at 10^5 pending in the hold model (a slot
// every 10 ns), which refill sorts whole into cur; above it 8-bit digits
// place a slot scheduled ~1 ms (2^20 ns) ahead at level 2 (bits 14-21) or
// 3, from where it moves to level 1 and cur: two or three placements,
// against three or four with 6-bit digits throughout.
var radixWidths = [...]uint{6, 8, 8, 8, 8, 8, 8, 8, 2}

// radixWords is the number of 64-bit words of bucket flags: one per 64
// digits of a level.
const radixWords = 30

// radixLevelInfo describes a level: its digit is at>>shift&mask, its
// buckets start at base, and above has the bits of its digit and every
// lower one.
type radixLevelInfo struct {
	shift, base uint
	mask, above uint64
}

var (
	radixLevel       [len(radixWidths)]radixLevelInfo
	radixLevelByLen  [65]radixLevelInfo // the level holding bit n-1, by n = bits.Len64 (a copy: place's one lookup)
	radixLevelOfWord [32]uint8          // the level a word of flags belongs to
)

func init() {
	shift, words := uint(0), uint(0)
	for l, w := range radixWidths {
		radixLevel[l] = radixLevelInfo{shift: shift, base: words * 64, mask: 1<<w - 1}
		if shift+w < 64 {
			radixLevel[l].above = 1<<(shift+w) - 1
		} else {
			radixLevel[l].above = ^uint64(0)
		}
		for n := shift + 1; n <= shift+w; n++ {
			radixLevelByLen[n] = radixLevel[l]
		}
		nw := (uint(1)<<w + 63) / 64
		for k := uint(0); k < nw; k++ {
			radixLevelOfWord[words+k] = uint8(l)
		}
		shift += w
		words += nw
	}
	radixLevelByLen[0] = radixLevel[0] // (at == last: never placed, but level 0 is its level)
	if shift != 64 || words != radixWords {
		panic("sim: radixWidths do not cover 64 bits in radixWords words")
	}
}

const (
	// radixCurMax is the largest bucket refill sorts whole into cur rather
	// than spreading it over the levels below (tuned on BenchmarkHoldModel).
	radixCurMax = 32
	// radixShiftMax is how many slots of cur an insertion may move before
	// the slot goes to side instead.
	radixShiftMax = 8
	// rankSortMax is the largest run appendSorted sorts by rank
	// (comparisons growing as its square) rather than by insertion.
	rankSortMax = 12
)

func (q *radixQueue) len() int { return q.n }

func (q *radixQueue) push(s slot) {
	q.n++
	if s.at <= q.curHi {
		if s.at < q.last {
			q.side = heapPush(q.side, s)
			return
		}
		q.curPush(s)
		return
	}
	q.place(s)
}

// curPush inserts s (at in [last, curHi]) into cur, or into side when
// more than radixShiftMax slots of cur precede it.
func (q *radixQueue) curPush(s slot) {
	c := q.cur
	n := len(c)
	j := n
	for j > 0 && c[j-1].less(&s) {
		if n-j == radixShiftMax {
			q.side = heapPush(q.side, s)
			return
		}
		j--
	}
	c = append(c, s)
	if j < n {
		copy(c[j+1:], c[j:n])
		c[j] = s
	}
	q.cur = c
}

// place puts s (at > curHi) in its bucket.
func (q *radixQueue) place(s slot) {
	lv := &radixLevelByLen[bits.Len64(uint64(s.at^q.last))]
	i := lv.base + uint(uint64(s.at)>>(lv.shift&63)&lv.mask)
	b := q.buckets[i]
	if len(b) == 0 { // (its flags are set already otherwise)
		q.words[i>>6] |= 1 << (i & 63)
		q.summary |= 1 << (i >> 6)
	}
	q.buckets[i] = append(b, s)
}

// top returns the minimum slot; the queue must not be empty. popTop removes
// it.
func (q *radixQueue) top() *slot {
	if n := len(q.cur); n > 0 && len(q.side) == 0 {
		q.topSide = false
		return &q.cur[n-1]
	}
	return q.topSlow()
}

func (q *radixQueue) topSlow() *slot {
	if len(q.cur) == 0 && len(q.side) == 0 {
		q.refill()
	}
	n := len(q.cur)
	q.topSide = len(q.side) > 0 && (n == 0 || q.side[0].less(&q.cur[n-1]))
	if q.topSide {
		return &q.side[0]
	}
	return &q.cur[n-1]
}

// popTop removes and returns the slot the last call of top returned; no
// push may come between the two.
func (q *radixQueue) popTop() slot {
	q.n--
	if q.topSide {
		var s slot
		q.side, s = heapPop(q.side)
		return s
	}
	n := len(q.cur) - 1
	s := q.cur[n]
	q.cur = q.cur[:n]
	return s
}

// pop removes and returns the minimum slot; the queue must not be empty.
func (q *radixQueue) pop() slot {
	q.top()
	return q.popTop()
}

// refill fills cur, which is empty as side is, from the first non-empty
// buckets (see radixQueue).
func (q *radixQueue) refill() {
	for len(q.cur) == 0 && len(q.side) == 0 {
		w := uint(bits.TrailingZeros64(q.summary))
		i := w<<6 | uint(bits.TrailingZeros64(q.words[w]))
		q.words[w] &^= 1 << (i & 63)
		if q.words[w] == 0 {
			q.summary &^= 1 << w
		}
		l := radixLevelOfWord[w&31]
		lv := &radixLevel[l]
		b := q.buckets[i]
		// Digits above l are last's.
		q.last = Time(uint64(q.last)&^lv.above | uint64(i-lv.base)<<(lv.shift&63))
		if l == 0 || len(b) <= radixCurMax {
			// Copied, not swapped with cur's array: a bucket keeps the
			// capacity its level needs (swapping handed a level's large
			// arrays to cur and grew small ones again, ~100 B per event
			// at 10^5 pending).
			q.cur = appendSorted(q.cur, b)
			// curHi is cur's largest time, not the bucket's upper bound:
			// a later push into the bucket's range is placed in a bucket
			// of a lower level (O(1)) rather than inserted into cur past
			// every slot before it.
			q.curHi = q.cur[0].at
			q.buckets[i] = b[:0]
			return
		}
		q.curHi = q.last
		for k := range b {
			if b[k].at == q.last {
				q.curPush(b[k])
			} else {
				q.place(b[k]) // to a level below l: never back into b
			}
		}
		q.buckets[i] = b[:0]
		q.passOn(i, lv)
	}
}

// passOn hands the array of bucket i of level lv, just spread and empty,
// to the bucket of the next digit, the one its level fills now, if that
// bucket's array is smaller and holds few slots yet (at most an eighth of
// the larger array, which it copies), taking that one in exchange. So the
// large arrays move ahead with last rather than every bucket of a level
// growing one of its own: at 10^5 pending in the hold model each bucket of
// level 3 grew to hold most of the pending slots, hundreds of MB over a
// simulated second, as much allocated and copied as it grew.
func (q *radixQueue) passOn(i uint, lv *radixLevelInfo) {
	b := q.buckets[i]
	k := lv.base + (i-lv.base+1)&uint(lv.mask)
	nb := q.buckets[k]
	if cap(nb) >= cap(b) || 8*len(nb) > cap(b) {
		return
	}
	q.buckets[k] = append(b, nb...)
	q.buckets[i] = nb[:0]
}

// appendSorted returns the empty h with src's slots sorted by (at, key),
// largest first: by rank when very short, by insertion when short (a run
// from one small bucket), else by slices.SortFunc.
func appendSorted(h, src []slot) []slot {
	if len(src) > radixCurMax {
		h = append(h, src...)
		slices.SortFunc(h, func(a, b slot) int {
			if b.less(&a) {
				return -1
			}
			return 1 // keys are unique: a and b are never equal
		})
		return h
	}
	if cap(h) < len(src) {
		h = make([]slot, 0, 2*len(src))
	}
	h = h[:len(src)]
	if len(src) <= rankSortMax {
		// By rank: each slot goes to the place of the number of slots
		// larger than it (keys are unique: a permutation), counted
		// without a branch; the insertion below branches on every
		// comparison, which random times mispredict.
		for _, s := range src {
			r := 0
			for k := range src {
				r += int(src[k].after(s.at, s.key))
			}
			h[r] = s
		}
		return h
	}
	for k, s := range src {
		hk := h[:k+1] // (the bound the compiler needs to drop its checks)
		j := k
		for ; j > 0; j-- {
			p := &hk[j-1]
			if p.at > s.at || p.at == s.at && p.key > s.key {
				break
			}
			hk[j] = *p
		}
		hk[j] = s
	}
	return h
}

// filter keeps the slots for which keep is true, in place.
func (q *radixQueue) filter(keep func(*slot) bool) {
	q.side = heapFilter(q.side, keep)
	w := 0
	for k := range q.cur {
		if keep(&q.cur[k]) {
			q.cur[w] = q.cur[k]
			w++
		}
	}
	q.cur = q.cur[:w] // still in order
	q.n = len(q.side) + len(q.cur)
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
			q.words[i>>6] &^= 1 << (i & 63)
			if q.words[i>>6] == 0 {
				q.summary &^= 1 << (i >> 6)
			}
		}
		q.n += w
	}
}

// heapPush, heapPop and heapFilter maintain a binary min-heap by slot.less.
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
