package failures

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

func TestProfileNames(t *testing.T) {
	assert.Equal(t, []string{"byterobust", "llama3", "meta-rsc", "meta-rsc-2", "meta-rsc-job", "none", "rackscale"}, ProfileNames())
	_, err := LookupProfile("llama4")
	assert.EqualError(t, err, `failures: unknown profile "llama4"; valid profiles: byterobust, llama3, meta-rsc, meta-rsc-2, meta-rsc-job, none, rackscale`)
	for _, n := range ProfileNames() {
		p, err := LookupProfile(n)
		require.NoError(t, err)
		require.NoError(t, p.Check(), n)
		assert.Equal(t, n, p.Name)
	}
}

// TestLlama3Profile: rates from the Table 5 counts (CALIBRATION.md §1).
func TestLlama3Profile(t *testing.T) {
	p, err := LookupProfile(ProfileLlama3)
	require.NoError(t, err)
	require.Len(t, p.Rows, 18, "each Table 5 row its own category")
	total := 0
	for _, r := range p.Rows {
		total += r.Count
		assert.InEpsilon(t, float64(r.Count)/(16384*1296), r.PerGPUHour, 1e-12, r.Category)
		assert.Equal(t, "P", r.Confidence)
	}
	assert.Equal(t, 419, total)
	gpu, _ := p.Row("gpu")
	assert.Equal(t, 148, gpu.Count, "faulty GPU is 148 of 419, not the printed 30.1%")
	assert.InEpsilon(t, 1.97e-5, p.RatePerGPUHour(), 0.002)
	assert.InDelta(t, 3.09, p.MTBFHours(16384), 0.005, "MTBI 54·24/419")
	assert.InDelta(t, 54*24.0/419, p.MTBF(16384).Seconds()/3600, 1e-6)
}

func TestByteRobustFlagsUnconfirmed(t *testing.T) {
	p, err := LookupProfile(ProfileByteRobust)
	require.NoError(t, err)
	sum := 0.0
	for _, r := range p.Rows {
		sum += r.PerGPUHour
	}
	assert.InEpsilon(t, 55366.0/(200000*2190)*(1-0.173), sum, 1e-9, "manual restarts are not failures")
	cuda, _ := p.Row("cuda-error")
	assert.InEpsilon(t, 0.361, cuda.PerGPUHour/sum*(1-0.173), 1e-9)
	_, manual := p.Row("manual-restart")
	assert.False(t, manual)
	hang, _ := p.Row("job-hang")
	assert.Equal(t, ModeHang, hang.Mode)
	mfu, _ := p.Row("mfu-decline")
	assert.Equal(t, ModeFailSlow, mfu.Mode)
	assert.Equal(t, 0.9, mfu.SpeedFraction)
	notes := strings.Join(p.Notes, "\n")
	assert.Contains(t, notes, `U: "55,366 incidents" — the figure in the design brief; not found in the paper text reachable here.`)
	assert.Contains(t, notes, "flagged as such")
}

func TestMetaRSC(t *testing.T) {
	for name, perK := range map[string]float64{ProfileMetaRSC: 6.50, ProfileMetaRSC2: 2.34} {
		p, err := LookupProfile(name)
		require.NoError(t, err)
		assert.InEpsilon(t, perK, PerKNodeDays(p.RatePerGPUHour(), 8), 1e-12, name)
		// 1,000 nodes of 8 GPUs fail perK times a day.
		assert.InEpsilon(t, 24/perK, p.MTBFHours(8000), 1e-12, name)
	}
	assert.InEpsilon(t, 6.5/1000/192, PerGPUHourFromNodeDays(6.5, 8), 1e-12)
}

func TestProfileCheck(t *testing.T) {
	p, _ := LookupProfile(ProfileLlama3)
	p.Rows[0].PerGPUHour = -1
	assert.ErrorContains(t, p.Check(), `category "gpu": rate must be a finite number >= 0, found -1`)
	p, _ = LookupProfile(ProfileLlama3)
	p.Rows[1].PerGPUHour = math.NaN()
	assert.Error(t, p.Check())
	p, _ = LookupProfile(ProfileLlama3)
	p.TTF = TTF{Kind: TTFWeibull, Shape: 0}
	assert.ErrorContains(t, p.Check(), "Weibull shape must be a finite number > 0, found 0")
	p, _ = LookupProfile(ProfileLlama3)
	p.Rows = append(p.Rows, p.Rows[0])
	assert.ErrorContains(t, p.Check(), "duplicate category")
	none, _ := LookupProfile(ProfileNone)
	assert.Equal(t, sim.Forever, none.MTBF(8))
	assert.Equal(t, sim.Time(0), none.MaxPrecursorLead())
	l, _ := LookupProfile(ProfileLlama3)
	assert.Equal(t, 6*sim.Hour, l.MaxPrecursorLead())
}

func TestDefaultRepair(t *testing.T) {
	r := DefaultRepair()
	assert.Equal(t, 0.0, r[ActionRestartApp].MeanHours())
	assert.InDelta(t, 10.0/60, r[ActionResetGPU].MeanHours(), 1e-12)
	assert.Equal(t, 0.5, r[ActionRebootNode].MeanHours())
	// InfiniteHBD: median 0.85 d, mean 5.5 d (CALIBRATION.md §1).
	assert.InEpsilon(t, 5.5*24, r[ActionRMA].MeanHours(), 1e-12)
	rng := sim.NewStream(1, "test")
	var xs []float64
	for range 20001 {
		xs = append(xs, r[ActionRMA].Draw(rng).Seconds()/86400)
	}
	med := quantileOf(xs, 0.5)
	assert.InEpsilon(t, 0.85, med, 0.03)
	assert.InEpsilon(t, 76, quantileOf(xs, 0.99), 0.1, "lognormal p99 vs the trace's 85 d")
}

func quantileOf(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(math.Ceil(p*float64(len(s))))-1]
}
