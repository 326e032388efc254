package engine

import (
	"math"
	"math/bits"

	"github.com/fleetsim/fleetsim/sim"
)

// decoders is the decoding part of an iteration-level replica's running
// batch (iterSched), kept under a decode clock so that a decode step or
// run costs O(1) whatever the batch size, and a sequence costs O(log n)
// when it starts or stops decoding.
//
// Every decoding sequence gets one token per decode step, all together
// (continuous batching's prefill steps pause them all), so instead of
// advancing each one the set counts steps in clk; a sequence's gen,
// kvTokens, tailTokens, tailBlocks and last are stored as of clock s.dclk
// and brought up to date when something reads them (Replica.sync). What
// planning needs is kept as aggregates whose keys do not move with the
// clock:
//
//   - ctx, Σ kvTokens, as Σ (kvTokens − dclk) + n·clk;
//   - the least output tokens a decoder still owes, from a heap keyed
//     OutputTokens − gen + dclk;
//   - block demand from a histogram of free token slots: a decoder holding
//     H tail blocks for T tail tokens has f = H·B − T free slots, and each
//     step takes f to (f − 1) mod B, so (f + clk) mod B is fixed; j more
//     steps take max(0, ⌈(j − f)/B⌉) more blocks (⌈(T+j)/B⌉ − H, since H·B
//     is a multiple of B), a sum over at most B distinct f. Decoders whose
//     f is outside [0, B) (contiguous regions; blocks too large for a
//     histogram) are kept in a heap keyed f + dclk instead;
//   - the time each decoder produced its last token, as a few groups
//     (every decode step puts all decoders in one), from which the
//     inter-token gaps of a step or run are recorded per group.
type decoders struct {
	clk    int64    // decode steps taken
	ahead  int64    // blocks are taken for this many tokens past clk (1 while a mixed step is under way)
	lastAt sim.Time // when the latest decode step ended
	paused bool     // the step under way pauses decoding (continuous batching's prefill step)

	n         int   // decoding sequences (withdrawn ones too, until reaped)
	cancelled int   // withdrawn ones among them
	kvOff     int64 // Σ (kvTokens − dclk)
	hist      []int64
	nHist     int         // decoders in hist
	rem       seqHeap     // key OutputTokens − gen + dclk
	far       seqHeap     // key f + dclk, decoders outside hist
	groups    []lastGroup // decoders by when they produced their last token, oldest first
	// pow2 is log2 of the block size when that is a power of two (demand
	// then shifts and masks instead of dividing), else -1.
	pow2 int
	// mask1 is the block size − 1 when demand1 has its short answer
	// (a histogram, blocks a power of two), else −1.
	mask1 int64
}

// lastGroup is the decoders that produced their last token at the same time.
type lastGroup struct {
	at sim.Time
	n  int
}

// maxFreeHist bounds the histogram; larger blocks put every decoder in far
// (exact, by a scan when it matters).
const maxFreeHist = 1024

// newDecoders returns an empty set for blocks of blockTokens.
func newDecoders(blockTokens int64) decoders {
	d := decoders{rem: seqHeap{slot: 0}, far: seqHeap{slot: 1}, pow2: -1, mask1: -1}
	if blockTokens > 0 && blockTokens&(blockTokens-1) == 0 {
		d.pow2 = bits.TrailingZeros64(uint64(blockTokens))
	}
	if blockTokens <= maxFreeHist {
		d.hist = make([]int64, blockTokens)
		if d.pow2 >= 0 {
			d.mask1 = blockTokens - 1
		}
	}
	return d
}

// reset empties the set (the replica dropped its whole batch).
func (d *decoders) reset() {
	clk, hist := d.clk, d.hist
	clear(hist)
	*d = decoders{clk: clk, hist: hist, rem: d.rem, far: d.far, groups: d.groups[:0], pow2: d.pow2, mask1: d.mask1}
	d.rem.clear()
	d.far.clear()
}

// ctx is Σ kvTokens over the decoders.
func (d *decoders) ctx() int64 { return d.kvOff + int64(d.n)*d.clk }

// minRem is the least output tokens a decoder still owes
// (math.MaxInt32 when there is none).
func (d *decoders) minRem() int64 {
	if d.rem.len() == 0 {
		return math.MaxInt32
	}
	return d.rem.minKey() - d.clk
}

// decodeSteps applies k decode steps of every decoder, the first token out
// at first and the last at end: each decoder's gap to its first token, by
// group in the order a per-sequence pass gave, the tokens, and the clock.
// (A run's later gaps, its shared ramp, are the caller's: runGaps.done.)
func (r *Replica) decodeSteps(k int64, first, end sim.Time, conv *gapConv) {
	d := &r.dec
	for _, g := range d.groups {
		r.itl.addN(conv.ms(g.at, first), uint64(g.n))
	}
	r.Stats.DecodeTokens += k * int64(d.n)
	r.state.OutstandingTokens -= k * int64(d.n-d.cancelled) // withdrawn copies were already taken off
	d.advance(k, end)
}

// advance records k decode steps of every decoder, the last ending at end.
func (d *decoders) advance(k int64, end sim.Time) {
	d.clk += k
	d.ahead = 0
	d.lastAt = end
	d.groups = d.groups[:0]
	if d.n > 0 {
		d.groups = append(d.groups, lastGroup{at: end, n: d.n})
	}
}

// sync brings s's decode state up to date with the clock (a no-op for a
// sequence that is not decoding under it).
func (r *Replica) sync(s *seq) {
	if !s.inDec {
		return
	}
	d := &r.dec
	if x := d.clk - s.dclk; x > 0 {
		s.gen += int32(x)
		s.kvTokens += x
		s.tailTokens += x
		s.last = d.lastAt
		s.dclk = d.clk
	}
	if t := s.tailTokens + d.ahead; t > s.tailBlocks*r.blockTokens { // crossed into new blocks
		s.tailBlocks = r.blocksFor(t)
	}
}

// startDecoding adds s, which produced its first token (or its first since
// a preemption) at the end of the step that just ended, to the decoders.
func (r *Replica) startDecoding(s *seq) {
	d := &r.dec
	if d.ahead != 0 {
		panic("models: a sequence starts decoding while blocks are taken ahead")
	}
	s.inDec, s.dclk = true, d.clk
	d.n++
	if s.cancelled {
		d.cancelled++
	}
	d.kvOff += s.kvTokens - d.clk
	B := r.blockTokens
	if f := s.tailBlocks*B - s.tailTokens; d.hist != nil && f >= 0 && f < B {
		s.histKey = int32((f + d.clk) % B)
		d.hist[s.histKey]++
		d.nHist++
	} else {
		s.histKey = -1
		d.far.push(s, f+d.clk)
	}
	d.rem.push(s, int64(s.req.OutputTokens-s.gen)+d.clk)
	if g := len(d.groups); g > 0 && d.groups[g-1].at == s.last {
		d.groups[g-1].n++
		return
	}
	// Kept sorted by time; a newcomer's last token is normally the latest.
	i := len(d.groups)
	for i > 0 && d.groups[i-1].at > s.last {
		i--
	}
	if i < len(d.groups) && d.groups[i].at == s.last {
		d.groups[i].n++
		return
	}
	d.groups = append(d.groups, lastGroup{})
	copy(d.groups[i+1:], d.groups[i:])
	d.groups[i] = lastGroup{at: s.last, n: 1}
}

// stopDecoding takes s, synced, out of the decoders.
func (r *Replica) stopDecoding(s *seq) {
	d := &r.dec
	s.inDec = false
	d.n--
	if s.cancelled {
		d.cancelled--
	}
	d.kvOff -= s.kvTokens - s.dclk
	if s.histKey >= 0 {
		d.hist[s.histKey]--
		d.nHist--
	} else {
		d.far.remove(s)
	}
	if s.hidx[0] >= 0 { // (reap pops finished decoders first)
		d.rem.remove(s)
	}
	for i := range d.groups {
		if d.groups[i].at == s.last {
			if d.groups[i].n--; d.groups[i].n == 0 {
				d.groups = append(d.groups[:i], d.groups[i+1:]...)
			}
			return
		}
	}
	panic("models: a decoder's last token time is in no group")
}

// demand is the number of new blocks the decoders need for j >= 1 more
// decode steps: Σ over decoders of max(0, blocksFor(tailTokens+j) −
// tailBlocks), their blocks taken ahead counted.
func (r *Replica) demand(j int64) int64 {
	d := &r.dec
	if d.far.len() > 0 && j > d.far.minKey()-d.clk {
		return r.scanDemand(j)
	}
	B := r.blockTokens
	if d.hist == nil {
		return 0 // every decoder is far, and none needs a block
	}
	// With j−1 = q·B + rem, ⌈(j−f)/B⌉ = q+1 for f <= rem and q for
	// rem < f < B: q blocks for every decoder of the histogram, one more
	// for those with f <= rem. The count of free slots f sits at
	// hist[(f + clk) mod B].
	var q, rem, o int64
	if d.pow2 >= 0 {
		q, rem, o = (j-1)>>d.pow2, (j-1)&(B-1), d.clk&(B-1)
	} else {
		q, rem, o = (j-1)/B, (j-1)%B, d.clk%B
	}
	if rem == 0 && q == 0 { // j = 1: the decoders with no free slot
		return (1 - d.ahead) * d.hist[o]
	}
	need := q * int64(d.nHist)
	if 2*rem >= B { // half the histogram or more: count the rest and subtract
		e := o + rem + 1 // the rest starts at e mod B
		if e >= B {
			e -= B
		}
		need += int64(d.nHist) - d.histSum(e, B-1-rem, B)
	} else {
		need += d.histSum(o, rem+1, B)
	}
	// A decoder with f = 0 already took the block of its next token
	// (a mixed step cut short by a hang).
	return need - d.ahead*d.hist[o]
}

// histSum is the count of the n <= B histogram entries from i < B on,
// wrapping past the end.
func (d *decoders) histSum(i, n, B int64) int64 {
	var sum int64
	if i+n <= B {
		for _, c := range d.hist[i : i+n] {
			sum += c
		}
		return sum
	}
	for _, c := range d.hist[i:] {
		sum += c
	}
	for _, c := range d.hist[:i+n-B] {
		sum += c
	}
	return sum
}

// demand1 is demand(1), every step's question, when it has a short
// answer (ok): no decoder is far and blocks are a power of two, so the
// decoders with no free slot take a block each, unless taken ahead. Small
// enough to inline.
func (r *Replica) demand1() (need int64, ok bool) {
	d := &r.dec
	if d.far.len() > 0 || d.mask1 < 0 {
		return 0, false
	}
	return (1 - d.ahead) * d.hist[d.clk&d.mask1], true
}

// scanDemand is demand by a scan of the batch.
func (r *Replica) scanDemand(j int64) int64 {
	var need int64
	for _, s := range r.batch() {
		if s.inDec {
			r.sync(s)
			need += max(0, r.blocksFor(s.tailTokens+j)-s.tailBlocks)
		}
	}
	return need
}

// seqHeap is a 4-ary min-heap of sequences by an int64 key (half the
// levels of a binary heap: fewer moves per pop for the same comparisons);
// each sequence knows its position (seq.hidx[slot]), so any can be removed
// in O(log n). Sifting moves a hole rather than swapping. Which of equal
// keys comes first is no part of any output: reap sorts what it pops by
// joinNo, and far is only asked for its least key.
type seqHeap struct {
	slot int // which of seq.hidx this heap uses (0 or 1)
	e    []heapEntry
}

// heapEntry is a sequence and its key, side by side (one append, one
// bounds check).
type heapEntry struct {
	key int64
	s   *seq
}

func (h *seqHeap) len() int      { return len(h.e) }
func (h *seqHeap) minKey() int64 { return h.e[0].key }
func (h *seqHeap) clear()        { clear(h.e); h.e = h.e[:0] }

// set puts x at position i.
func (h *seqHeap) set(i int, x heapEntry) {
	h.e[i] = x
	x.s.hidx[h.slot&1] = int32(i)
}

func (h *seqHeap) push(s *seq, key int64) {
	h.e = append(h.e, heapEntry{key, s})
	h.up(len(h.e)-1, heapEntry{key, s})
}

// remove takes s, which is in the heap, out of it.
func (h *seqHeap) remove(s *seq) {
	i := int(s.hidx[h.slot&1])
	last := len(h.e) - 1
	x := h.e[last]
	h.e[last] = heapEntry{}
	h.e = h.e[:last]
	s.hidx[h.slot&1] = -1
	if i != last && !h.down(i, x) { // the last one fills the hole
		h.up(i, x)
	}
}

// pop removes and returns the sequence with the least key (remove at the
// root: the last entry fills the hole and can only go down).
func (h *seqHeap) pop() *seq {
	s := h.e[0].s
	last := len(h.e) - 1
	x := h.e[last]
	h.e[last] = heapEntry{}
	h.e = h.e[:last]
	s.hidx[h.slot&1] = -1
	if last > 0 {
		h.down(0, x)
	}
	return s
}

// least is the index and key of the lesser of keys ki and kj (i's on a
// tie), by a mask, not a branch (the compiler turns a branch on it into
// conditional moves only in small functions, not in down's loop).
func least(i int, ki int64, j int, kj int64) (int, int64) {
	m := -b2i(kj < ki) // all ones when j's is less
	return i ^ (i^j)&int(m), ki ^ (ki^kj)&m
}

// up places x at hole i or above it.
func (h *seqHeap) up(i int, x heapEntry) {
	for i > 0 {
		p := (i - 1) / 4
		if !(x.key < h.e[p].key) {
			break
		}
		h.set(i, h.e[p])
		i = p
	}
	h.set(i, x)
}

// down places x at hole i or below it, and reports whether it went below.
func (h *seqHeap) down(i int, x heapEntry) bool {
	i0, n := i, len(h.e)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The least of c's up to four siblings.
		m, mk := c, h.e[c].key
		if e := min(c+4, n); e-c == 4 {
			// A tournament of conditional moves (least): which key is
			// the least is data a branch predictor cannot learn.
			k := h.e[c : c+4 : c+4]
			m, mk = least(m, mk, c+1, k[1].key)
			m23, k23 := least(c+2, k[2].key, c+3, k[3].key)
			m, mk = least(m, mk, m23, k23)
		} else {
			for j := c + 1; j < e; j++ {
				m, mk = least(m, mk, j, h.e[j].key)
			}
		}
		if !(mk < x.key) {
			break
		}
		h.set(i, h.e[m])
		i = m
	}
	h.set(i, x)
	return i != i0
}
