package quantile

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// indexAlphas are the alphas the repository uses: DefaultAlpha (every
// Sketch outside tests) and the ones its tests pass to WithAlpha.
var indexAlphas = []float64{DefaultAlpha, 0.001, 0.02, 0.05, 0.3}

// indexChecker compares index, and the bucket of a Sketch with the same
// alpha (which has the same code inline), with logIndex,
// reporting the first few mismatches and counting them all.
type indexChecker struct {
	t     *testing.T
	tab   *bucketTable
	sk    *Sketch
	what  string
	n, of int
}

func newChecker(t *testing.T, alpha float64, what string) *indexChecker {
	sk := New(WithAlpha(alpha), WithExactLimit(0))
	return &indexChecker{t: t, tab: sk.tab, sk: sk, what: what + ", alpha " + strconv.FormatFloat(alpha, 'g', -1, 64)}
}

func (c *indexChecker) check(v float64) {
	c.of++
	want := c.tab.logIndex(v)
	got, bucket := c.tab.index(v), c.sk.bucket(v)
	if got != want || bucket != want {
		c.n++
		if c.n <= 5 {
			c.t.Errorf("%s: index(%v) [bits %#x] = %d and bucket %d, the logarithm gives %d",
				c.what, v, math.Float64bits(v), got, bucket, want)
		}
	}
}

// around checks v and the 4 floats on each side of it (positive, finite).
func (c *indexChecker) around(v float64) {
	b := math.Float64bits(v)
	for d := int64(-4); d <= 4; d++ {
		w := math.Float64frombits(uint64(int64(b) + d))
		if w > 0 && w <= math.MaxFloat64 {
			c.check(w)
		}
	}
}

func (c *indexChecker) done() {
	c.t.Helper()
	if c.n > 0 {
		c.t.Errorf("%s: %d of %d values disagree with the logarithm", c.what, c.n, c.of)
	}
}

// logEdges calls f with every bucket edge of tab whose neighbourhood is
// normal: for each k, the largest float whose logIndex is k, i.e. where
// the logarithm's index steps from k to k+1. The edge is found by bisection
// on the float's bits around exp(k·ln gamma) (within 1e-11 relative of it).
func logEdges(t *testing.T, tab *bucketTable, logGamma float64, f func(edge float64)) {
	t.Helper()
	kLo := tab.logIndex(0x1p-1022)
	kHi := tab.logIndex(math.MaxFloat64) - 1
	for k := kLo; k <= kHi; k++ {
		e := math.Exp(float64(k) * logGamma)
		lo, hi := math.Float64bits(e*(1-1e-11)), math.Float64bits(math.Min(e*(1+1e-11), math.MaxFloat64))
		if tab.logIndex(math.Float64frombits(lo)) > k || tab.logIndex(math.Float64frombits(hi)) <= k {
			t.Fatalf("edge %d: not bracketed by %v ± 1e-11", k, e)
		}
		for hi-lo > 1 { // logIndex(lo) <= k < logIndex(hi)
			mid := lo + (hi-lo)/2
			if tab.logIndex(math.Float64frombits(mid)) <= k {
				lo = mid
			} else {
				hi = mid
			}
		}
		f(math.Float64frombits(lo))
	}
}

// TestBucketIndexEdges checks index against the logarithm at every bucket
// edge of the whole normal range, and 1..4 ulps either side, for every
// alpha the repository uses: the values where an approximation is most
// likely to land on the wrong side.
func TestBucketIndexEdges(t *testing.T) {
	for _, alpha := range indexAlphas {
		s := New(WithAlpha(alpha))
		c := newChecker(t, alpha, "edges")
		edges := 0
		logEdges(t, s.tab, s.logGamma, func(e float64) { edges++; c.around(e) })
		c.done()
		// ln(MaxFloat64) − ln(2^-1022) > 1418: one edge per ln(gamma).
		if want := int(1418*s.invLogGamma) - 2; edges < want {
			t.Errorf("alpha %v: %d edges, want at least %d", alpha, edges, want)
		}
	}
}

// TestBucketIndexRandom checks index against the logarithm on 10^7 random
// values (-short: 10^6): log-uniform over 1e-6..1e9, and integers as
// latencies in ms (all of 1..2^20, then uniform up to 1e7).
func TestBucketIndexRandom(t *testing.T) {
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	r := rand.New(rand.NewPCG(11, 11))
	lo, hi := math.Log(1e-6), math.Log(1e9)
	for _, alpha := range indexAlphas {
		c := newChecker(t, alpha, "random")
		m := n
		if alpha != DefaultAlpha {
			m = n / 10
		}
		for range m / 2 {
			c.check(math.Exp(lo + (hi-lo)*r.Float64()))
		}
		for i := range 1 << 20 {
			c.check(float64(i + 1))
		}
		for range m / 2 {
			c.check(float64(1 + r.IntN(10_000_000)))
		}
		c.done()
	}
}

// TestBucketIndexSpecial checks index against the logarithm at powers of
// two (where the table's cells begin) ± 4 ulps over the whole exponent
// range, at subnormals, and at the largest floats. (On amd64, math.Log's
// assembly reads a subnormal's bits as if it were normal, 1.f·2^-1023,
// which is what A does too: there, index's subnormal check changes no
// result, and this test cannot tell whether it is there. Elsewhere Log
// normalizes subnormals first and the check is needed.)
func TestBucketIndexSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for _, alpha := range indexAlphas {
		c := newChecker(t, alpha, "special")
		for e := -1074; e <= 1023; e++ {
			c.around(math.Ldexp(1, e))
		}
		for i := range uint64(tableCells) { // every cell's start, in several octaves
			for _, e := range []uint64{1, 1023, 1023 + 10, 2046} {
				c.around(math.Float64frombits(e<<52 | i<<cellBits))
			}
		}
		for range 100_000 {
			c.check(math.Float64frombits(1 + r.Uint64N(1<<52-1))) // subnormal
		}
		c.around(math.SmallestNonzeroFloat64)
		c.around(0x1p-1022) // smallest normal
		c.around(math.MaxFloat64)
		c.done()
	}
}

// TestBucketIndexBound checks that the proven bound on |A − F| holds at the
// bucket edges of DefaultAlpha and that it is nearly tight: the largest
// error seen is more than half of it, and with half the bound index
// disagrees with the logarithm at some edges. So a bound made smaller than
// the proof allows fails here (and in TestBucketIndexEdges), and one made
// needlessly loose fails too.
func TestBucketIndexBound(t *testing.T) {
	s := New(WithExactLimit(0))
	tab := s.tab
	half := *tab
	half.bound, half.boundHi = tab.bound/2, 1-tab.bound/2
	worst, wrong := 0.0, 0
	check := func(v float64) {
		f := math.Log(v) * tab.invLogGamma
		worst = math.Max(worst, math.Abs(tab.approx(v)-f))
		if half.index(v) != tab.logIndex(v) {
			wrong++
		}
	}
	logEdges(t, tab, s.logGamma, func(e float64) {
		for _, v := range []float64{e, math.Nextafter(e, math.Inf(1))} {
			check(v)
		}
	})
	// Mid-cell values near 1 (where the chord error peaks) in every octave.
	for e := uint64(1); e <= 2046; e++ {
		check(math.Float64frombits(e<<52 | 1<<(cellBits-1)))
	}
	t.Logf("bound %.3g, worst |A − F| %.3g (%.1f%%); half the bound: %d wrong edges", tab.bound, worst, 100*worst/tab.bound, wrong)
	if worst > tab.bound {
		t.Errorf("|A − F| reached %g, above the proven bound %g", worst, tab.bound)
	}
	if worst < tab.bound/2 {
		t.Errorf("|A − F| at most %g, under half the bound %g: the bound is looser than the proof says", worst, tab.bound)
	}
	if wrong == 0 {
		t.Errorf("with half the bound no edge disagrees: the edge tests could not catch a bound that is too small")
	}
}

// TestBucketTablesShared checks that sketches with one alpha share one
// table, built for exactly the Sketch's 1/ln(gamma).
func TestBucketTablesShared(t *testing.T) {
	a, b := New(), New(WithAlpha(DefaultAlpha), WithExactLimit(0))
	if a.tab != b.tab {
		t.Errorf("two sketches with alpha %v have different tables", DefaultAlpha)
	}
	c := New(WithAlpha(0.02))
	if c.tab == a.tab || c.tab.invLogGamma != c.invLogGamma || a.tab.invLogGamma != a.invLogGamma {
		t.Errorf("tables not per alpha, or 1/ln(gamma) differs from the sketch's")
	}
}
