package failures

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

// referenceTimeDown is a dumb sweep over outage edges: the fraction of
// [0, end] with at least frac of slots down (and at least one).
func referenceTimeDown(outs []outage, end sim.Time, slots int, frac float64) float64 {
	type edge struct {
		t sim.Time
		d int
	}
	var edges []edge
	for _, o := range outs {
		if a, b := min(o.from, end), min(o.to, end); b > a {
			edges = append(edges, edge{a, 1}, edge{b, -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].d < edges[j].d
	})
	var at, total sim.Time
	count := 0
	for _, e := range edges {
		if float64(count)/float64(slots) >= frac && count > 0 {
			total += e.t - at
		}
		count += e.d
		at = e.t
	}
	if end == 0 {
		return 0
	}
	return float64(total) / float64(end)
}

// TestAvailabilityMatchesReference: random outages of random fleets, some
// still open at the end and some ending after it, give the reference's
// down time and time-down fractions exactly.
func TestAvailabilityMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 300; trial++ {
		slots := 1 + rng.IntN(12)
		replicas := slots + rng.IntN(3)
		end := sim.Time(1+rng.IntN(10000)) * sim.Second
		a := newAvailability(replicas, slots, 8)
		var outs []outage
		now := sim.Time(0)
		for k := 0; k < rng.IntN(40); k++ {
			now += sim.Time(rng.IntN(600)) * sim.Second
			i := rng.IntN(replicas)
			if a.down[i] < 0 {
				a.markDown(i, now)
			} else {
				outs = append(outs, outage{i, a.down[i], now})
				a.markUp(i, now)
			}
		}
		var wantDown sim.Time
		for i, d := range a.down {
			if d >= 0 {
				outs = append(outs, outage{i, d, max(d, end)})
			}
		}
		for _, o := range outs {
			wantDown += max(0, min(o.to, end)-min(o.from, end))
		}
		var r FleetReport
		a.report(&r, end)
		require.Equal(t, wantDown, r.DownNs, "trial %d", trial)
		for _, sh := range DownShares {
			require.Equal(t, referenceTimeDown(outs, end, slots, sh.Frac), r.TimeDown[sh.Name], "trial %d, share %s", trial, sh.Name)
		}
	}
}
