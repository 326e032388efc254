package experiments

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/require"
)

// nearLimit is one drawn scenario near a limit: its TOML, the key its
// limit is reported under, and whether it is within the limit by a count
// made here independently of the scenario package (exact in ns where the
// run counts in ns).
type nearLimit struct {
	what   string
	toml   string
	key    string
	within bool
}

// TestLimitsValidateAgreesWithRun draws scenarios near each limit the run
// also enforces (issue 33: "validate and run agree on every limit"), from
// a fixed seed, and checks for each that validation accepts it exactly
// when it is within the limit, and that a scenario validation accepts
// runs without the run refusing it on a limit (a *LimitError) or keeping
// more time-series samples than it allows. The time-series bound is drawn
// through a workload's duration and drain, a horizon, and a trace
// replayed whole; the failure-rate guard through single pools with spares,
// groups and disaggregated fleets (the run's injector counts the GPUs of
// its topology, validation the scenario's).
func TestLimitsValidateAgreesWithRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scenarios of a million time-series samples")
	}
	rng := rand.New(rand.NewPCG(33, 4))
	var draws []nearLimit
	for range 4 {
		draws = append(draws, drawSamples(rng, "duration"), drawSamples(rng, "horizon"))
	}
	dir := t.TempDir()
	for i := range 3 {
		draws = append(draws, drawTraceSamples(t, rng, dir, i))
	}
	for range 12 {
		draws = append(draws, drawFailures(rng))
	}
	var in, over int
	for _, d := range draws {
		if d.within {
			in++
		} else {
			over++
		}
	}
	t.Logf("%d draws within their limit, %d over", in, over)
	require.Positive(t, in)
	require.Positive(t, over)
	for i, d := range draws {
		name := fmt.Sprintf("%d-%s", i, d.what)
		sc, err := scenario.Parse(filepath.Join(dir, "near.toml"), []byte(d.toml))
		if !d.within {
			require.Error(t, err, "%s: over the limit, accepted:\n%s", name, d.toml)
			require.Contains(t, err.Error(), d.key, name)
			continue
		}
		require.NoError(t, err, "%s: within the limit, refused:\n%s", name, d.toml)
		res, err := Run(sc, Options{})
		var le *LimitError
		require.False(t, errors.As(err, &le), "%s: validation accepted, the run refused: %v\n%s", name, err, d.toml)
		require.NoError(t, err, name)
		require.LessOrEqual(t, len(res.Fleet.Samples), scenario.MaxSamples+1, name)
	}
}

// samplesWithin is the run's count of time-series samples over spanS at
// intervalS (one at 0, then every interval in whole ns) against the bound.
func samplesWithin(spanS, intervalS float64) bool {
	return math.Floor(spanS*1e9/float64(sim.FromSeconds(intervalS)))+1 <= scenario.MaxSamples+1
}

// jitter is a relative offset in ±(1e-9 … 1e-3), log-uniform, either sign:
// from a few ns to a thousandth of the limit.
func jitter(rng *rand.Rand) float64 {
	j := math.Pow(10, -9+6*rng.Float64())
	if rng.IntN(2) == 0 {
		j = -j
	}
	return j
}

// drawSamples draws a sample interval that puts the run's time series near
// its bound over a workload's duration plus its drain, or over a horizon.
func drawSamples(rng *rand.Rand, how string) nearLimit {
	// Spans of 1,100 s and more: the bound then needs intervals above
	// scenario.MinIntervalS (1 ms), the other limit on the same key.
	dur := 1100 + 2000*rng.Float64()
	drain := []float64{0, 5, 3600}[rng.IntN(3)]
	span := dur + drain
	horizon := ""
	if how == "horizon" {
		h := 1100 + (dur-1100)*rng.Float64()
		horizon, span = fmt.Sprintf("horizon_s = %v\n", h), h
	}
	interval := span / scenario.MaxSamples * (1 + jitter(rng))
	return nearLimit{
		what: "samples-" + how,
		toml: fmt.Sprintf(`name = "near"
[cluster]
model = "llama-3-8b"
replicas = 1
tp = 1
[workload]
duration_s = %v
[workload.arrival]
rate_per_s = 0.05
[run]
sample_interval_s = %v
drain_limit_s = %v
%s`, dur, interval, drain, horizon),
		key:    "run.sample_interval_s",
		within: samplesWithin(span, interval),
	}
}

// drawTraceSamples writes a small Mooncake trace whose last arrival is at
// a drawn time and puts the sample interval near the bound over it (plus
// the drain): validation reads the trace for its span.
func drawTraceSamples(t *testing.T, rng *rand.Rand, dir string, i int) nearLimit {
	last := 1100 + 2000*rng.Float64() // s
	var b strings.Builder
	n := 40
	for k := range n {
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_length\": 200, \"output_length\": 20, \"hash_ids\": []}\n",
			int64(math.Round(last*1000*float64(k)/float64(n-1))))
	}
	path := filepath.Join(dir, fmt.Sprintf("trace%d.jsonl", i))
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	lastS := math.Round(last*1000) / 1000
	drain := []float64{0, 10}[rng.IntN(2)]
	interval := (lastS + drain) / scenario.MaxSamples * (1 + jitter(rng))
	return nearLimit{
		what: "samples-trace",
		toml: fmt.Sprintf(`name = "near"
[cluster]
model = "llama-3-8b"
replicas = 1
tp = 1
[workload]
kind = "trace"
[workload.trace]
path = %q
[run]
sample_interval_s = %v
drain_limit_s = %v
`, path, interval, drain),
		key:    "run.sample_interval_s",
		within: samplesWithin(lastS+drain, interval),
	}
}

// servers is gpus H100s in whole 8-GPU servers: failures strike servers.
func servers(gpus int) int { return (gpus + 7) / 8 * 8 }

// drawFailures draws a failure-rate multiplier near the guard's bound
// (failures.MaxEvents expected failures over the workload's duration and
// the profile's longest precursor lead, which the injector reads ahead) for
// a drawn fleet shape, counting its GPUs here: replicas and spares × TP,
// each group's own, and a disaggregated fleet's decode pool, in whole
// servers.
func drawFailures(rng *rand.Rand) nearLimit {
	prof, err := (&failures.Config{Profile: "llama3"}).BuildProfile()
	if err != nil {
		panic(err)
	}
	dur := 60 + 600*rng.Float64()
	var fleetTOML, extra string
	var gpus int
	switch rng.IntN(3) {
	case 0: // one pool, maybe spares
		tp := []int{1, 2, 4, 8}[rng.IntN(4)]
		n, spares := 1+rng.IntN(6), rng.IntN(3)
		fleetTOML = fmt.Sprintf("[cluster]\nmodel = \"llama-3-8b\"\ngpu = \"H100\"\ntp = %d\nreplicas = %d\n", tp, n)
		extra = fmt.Sprintf("spares = %d\n", spares)
		gpus = servers((n + spares) * tp)
	case 1: // groups, each with its own TP
		fleetTOML = "[cluster]\nmodel = \"llama-3-8b\"\n"
		for g := range 1 + rng.IntN(3) {
			tp, n := []int{1, 2, 4}[rng.IntN(3)], 1+rng.IntN(4)
			fleetTOML += fmt.Sprintf("[[cluster.groups]]\nname = \"g%d\"\ngpu = \"H100\"\ntp = %d\nreplicas = %d\n", g, tp, n)
			gpus += servers(n * tp)
		}
	default: // disaggregated: prefill and decode pools
		tp, n, m := []int{1, 2}[rng.IntN(2)], 1+rng.IntN(4), 1+rng.IntN(4)
		fleetTOML = fmt.Sprintf("[cluster]\nmodel = \"llama-3-8b\"\ngpu = \"H100\"\ntp = %d\nreplicas = %d\n[disagg]\nenabled = true\n[disagg.decode]\nreplicas = %d\n", tp, n, m)
		gpus = servers((n + m) * tp)
	}
	// The injector reads failures the longest precursor lead ahead.
	span := dur + prof.MaxPrecursorLead().Seconds()
	mult := failures.MaxEvents / (prof.RatePerGPUHour() * float64(gpus) * span / 3600) * (1 + jitter(rng))
	expect := prof.RatePerGPUHour() * mult * float64(gpus) * span / 3600
	return nearLimit{
		what: "failures",
		toml: fmt.Sprintf(`name = "near"
%s[workload]
duration_s = %v
[workload.arrival]
rate_per_s = 1
[run]
horizon_s = 0.5
[failures]
enabled = true
profile = "llama3"
rate_multiplier = %v
%s`, fleetTOML, dur, mult, extra),
		key:    "failures.rate_multiplier",
		within: expect <= failures.MaxEvents,
	}
}
