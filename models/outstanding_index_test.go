package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scanLeastOutstanding is the definition the index must match: the
// available replica with the fewest outstanding, lowest index among ties.
func scanLeastOutstanding(rs []ReplicaState) (int, bool) {
	best, found := 0, false
	for i := range rs {
		if rs[i].Available && (!found || rs[i].Outstanding < rs[best].Outstanding) {
			best, found = i, true
		}
	}
	return best, found
}

// TestOutstandingIndexMatchesScan drives the index through 20,000 random
// event sequences (arrivals, finishes, replicas going unavailable and back,
// resets to zero, values too wide for the key) on fleets of 0 to 130
// replicas with many ties, and checks every decision against the scan.
func TestOutstandingIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	decisions := 0
	for trial := range 20_000 {
		n := rng.IntN(131)
		states := make([]ReplicaState, n)
		for i := range states {
			states[i] = ReplicaState{Index: i, Available: rng.IntN(8) != 0, Outstanding: rng.IntN(3)}
		}
		if trial%100 == 0 {
			for i := range states {
				states[i].Available = false
			}
		}
		x := newOutstandingIndex(states)
		for range 1 + rng.IntN(40) {
			if n > 0 {
				i := rng.IntN(n)
				switch op := rng.IntN(40); {
				case op < 16:
					states[i].Outstanding++
				case op < 30:
					if states[i].Outstanding > 0 {
						states[i].Outstanding--
					}
				case op < 36:
					states[i].Available = !states[i].Available
				case op < 39:
					states[i].Outstanding = 0
				default:
					if rng.IntN(2) == 0 {
						states[i].Outstanding = math.MaxInt32 + 1 // wide: the gateway asks the router
					} else {
						states[i].Outstanding = -1
					}
				}
				x.fix(i)
			}
			wide := 0
			for i := range states {
				if o := states[i].Outstanding; o < 0 || o > math.MaxInt32 {
					wide++
				}
			}
			if x.wide != wide {
				t.Fatalf("trial %d: index counts %d wide replicas, there are %d", trial, x.wide, wide)
			}
			if wide > 0 {
				continue
			}
			gi, gok := x.least()
			wi, wok := scanLeastOutstanding(states)
			decisions++
			if gi != wi || gok != wok {
				t.Fatalf("trial %d, fleet %+v: index gives %d, %v; the scan %d, %v", trial, states, gi, gok, wi, wok)
			}
		}
	}
	if decisions < 100_000 {
		t.Fatalf("only %d decisions compared", decisions)
	}
	t.Logf("%d decisions compared", decisions)
}

// scanTwoLoops is policies' least-outstanding scan (the router's Route),
// copied for the benchmark (models cannot import policies).
func scanTwoLoops(rs []ReplicaState) (int, bool) {
	least := math.MaxInt
	for i := range rs {
		if r := &rs[i]; r.Available {
			least = min(least, r.Outstanding)
		}
	}
	for i := range rs {
		if r := &rs[i]; r.Available && r.Outstanding == least {
			return i, true
		}
	}
	return 0, false
}

// BenchmarkLeastOutstanding128 is one request's routing work on 128
// replicas holding 60-100 requests each: a decision, the chosen replica's
// Outstanding+1, and another request finishing (Outstanding-1 at a
// replica drawn from a fixed sequence), by the router's scan and by the
// index.
func BenchmarkLeastOutstanding128(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	fresh := func() []ReplicaState {
		rs := make([]ReplicaState, 128)
		for i := range rs {
			rs[i] = ReplicaState{Index: i, Available: true, Outstanding: 60 + rng.IntN(40)}
		}
		return rs
	}
	done := make([]int, 4096)
	for i := range done {
		done[i] = rng.IntN(128)
	}
	b.Run("scan", func(b *testing.B) {
		rs := fresh()
		k := 0
		for b.Loop() {
			i, _ := scanTwoLoops(rs)
			rs[i].Outstanding++
			if j := done[k&4095]; rs[j].Outstanding > 0 {
				rs[j].Outstanding--
			}
			k++
		}
	})
	b.Run("index", func(b *testing.B) {
		rs := fresh()
		x := newOutstandingIndex(rs)
		k := 0
		for b.Loop() {
			i, _ := x.least()
			rs[i].Outstanding++
			x.fix(i)
			if j := done[k&4095]; rs[j].Outstanding > 0 {
				rs[j].Outstanding--
				x.fix(j)
			}
			k++
		}
	})
}
