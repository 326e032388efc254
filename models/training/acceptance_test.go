package training_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
)

// chiSquare tests observed counts against expected proportions (which sum
// to 1) and returns the statistic, the degrees of freedom and the p-value.
// Categories with an expected count below 5 are pooled, smallest first,
// into one, as is standard.
func chiSquare(observed []int, props []float64) (stat float64, df int, p float64) {
	total := 0
	for _, o := range observed {
		total += o
	}
	type cell struct{ o, e float64 }
	cells := make([]cell, len(observed))
	for i := range observed {
		cells[i] = cell{float64(observed[i]), props[i] * float64(total)}
	}
	slices.SortFunc(cells, func(a, b cell) int { return int(math.Copysign(1, a.e-b.e)) })
	for len(cells) > 1 && cells[0].e < 5 {
		cells[1] = cell{cells[0].o + cells[1].o, cells[0].e + cells[1].e}
		cells = cells[1:]
		slices.SortFunc(cells, func(a, b cell) int { return int(math.Copysign(1, a.e-b.e)) })
	}
	for _, c := range cells {
		stat += (c.o - c.e) * (c.o - c.e) / c.e
	}
	df = len(cells) - 1
	return stat, df, distuv.ChiSquared{K: float64(df)}.Survival(stat)
}

func TestChiSquarePooling(t *testing.T) {
	// Expected 50.47, 50.47, 1.03, 1.03: the small cells pool together
	// (2.06 < 5), then into a 50.47 one.
	stat, df, p := chiSquare([]int{50, 50, 1, 2}, []float64{0.49, 0.49, 0.01, 0.01})
	assert.Equal(t, 1, df)
	e1, e2 := 0.51*103, 0.49*103
	assert.InDelta(t, (53-e1)*(53-e1)/e1+(50-e2)*(50-e2)/e2, stat, 1e-9)
	assert.Greater(t, p, 0.5)
	_, _, p = chiSquare([]int{90, 10}, []float64{0.5, 0.5})
	assert.Less(t, p, 1e-10)
}

// TestLlama3Pretrain is the llama3-pretrain acceptance: 16,384 H100 in
// 2,048 servers, one job, 54 days, the llama3 profile, 100 replications.
// The mean number of unexpected interruptions lies within 419 ± 2·√419; the
// pooled per-category counts pass a chi-square test against Table 5 at the
// 1% level; ETTR exceeds 90% with Llama3PretrainConfig (10–30 s detection,
// 5–15 min restarts, Daly checkpoints of a 6.77 s write, 10 spare servers).
func TestLlama3Pretrain(t *testing.T) {
	p, err := failures.LookupProfile(failures.ProfileLlama3)
	require.NoError(t, err)
	cfg := training.Llama3PretrainConfig()
	pol, err := policies.NewCheckpointPolicy(policies.DefaultCheckpointConfig())
	require.NoError(t, err)
	topo := failures.HGX(2048, 4)
	const reps = 100
	byCat := map[string]int{}
	var fails, inter, ettr, waits []float64
	var lost training.LostGPUHours
	for seed := uint64(1); seed <= reps; seed++ {
		r, err := training.Simulate(training.Spec{Config: cfg, Profile: p, RateMultiplier: 1, Topology: topo, Checkpoint: pol, Seed: seed})
		require.NoError(t, err)
		fails = append(fails, float64(r.Failures))
		inter = append(inter, float64(r.Interruptions))
		ettr = append(ettr, r.ETTR)
		waits = append(waits, float64(r.SpareWaits))
		for _, c := range r.FailuresByCategory {
			byCat[c.Name] += c.Incidents
		}
		lost.Recompute += r.Lost.Recompute / reps
		lost.Restart += r.Lost.Restart / reps
		lost.Detection += r.Lost.Detection / reps
		lost.WaitingSpares += r.Lost.WaitingSpares / reps
		lost.CheckpointWrites += r.Lost.CheckpointWrites / reps
		lost.Total += r.Lost.Total / reps
		if seed == 1 {
			t.Logf("checkpoint interval %.1f s (Daly, MTBF %.2f h)", r.CheckpointIntervalS, p.MTBFHours(cfg.GPUs))
		}
	}
	mf, sf := meanSD(fails)
	mi, _ := meanSD(inter)
	me, se := meanSD(ettr)
	mw, _ := meanSD(waits)
	t.Logf("failures per run %.2f ± %.2f (Table 5: 419 ± %.1f), interruptions %.2f; ETTR %.2f%% ± %.2f%%; spare waits %.2f per run",
		mf, sf, 2*math.Sqrt(419), mi, 100*me, 100*se, mw)
	t.Logf("lost GPU-h per run: recompute %.0f, restart %.0f, detection %.0f, spares %.0f, checkpoints %.0f; total %.0f ($%.0f at $%.2f)",
		lost.Recompute, lost.Restart, lost.Detection, lost.WaitingSpares, lost.CheckpointWrites, lost.Total,
		lost.Total*cfg.PricePerGPUHour, cfg.PricePerGPUHour)
	assert.InDelta(t, 419, mf, 2*math.Sqrt(419))
	assert.InDelta(t, 419, mi, 2*math.Sqrt(419))
	assert.Greater(t, me, 0.90)

	var obs []int
	var props []float64
	for _, row := range p.Rows {
		obs = append(obs, byCat[row.Category])
		props = append(props, float64(row.Count)/419)
	}
	stat, df, pv := chiSquare(obs, props)
	t.Logf("chi-square %.2f on %d df, p = %.3f; pooled counts %v", stat, df, pv, obs)
	assert.Greater(t, pv, 0.01)
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
	return m, math.Sqrt(v / float64(max(1, len(xs)-1)))
}

// nodeProfile fails whole 8-GPU nodes at perNodeDay failures per node-day.
func nodeProfile(t *testing.T, perNodeDay float64) *failures.Profile {
	none, err := failures.LookupProfile(failures.ProfileNone)
	require.NoError(t, err)
	rate := perNodeDay / (8 * 24)
	o := failures.Overrides{Components: []failures.ComponentConfig{{Category: "node", Component: "unknown", RatePerGPUHour: &rate}}}
	p, err := o.Apply(none)
	require.NoError(t, err)
	return p
}

// metaConfig is a job on every GPU of nodes servers under the formula's
// assumptions: instant detection, always a spare, fixed restart u0.
func metaConfig(nodes int, u0S, writeS, hours float64) training.Config {
	c := training.DefaultConfig()
	c.GPUs, c.SpareServers, c.HorizonHours = nodes*8, nodes, hours
	c.DetectionMinS, c.DetectionMaxS = 0, 0
	c.RestartMinS, c.RestartMaxS = u0S, u0S
	c.CheckpointWriteS = writeS
	return c
}

// TestMetaETTRFormula: simulated ETTR matches Meta RSC's expected ETTR
// (1 − N·r_f·(u0 + Δt/2)) / (1 + w/Δt) within 2 points across a grid of
// nodes, failure rates, checkpoint intervals and restart overheads where
// the formula's assumptions hold: instant detection, always a spare,
// exponential failures and a small failure probability per interval
// (N·r_f·Δt ≤ 0.1 and N·r_f·(u0 + Δt/2) ≤ 0.15). Each point runs for about
// 2,000 failures (at most 80 years).
func TestMetaETTRFormula(t *testing.T) {
	const writeS = 60
	points, worst := 0, 0.0
	for _, nodes := range []int{16, 128, 1024, 2048} {
		for _, perNodeDay := range []float64{2.34e-3, 6.50e-3, 2e-2} { // RSC-2, RSC-1 (CALIBRATION.md §1), and 3× RSC-1
			lambdaH := float64(nodes) * perNodeDay / 24
			for _, dtMin := range []float64{15, 30, 60, 120} {
				for _, u0Min := range []float64{5, 20} {
					dtH, u0H := dtMin/60, u0Min/60
					if lambdaH*dtH > 0.1 || lambdaH*(u0H+dtH/2) > 0.15 {
						continue
					}
					hours := math.Min(2000/lambdaH, 80*365*24)
					cfg := metaConfig(nodes, u0Min*60, writeS, hours)
					p := nodeProfile(t, perNodeDay)
					pol := policies.FixedInterval{Interval: sim.FromSeconds(dtMin * 60)}
					r, err := training.Simulate(training.Spec{Config: cfg, Profile: p, RateMultiplier: 1, Topology: failures.HGX(nodes, 4), Checkpoint: pol, Seed: uint64(points + 1)})
					require.NoError(t, err)
					want := (1 - lambdaH*(u0H+dtH/2)) / (1 + writeS/(dtMin*60))
					diff := r.ETTR - want
					worst = math.Max(worst, math.Abs(diff))
					points++
					assert.InDelta(t, want, r.ETTR, 0.02, "nodes %d, %.2e/node-day, Δt %v min, u0 %v min: %d failures",
						nodes, perNodeDay, dtMin, u0Min, r.Failures)
				}
			}
		}
	}
	t.Logf("%d grid points; largest |simulated − formula| ETTR %.4f", points, worst)
	assert.GreaterOrEqual(t, points, 40)
}

// TestOptimalInterval: the Young and Daly intervals minimise simulated lost
// time within noise. One failure stream (common random numbers) for every
// interval: 1,024 nodes at 6.5 failures per 1,000 node-days (RSC-1), MTBF
// 3.6 h, 5 min checkpoint writes, 10 min restarts, ~5,000 failures.
func TestOptimalInterval(t *testing.T) {
	p := nodeProfile(t, 6.5e-3)
	const nodes = 1024
	mtbf := p.MTBF(nodes * 8)
	hours := 5000 * mtbf.Seconds() / 3600
	cfg := metaConfig(nodes, 600, 300, hours)
	lost := func(iv sim.Time) float64 {
		r, err := training.Simulate(training.Spec{Config: cfg, Profile: p, RateMultiplier: 1, Topology: failures.HGX(nodes, 4), Checkpoint: policies.FixedInterval{Interval: iv}, Seed: 42})
		require.NoError(t, err)
		return 1 - r.ETTR
	}
	for _, name := range []string{policies.CheckpointYoung, policies.CheckpointDaly} {
		pol, err := policies.NewCheckpointPolicy(policies.CheckpointConfig{Policy: name})
		require.NoError(t, err)
		opt := pol.CheckpointInterval(mtbf, sim.FromSeconds(cfg.CheckpointWriteS))
		best := lost(opt)
		line := fmt.Sprintf("%s τ = %.1f min: lost %.4f;", name, opt.Seconds()/60, best)
		for _, m := range []float64{0.25, 0.5, 0.75, 1.5, 2, 4} {
			l := lost(sim.Time(float64(opt) * m))
			line += fmt.Sprintf(" ×%.2g %.4f", m, l)
			// Within noise of the best: the curve is flat near its
			// minimum, and one stream of ~5,000 failures leaves about
			// ±0.002 of noise.
			assert.GreaterOrEqual(t, l, best-0.003, "%s ×%v", name, m)
			if m <= 0.25 || m >= 4 {
				assert.Greater(t, l, best+0.02, "%s ×%v is clearly worse", name, m)
			}
		}
		t.Log(line)
	}
}

// TestSparePoolP99 derives the default spare pool: ByteRobust sizes its
// standby pool to the P99 of simultaneous machine failures (CALIBRATION.md
// §1, S). For the llama3 profile on 2,048 servers over 54 days (100 runs),
// the time-P99 of servers out for repair is the default SpareServers.
func TestSparePoolP99(t *testing.T) {
	p, err := failures.LookupProfile(failures.ProfileLlama3)
	require.NoError(t, err)
	topo := failures.HGX(2048, 4)
	h := 54 * 24 * sim.Hour
	tally := failures.NewTally(topo.Hosts())
	for seed := uint64(1); seed <= 100; seed++ {
		g, err := failures.NewGenerator(p, topo, sim.NewStream(seed, "failures"))
		require.NoError(t, err)
		for {
			ev, ok := g.Next()
			if !ok || ev.Time > h {
				break
			}
			// A training job sends the whole host of any hardware failure
			// to repair: count hosts, one "GPU" per host.
			if ev.Repair > 0 && ev.Scope != failures.ScopeProcess && ev.Mode != failures.ModeFailSlow {
				host := ev.FirstGPU / topo.HostGPUs
				ev.Time += sim.Time(seed-1) * h // lay the runs end to end
				ev.DownFirstGPU, ev.DownGPUs = host, 1
				if ev.End() > sim.Time(seed)*h {
					ev.Repair = sim.Time(seed)*h - ev.Time
				}
				tally.Add(ev)
			}
		}
	}
	ths := make([]float64, 20)
	for i := range ths {
		ths[i] = float64(i+1) / float64(topo.Hosts())
	}
	r := tally.Report(100*h, ths)
	p99 := 0
	for _, d := range r.Down {
		if d.TimeFraction > 0.01 {
			p99 = d.GPUs
		}
	}
	t.Logf("servers out for repair: time-P99 %d (P(≥ %d) = %.4f)", p99, p99+1, r.Down[p99].TimeFraction)
	assert.Equal(t, training.DefaultConfig().SpareServers, p99)
}

// BenchmarkLlama3Pretrain: one 54-day replication of the llama3-pretrain
// job (about 420 failures).
func BenchmarkLlama3Pretrain(b *testing.B) {
	p, err := failures.LookupProfile(failures.ProfileLlama3)
	if err != nil {
		b.Fatal(err)
	}
	cfg := training.Llama3PretrainConfig()
	topo := failures.HGX(2048, 4)
	for i := 0; b.Loop(); i++ {
		if _, err := training.Simulate(training.Spec{Config: cfg, Profile: p, RateMultiplier: 1, Topology: topo, Checkpoint: policies.Daly{}, Seed: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
