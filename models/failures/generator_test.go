package failures

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

// collect returns the events of src up to horizon.
func collect(t testing.TB, src Source, horizon sim.Time) []Event {
	var out []Event
	for {
		ev, ok := src.Next()
		if !ok || ev.Time > horizon {
			require.NoError(t, src.Err())
			return out
		}
		out = append(out, ev)
	}
}

func generate(t testing.TB, p *Profile, topo Topology, seed uint64, horizon sim.Time) []Event {
	g, err := NewGenerator(p, topo, sim.NewStream(seed, "failures"))
	require.NoError(t, err)
	return collect(t, g, horizon)
}

func mustProfile(t testing.TB, name string) *Profile {
	p, err := LookupProfile(name)
	require.NoError(t, err)
	return p
}

func TestGeneratorDeterministicOrdered(t *testing.T) {
	p := mustProfile(t, ProfileLlama3)
	topo := HGX(2048, 4)
	h := 54 * 24 * sim.Hour
	a := generate(t, p, topo, 7, h)
	b := generate(t, p, topo, 7, h)
	assert.Equal(t, a, b)
	c := generate(t, p, topo, 8, h)
	assert.NotEqual(t, a, c)
	for i, ev := range a {
		if i > 0 {
			require.GreaterOrEqual(t, ev.Time, a[i-1].Time)
		}
		require.GreaterOrEqual(t, ev.FirstGPU, 0)
		require.LessOrEqual(t, ev.FirstGPU+ev.GPUs, topo.GPUs())
		first, n := topo.UnitGPUs(ev.Scope, ev.Unit)
		require.Equal(t, []int{first, n}, []int{ev.FirstGPU, ev.GPUs})
		if ev.HasPrecursor() {
			require.LessOrEqual(t, ev.Precursor, ev.Time)
			require.GreaterOrEqual(t, ev.Precursor, sim.Time(0))
		}
		row, ok := p.Row(ev.Category)
		require.True(t, ok)
		assert.Equal(t, row.Component, ev.Component)
	}
}

func TestGeneratorErrors(t *testing.T) {
	p := mustProfile(t, ProfileLlama3)
	_, err := NewGenerator(p, HGX(4, 4), nil)
	assert.Error(t, err)
	_, err = NewGenerator(p, HGX(0, 4), rand.New(rand.NewPCG(1, 2)))
	assert.Error(t, err)
	p.Rows[3].PerGPUHour = -1
	_, err = NewGenerator(p, HGX(4, 4), rand.New(rand.NewPCG(1, 2)))
	assert.ErrorContains(t, err, "rate must be a finite number >= 0")
	p = mustProfile(t, ProfileLlama3)
	p.TTF = TTF{Kind: TTFWeibull, Shape: -1}
	_, err = NewGenerator(p, HGX(4, 4), rand.New(rand.NewPCG(1, 2)))
	assert.ErrorContains(t, err, "Weibull shape must be a finite number > 0")
	none := mustProfile(t, ProfileNone)
	g, err := NewGenerator(none, HGX(4, 4), rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	_, ok := g.Next()
	assert.False(t, ok)
}

// TestGeneratorRates: over 100 runs of the llama3 profile on 16,384 GPUs for
// 54 days, the mean count is 419 ± 2·√(419/100) (the standard error of a
// mean of 100 Poisson counts), and the precursors of HBM failures are seen
// at their detection probability.
func TestGeneratorRates(t *testing.T) {
	p := mustProfile(t, ProfileLlama3)
	h := 54 * 24 * sim.Hour
	total, hbm, hbmPre := 0, 0, 0
	for seed := uint64(1); seed <= 100; seed++ {
		for _, ev := range generate(t, p, HGX(2048, 4), seed, h) {
			total++
			if ev.Component == ComponentHBM {
				hbm++
				if ev.HasPrecursor() {
					hbmPre++
					assert.Equal(t, max(0, ev.Time-6*sim.Hour), ev.Precursor)
				}
			}
		}
	}
	mean := float64(total) / 100
	t.Logf("mean failures %.2f (Table 5: 419); HBM precursors seen %d of %d", mean, hbmPre, hbm)
	assert.InDelta(t, 419, mean, 2*math.Sqrt(419.0/100))
	assert.InDelta(t, 0.5, float64(hbmPre)/float64(hbm), 3*math.Sqrt(0.25/float64(hbm)))
}

// weibullReference simulates every unit's renewal process directly: the
// O(units) reference the generator must agree with.
func weibullReference(rng *rand.Rand, units int, meanH, shape, horizonH float64) int {
	lambda := meanH / math.Gamma(1+1/shape)
	n := 0
	for range units {
		for t := lambda * math.Pow(rng.ExpFloat64(), 1/shape); t <= horizonH; t += lambda * math.Pow(rng.ExpFloat64(), 1/shape) {
			n++
		}
	}
	return n
}

// TestWeibullMatchesReference: the cohort + heap generator has the same
// count distribution as per-unit renewal, for infant mortality (k < 1) and
// wear-out (k > 1), over horizons shorter and longer than the mean life.
func TestWeibullMatchesReference(t *testing.T) {
	const servers = 64
	rate := 1.0 / (8 * 1000) // per GPU-hour: each server's mean life 1,000 h
	for _, tt := range []struct{ shape, horizonH float64 }{{0.6, 300}, {2.5, 300}, {2.5, 3000}, {1, 500}} {
		p := mustProfile(t, ProfileNone)
		p.Rows = []Row{newRow("psu", "psu", ComponentPSU, rate, 0, "user")}
		p.TTF = TTF{Kind: TTFWeibull, Shape: tt.shape}
		const reps = 300
		var got, want []float64
		ref := sim.NewStream(99, "reference")
		for seed := uint64(1); seed <= reps; seed++ {
			evs := generate(t, p, HGX(servers, 4), seed, sim.FromSeconds(tt.horizonH*3600))
			got = append(got, float64(len(evs)))
			want = append(want, float64(weibullReference(ref, servers, 1000, tt.shape, tt.horizonH)))
		}
		mg, sg := meanSD(got)
		mw, sw := meanSD(want)
		se := math.Sqrt((sg*sg + sw*sw) / reps)
		t.Logf("shape %.1f horizon %.0f h: generator %.2f ± %.2f, reference %.2f ± %.2f", tt.shape, tt.horizonH, mg, sg, mw, sw)
		assert.InDelta(t, mw, mg, 4*se, "means")
		assert.InDelta(t, sw, sg, 0.25*sw+0.2, "spreads")
	}
}

// TestWeibullInitialAge: an old fleet with wear-out fails more at first.
func TestWeibullInitialAge(t *testing.T) {
	p := mustProfile(t, ProfileNone)
	p.Rows = []Row{newRow("psu", "psu", ComponentPSU, 1.0/8000, 0, "user")}
	p.TTF = TTF{Kind: TTFWeibull, Shape: 3}
	young := len(generate(t, p, HGX(1000, 4), 1, 100*sim.Hour))
	p.TTF.InitialAgeHours = 900
	old := len(generate(t, p, HGX(1000, 4), 1, 100*sim.Hour))
	assert.Greater(t, old, 20*max(young, 1))
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)-1))
}

// TestBlastRadius: 576 GPUs as 72 HGX servers or 8 NVL72 racks with the
// same per-GPU rates, so the same number of incidents. A domain-level
// failure (NVLink switch) loses a server (8 GPUs) in one and a rack (72) in
// the other: 9× the GPUs per incident and 9× the GPU-hours down, and the
// fleet spends far more time with 5% of its GPUs down. Host-level failures
// lose a server (8) or a tray (4).
func TestBlastRadius(t *testing.T) {
	hgx, nvl := HGX(72, 4), NVL72(8)
	require.Equal(t, hgx.GPUs(), nvl.GPUs())
	domain := mustProfile(t, ProfileNone)
	domain.Rows = []Row{newRow("nvlink-switch", "switch", ComponentNVLinkSwitch, 1e-5, 0, "user")}
	domain.Repair[ActionRebootNode] = FixedRepair(4) // long enough to see overlaps
	const years = 20
	h := 365 * 24 * sim.Hour
	reports := map[string]Report{}
	for _, topo := range []Topology{hgx, nvl} {
		tally := NewTally(topo.GPUs())
		for seed := uint64(1); seed <= years; seed++ {
			for _, ev := range generate(t, domain, topo, seed, h) {
				require.Equal(t, topo.DomainGPUs, ev.GPUs)
				require.Equal(t, topo.DomainGPUs, ev.DownGPUs)
				ev.Time += sim.Time(seed-1) * h // the years end to end
				tally.Add(ev)
			}
		}
		r := tally.Report(years*h, nil)
		reports[topo.Kind] = r
		t.Logf("%s domain failures: %d incidents over %d years, GPUs lost per incident %v, %.0f GPU-h down; "+
			"availability %.5f%%; any GPU down %.4f, ≥5%% down %.5f of the time",
			topo.Kind, r.Incidents, years, r.GPUsLost, r.DownGPUHours, 100*(1-r.MeanGPUsDown/float64(topo.GPUs())),
			r.AnyDown, r.Down[2].TimeFraction)
	}
	hr, nr := reports[KindHGX], reports[KindNVL72]
	assert.Equal(t, hr.Incidents, nr.Incidents, "same per-GPU rate, same random numbers: same incidents")
	assert.Equal(t, 9.0, nr.GPUsLostMean/hr.GPUsLostMean)
	assert.InEpsilon(t, 9, nr.DownGPUHours/hr.DownGPUHours, 1e-9)
	assert.Greater(t, nr.Down[2].TimeFraction, 5*hr.Down[2].TimeFraction)

	// The full picture: llama3 rates plus an NVLink-switch row, both fleets.
	p := mustProfile(t, ProfileLlama3)
	p.Rows = append(p.Rows, newRow("nvlink-switch", "NVLink switch", ComponentNVLinkSwitch, 1e-6, 0, "user"))
	for _, topo := range []Topology{hgx, nvl} {
		tally := NewTally(topo.GPUs())
		for seed := uint64(1); seed <= 50; seed++ {
			for _, ev := range generate(t, p, topo, seed, h) {
				tally.Add(ev)
			}
		}
		r := tally.Report(h, nil)
		sizes := map[int]int{}
		for _, b := range r.GPUsLost {
			sizes[b.GPUs] = b.Incidents
		}
		t.Logf("%s llama3+switch: %d incidents over 50 fleet-years; GPUs lost per incident %v (mean %.2f); GPUs down per incident %v",
			topo.Kind, r.Incidents, r.GPUsLost, r.GPUsLostMean, r.GPUsDown)
		if topo.Kind == KindHGX {
			assert.Equal(t, []int{1, 8}, keys(sizes))
		} else {
			assert.Equal(t, []int{1, 4, 72}, keys(sizes))
		}
	}
}

func keys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestRackScope: a ToR failure takes every server in its rack, and the
// partial last rack only its own.
func TestRackScope(t *testing.T) {
	p := mustProfile(t, ProfileNone)
	p.Rows = []Row{newRow("tor", "ToR", ComponentToR, 1e-4, 0, "user")}
	topo := HGX(10, 4)
	seen := map[int]int{}
	for _, ev := range generate(t, p, topo, 1, 100000*sim.Hour) {
		assert.Equal(t, ScopeRack, ev.Scope)
		seen[ev.GPUs]++
		if ev.Unit == 2 {
			assert.Equal(t, 16, ev.GPUs)
		} else {
			assert.Equal(t, 32, ev.GPUs)
		}
	}
	// Racks fail in proportion to their GPUs: the partial rack (16 of 80)
	// takes a fifth of the incidents.
	frac := float64(seen[16]) / float64(seen[16]+seen[32])
	assert.InDelta(t, 0.2, frac, 0.05)
}

// BenchmarkFailures100kGPUs30d: the llama3 profile on 100,000 GPUs (12,500
// HGX servers) for 30 simulated days, generated and tallied into a Report;
// exponential (superposition) and Weibull shape 0.7 (cohort + heap).
func BenchmarkFailures100kGPUs30d(b *testing.B) {
	topo := HGX(12500, 4)
	h := 30 * 24 * sim.Hour
	for _, ttf := range []TTF{Exponential(), {Kind: TTFWeibull, Shape: 0.7}} {
		p := mustProfile(b, ProfileLlama3)
		p.TTF = ttf
		b.Run(ttf.Kind, func(b *testing.B) {
			events := 0
			for i := 0; b.Loop(); i++ {
				g, err := NewGenerator(p, topo, sim.NewStream(uint64(i), "failures"))
				if err != nil {
					b.Fatal(err)
				}
				tally := NewTally(topo.GPUs())
				for {
					ev, ok := g.Next()
					if !ok || ev.Time > h {
						break
					}
					tally.Add(ev)
					events++
				}
				_ = tally.Report(h, nil)
			}
			b.ReportMetric(float64(events)/float64(b.N), "failures/op")
		})
	}
}

// TestRackScale100kGPUs30d: the rackscale profile on 100,008 GPUs (1,389
// NVL72 racks) for 30 days, generated and tallied, exponential and Weibull,
// stays well under 5 s, and its rack-scale rows hit whole racks (coolant,
// power shelf) or degrade a domain without taking GPUs down (switch tray).
func TestRackScale100kGPUs30d(t *testing.T) {
	topo := NVL72(1389)
	h := 30 * 24 * sim.Hour
	for _, ttf := range []TTF{Exponential(), {Kind: TTFWeibull, Shape: 0.7}} {
		p := mustProfile(t, ProfileRackScale)
		p.TTF = ttf
		start := time.Now()
		g, err := NewGenerator(p, topo, sim.NewStream(9, "failures"))
		require.NoError(t, err)
		tally := NewTally(topo.GPUs())
		byCat := map[string]int{}
		for {
			ev, ok := g.Next()
			if !ok || ev.Time > h {
				break
			}
			tally.Add(ev)
			byCat[ev.Category]++
			switch ev.Category {
			case "coolant", "power-shelf":
				require.Equal(t, 72, ev.DownGPUs)
			case "switch-tray":
				require.Equal(t, 0, ev.DownGPUs)
				require.Equal(t, 72, ev.GPUs)
				require.InDelta(t, 8.0/9, ev.NVLinkFraction, 1e-12)
			}
		}
		_ = tally.Report(h, nil)
		elapsed := time.Since(start)
		t.Logf("%s: %d failures (%d switch-tray, %d coolant, %d power-shelf) in %v", ttf.Kind, sumCounts(byCat),
			byCat["switch-tray"], byCat["coolant"], byCat["power-shelf"], elapsed)
		require.Less(t, elapsed, 5*time.Second)
		require.Positive(t, byCat["switch-tray"])
	}
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
