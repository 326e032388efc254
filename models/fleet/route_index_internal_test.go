package fleet

import (
	"math/rand/v2"
	"testing"
)

// TestIndexRoutesKnownKeysOnly: the pool indexes only the RouteKeys it
// knows (a router declaring another keeps its scan), and once it keeps an
// index by one key it refuses another.
func TestIndexRoutesKnownKeysOnly(t *testing.T) {
	for _, k := range []RouteKey{0, KeyWeightedOutstanding + 1, 255} {
		if newPool(nil, 0).indexRoutes(k) {
			t.Errorf("pool indexed by unknown key %v", k)
		}
	}
	for _, k := range []RouteKey{KeyOutstanding, KeyKVUtilization, KeyWeightedOutstanding} {
		p := newPool(nil, 0)
		first, again := p.indexRoutes(k), p.indexRoutes(k) // the second finds the index kept
		if !first || !again {
			t.Errorf("pool refused key %v", k)
		}
		if p.indexRoutes(k%3 + 1) {
			t.Errorf("pool indexed by %v also took %v", k, k%3+1)
		}
	}
}

// TestCountIndexStructure moves replicas between few levels of a
// countIndex at random (fleets of 1 to 200 replicas, so several bitmap
// words per level, most of them emptied and refilled) and checks after
// every move the whole structure against a plain list: each level's
// bitmap, its summary word (bit w set exactly when word w is non-zero), its
// count, the least level, and first() against a scan for the fewest
// Outstanding, lowest index.
func TestCountIndexStructure(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	moves := 0
	for trial := range 400 {
		n := 1 + rng.IntN(200)
		c := newCountIndex(n)
		lv := make([]int, n) // -1: in none
		for i := range lv {
			lv[i] = -1
		}
		for range 300 {
			i := rng.IntN(n)
			to := rng.IntN(5) - 1
			if rng.IntN(4) == 0 {
				to = -1
			}
			c.move(i, to)
			lv[i] = to
			moves++
			wantI, wantOK, least := 0, false, -1
			for j, l := range lv {
				if l >= 0 && (least < 0 || l < least) {
					wantI, wantOK, least = j, true, l
				}
			}
			if c.least != least {
				t.Fatalf("trial %d: least level %d, want %d", trial, c.least, least)
			}
			if gi, gok := c.first(); gi != wantI || gok != wantOK {
				t.Fatalf("trial %d: first() = %d, %v; want %d, %v", trial, gi, gok, wantI, wantOK)
			}
			for l := range c.lv {
				var cnt int32
				for w := range int(c.words) {
					var word uint64
					for j := w * 64; j < min(n, w*64+64); j++ {
						if lv[j] == l {
							word |= 1 << (j & 63)
							cnt++
						}
					}
					if c.bits[l*int(c.words)+w] != word || (c.lv[l]>>w&1 != 0) != (word != 0) {
						t.Fatalf("trial %d: level %d word %d holds %x (summary %b), want %x", trial, l, w, c.bits[l*int(c.words)+w], c.lv[l], word)
					}
				}
				if (c.lv[l] != 0) != (cnt > 0) {
					t.Fatalf("trial %d: level %d summary %b, want %d replicas", trial, l, c.lv[l], cnt)
				}
			}
			for j := range lv {
				if !c.holds(j, lv[j]) {
					t.Fatalf("trial %d: holds(%d, %d) false", trial, j, lv[j])
				}
			}
		}
	}
	t.Logf("%d moves checked", moves)
}
