package failures

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

// A lemon's propensity persists across repairs: over 400 hosts with 10%
// lemons at 10x, the lemons take 10·40/(360+400) = 53% of the hardware
// failures in the first half of the run and again in the second, though
// nearly every one of them has failed (and been repaired) in the first;
// the fleet's count is the wrapped source's; Replace draws the slot anew.
func TestLemonPropensityPersists(t *testing.T) {
	topo := HGX(400, 4)
	p := mustProfile(t, ProfileLlama3).Scaled(50)
	newGen := func() *Generator {
		g, err := NewGenerator(p, topo, sim.NewStream(3, "failures"))
		require.NoError(t, err)
		return g
	}
	cfg := LemonConfig{Fraction: 0.1, Multiplier: 10}
	l, err := NewLemons(newGen(), topo, cfg, sim.NewStream(3, "lemons"))
	require.NoError(t, err)
	plain := newGen()
	lemons := l.LemonHosts()
	require.InDelta(t, 40, len(lemons), 15)
	horizon := sim.FromSeconds(2000 * 3600)
	var halves [2]struct{ hw, onLemon int }
	repairedLemon := map[int]bool{}
	for {
		ev, ok := l.Next()
		pe, _ := plain.Next()
		if !ok || ev.Time > horizon {
			break
		}
		require.Equal(t, pe.Time, ev.Time, "the same failures, in time")
		require.Equal(t, pe.Category, ev.Category)
		if ev.Scope < ScopeGPU || ev.Scope > ScopeHost || CauseOf(ev.Component) != CauseHardware {
			assert.Equal(t, pe.FirstGPU, ev.FirstGPU, "other failures are not moved")
			continue
		}
		h := ev.FirstGPU / topo.HostGPUs
		require.Less(t, h, topo.Hosts())
		k := 0
		if ev.Time > horizon/2 {
			k = 1
		}
		halves[k].hw++
		if l.IsLemon(h) {
			halves[k].onLemon++
			if k == 0 && ev.Repair > 0 {
				repairedLemon[h] = true
			}
		}
	}
	want := cfg.Multiplier * float64(len(lemons)) / (float64(topo.Hosts()-len(lemons)) + cfg.Multiplier*float64(len(lemons)))
	for k, hv := range halves {
		require.Greater(t, hv.hw, 1000)
		assert.InDelta(t, want, float64(hv.onLemon)/float64(hv.hw), 0.04, "half %d", k)
	}
	assert.Greater(t, len(repairedLemon), len(lemons)*9/10, "the lemons were repaired in the first half and stayed lemons")

	// Replace: a retired lemon's slot holds a server drawn anew (a lemon
	// with probability 0.1), so most replaced slots are healthy.
	for _, h := range lemons {
		l.Replace(h)
	}
	still := 0
	for _, h := range lemons {
		still += b2i(l.IsLemon(h))
	}
	assert.Less(t, still, len(lemons)/3)

	_, err = NewLemons(newGen(), topo, LemonConfig{Fraction: 1, Multiplier: 2}, sim.NewStream(1, "x"))
	assert.ErrorContains(t, err, "lemon fraction")
	_, err = NewLemons(newGen(), topo, LemonConfig{Fraction: 0.1, Multiplier: 0.5}, sim.NewStream(1, "x"))
	assert.ErrorContains(t, err, "lemon multiplier")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
