package quantile

import (
	"math"
	"sync"
)

// The bucket index without a logarithm per value.
//
// The index of v > 0 is, by definition, what the logarithm gives:
//
//	logIndex(v) = ceil(F(v)),  F(v) = fl(Log(v) · g),  g = invLogGamma
//
// (fl: float64 rounding, Log: math.Log). index computes the same integer
// from v's bits: v = 2^e · m with m in [1, 2), so ln v = e·ln 2 + ln m, and
//
//	A(v) = fl(e · perOctave) + (at[i] + f · slope[i])
//
// where perOctave ≈ g·ln 2, i is the top tableBits bits of m's fraction
// (m in [m_i, m_i + h), m_i = 1 + i·h, h = 2^-tableBits), f the remaining
// 52−tableBits bits as an integer (so m = m_i + f·2^-52), and at[i],
// slope[i] the chord of g·ln m over the cell: at[i] ≈ g·ln m_i and
// at[i] + 2^(52−tableBits)·slope[i] ≈ g·ln m_(i+1). A is within bound of
// F (proof below), so when A lies farther than bound from every integer,
// F lies strictly between the same two integers as A and ceil(A) =
// ceil(F) exactly; otherwise (a fraction 2·bound of uniformly spread
// values, about 2e-4 at alpha = 0.01; 3.9e-4 of Fleet8x8B's latencies) and
// for subnormal v, index computes ceil(F) itself.
//
// The bound |A − F| <= bound = g·(h²/8 + 2^-36) + 2^-50. Write u = 2^-53
// (the unit roundoff) and take math.Log to be within 8 ulps of ln, i.e.
// within 16u·|ln x| relative (documented: under 1 ulp; 8 leaves room for
// any platform's implementation). Measured in units of g (g·x, x real):
//
//   - Chord: ln is concave, its second derivative −1/m² at most 1 in size
//     on [1, 2], so the chord through (m_i, ln m_i) and (m_i+h, ln(m_i+h))
//     lies below ln m by at most h²/8 (the interpolation remainder,
//     (m−m_i)(m_i+h−m)/(2ξ²) for some ξ in the cell, is at most ½·h²/4).
//     At tableBits = 8: 2^-19·g ≈ 1.9e-6·g.
//   - Table: at[i] = fl(Log(m_i)·g) is within 16u·ln 2 + u·ln 2 < 12u of
//     g·ln m_i (ln m_i < ln 2), and so is the right end of each chord;
//     slope[i] is their difference (one rounding, at most u·ln 2, times
//     an exact power of two), so the computed chord a + f·slope with real
//     arithmetic is within 12u + 12u + u = 25u of the true chord at every
//     f in the cell, and the two roundings of fl(at + fl(f·slope)) (or
//     one, fused) add at most 2u·ln 2 < 2u: 27u in all.
//   - Octaves: perOctave = fl(fl(ln 2)·g) is within 2u (plus u²) relative
//     of g·ln 2, so for normal v (|e| <= 1023) the product e·perOctave is
//     within 1023·ln 2·2.01u < 1425u of e·g·ln 2, and its rounding adds at
//     most u·710 (|e·perOctave| <= 709.1·g): 2135u.
//   - The sum A = fl(E + P), E = fl(e·perOctave) and P = fl(at + fl(f·slope))
//     as above, rounds once: at most u·710.
//   - F itself: Log(v) is within 16u·|ln v| <= 16u·710 of ln v for normal
//     v, so Log(v)·g is within 11360u, and rounding the product adds u·711.
//
// Total: h²/8 + (27 + 2135 + 710 + 11360 + 711)u = h²/8 + 14943u <
// h²/8 + 2^14·2^-53 = h²/8 + 2^-39, all times g, so the bound's 2^-36 term
// is 8× larger than needed even with Log's error taken as 8 ulps. The
// fraction d = A − floor(A) is exact for |A| >= 1 (Sterbenz) and within
// u of the true fraction for |A| < 1, and boundHi = fl(1 − bound) is
// within u/2 of 1 − bound: 2^-50 covers both. Only the h²/8 term is close
// to what happens: TestBucketIndexBound shows that halving the bound makes
// index disagree with the logarithm at bucket edges.
const tableBits = 8

// tableCells is the number of mantissa cells: 2^tableBits.
const tableCells = 1 << tableBits

// cellBits is the number of low fraction bits within a cell: f in index.
const cellBits = 52 - tableBits

// bucketTable is the per-alpha state index needs: about 4 KiB, built once
// per distinct alpha and shared by every Sketch with that alpha (it is
// never written after tableFor returns it).
type bucketTable struct {
	invLogGamma float64 // g = 1/Log(gamma), exactly the Sketch's
	perOctave   float64 // fl(Ln2·g): index change per factor of 2
	bound       float64 // |A − F| <= bound; see above
	boundHi     float64 // 1 − bound
	cells       [tableCells]struct{ at, slope float64 }
}

// newBucketTable builds the table for g = invLogGamma.
func newBucketTable(invLogGamma float64) *bucketTable {
	g := invLogGamma
	t := &bucketTable{invLogGamma: g, perOctave: math.Ln2 * g}
	const h = 1.0 / tableCells
	t.bound = g*(h*h/8+0x1p-36) + 0x1p-50
	t.boundHi = 1 - t.bound
	prev := 0.0 // fl(Log(1)·g) = 0
	for i := range tableCells {
		next := math.Log(1+float64(i+1)*h) * g
		t.cells[i].at = prev
		t.cells[i].slope = (next - prev) * (1.0 / (1 << cellBits))
		prev = next
	}
	return t
}

// tables holds the tables built so far by alpha; maxTables bounds it (a
// process that sees more distinct alphas, e.g. from many foreign part
// files, builds the rest per Sketch instead: correct, only slower to make).
var (
	tablesMu sync.Mutex
	tables   = map[float64]*bucketTable{}
)

const maxTables = 64

// tableFor returns the shared table for alpha, building it on first use.
// invLogGamma must be the one New derives from alpha.
func tableFor(alpha, invLogGamma float64) *bucketTable {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	if t, ok := tables[alpha]; ok {
		return t
	}
	t := newBucketTable(invLogGamma)
	if len(tables) < maxTables {
		tables[alpha] = t
	}
	return t
}

// logIndex is the bucket index by definition: ceil(Log(v)·g). (Not
// inlined: it is the rare path, and its callers stay small.)
//
//go:noinline
func (t *bucketTable) logIndex(v float64) int {
	return int(math.Ceil(math.Log(v) * t.invLogGamma))
}

// approx returns A(v) for normal v > 0 (see above; garbage for subnormal v).
func (t *bucketTable) approx(v float64) float64 {
	b := math.Float64bits(v)
	c := &t.cells[(b>>cellBits)&(tableCells-1)]
	return float64(int(b>>52)-1023)*t.perOctave + (c.at + float64(b&(1<<cellBits-1))*c.slope)
}

// split returns ceil(A(v)) and A's fraction d = A − floor(A), for normal
// v > 0 (v >= 0x1p-1022: split does not check; garbage for subnormal v).
// ceil(A) is logIndex(v) when d > bound and d < boundHi (A lies farther
// than bound from every integer; false for a NaN d); else the caller asks
// logIndex. The callers test d themselves: two branches, not a bool made
// and tested. (Small enough to be inlined without a profile.)
func (t *bucketTable) split(v float64) (k int, d float64) {
	a := t.approx(v)
	fl := math.Floor(a)
	return int(fl) + 1, a - fl
}

// index returns logIndex(v) for finite v > 0, mostly without a logarithm;
// see the proof above. (Sketch.bucket does the same, inline.)
func (t *bucketTable) index(v float64) int {
	k, d := t.split(v)
	if !(d > t.bound && d < t.boundHi) || v < 0x1p-1022 { // near an edge, or subnormal
		return t.logIndex(v)
	}
	return k
}
