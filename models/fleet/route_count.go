package fleet

import "math/bits"

// countIndex is least-outstanding's index (KeyOutstanding) on fleets of at
// most countIndexMax replicas: the available replicas bucketed by their
// Outstanding, each bucket (level) a bitmap over replica indices with a
// summary word of its non-zero words, and the least non-empty level. The
// decision is the lowest set bit of the least level: the fewest
// Outstanding, lowest index among ties, as the scan decides. A change
// moves one bit between two levels, O(1) (the least level moves up past
// empty levels only when its last replica leaves it), instead of a walk
// up a tree; a decision reads two words.
//
// Levels are added as Outstanding grows, up to countLevelsFor(words); an
// Outstanding at or beyond that, or negative (never in a valid fleet), is
// wide: routeIndex counts it and the gateway asks the router.
type countIndex struct {
	words uint     // bitmap words per level: ceil(replicas / 64), at most 64
	bits  []uint64 // level c's bitmap is bits[c*words : (c+1)*words]
	lv    []uint64 // level c's summary word: bit w says its bitmap's word w is non-zero (all zero: the level is empty)
	at    []int32  // replica i's level, -1 when in none (unavailable or wide)
	least int      // the least non-empty level, -1 when all are empty
	limit int      // levels never grow to this Outstanding (wide beyond)
}

// countIndexMax is the most replicas a countIndex holds (one summary word
// of 64 bitmap words); larger fleets keep the tournament tree.
const countIndexMax = 64 * 64

// countLevelWords bounds the levels' bitmaps to 16 MiB, reached only when
// some replica holds that many requests: 2^21 words / words per level.
const countLevelWords = 1 << 21

func newCountIndex(replicas int) *countIndex {
	w := max(1, (replicas+63)/64)
	c := &countIndex{words: uint(w), at: make([]int32, replicas), least: -1, limit: countLevelWords / w}
	for i := range c.at {
		c.at[i] = -1
	}
	return c
}

// level is the level replica i with outstanding o belongs in when
// available: -1 when o cannot be a level (wide).
func (c *countIndex) level(o int) int {
	if o < 0 || o >= c.limit {
		return -1
	}
	return o
}

// move puts replica i in level to (-1: none); it is in level at[i] now.
func (c *countIndex) move(i, to int) {
	from := int(c.at[i])
	if from == to {
		return
	}
	c.at[i] = int32(to)
	ui := uint(i)
	bit := uint64(1) << (ui & 63)
	wbit := uint64(1) << (ui >> 6 & 63)
	if to >= 0 {
		if to >= len(c.lv) {
			c.grow(to)
		}
		c.bits[uint(to)*c.words+ui>>6] |= bit
		c.lv[to] |= wbit
		if uint(to) < uint(c.least) { // least -1: any level is less
			c.least = to
		}
	}
	if from >= 0 {
		w := uint(from)*c.words + ui>>6
		b := c.bits[w] &^ bit
		c.bits[w] = b
		if b == 0 {
			l := &c.lv[from]
			if *l &^= wbit; *l == 0 && from == c.least {
				c.raise(from)
			}
		}
	}
}

// grow adds levels up to level to. (Rare: out of line, so move stays
// small.)
//
//go:noinline
func (c *countIndex) grow(to int) {
	for to >= len(c.lv) {
		c.bits = append(c.bits, make([]uint64, c.words)...)
		c.lv = append(c.lv, 0)
	}
}

// raise moves the least level up from the level from, just emptied.
// (Rare: out of line, so move stays small.)
//
//go:noinline
func (c *countIndex) raise(from int) {
	l := from + 1
	for l < len(c.lv) && c.lv[l] == 0 {
		l++
	}
	if l == len(c.lv) {
		l = -1
	}
	c.least = l
}

// first is the lowest replica index in the least level; ok false when
// every level is empty.
func (c *countIndex) first() (int, bool) {
	if c.least < 0 {
		return 0, false
	}
	w := uint(bits.TrailingZeros64(c.lv[c.least]))
	return int(w<<6) + bits.TrailingZeros64(c.bits[uint(c.least)*c.words+w]), true
}

// holds reports whether replica i is in level l (-1: in none) and the
// level's count and the least level agree with it.
func (c *countIndex) holds(i, l int) bool {
	if int(c.at[i]) != l {
		return false
	}
	if l < 0 {
		return true
	}
	w := uint(l)*c.words + uint(i)>>6
	return c.bits[w]&(1<<(i&63)) != 0 && c.lv[l]&(1<<(i>>6)) != 0 && c.least >= 0 && c.least <= l
}
