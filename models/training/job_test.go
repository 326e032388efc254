package training

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
)

// fixed is a fixed checkpoint interval (the policies package is not
// imported here, to keep these unit tests inside the package).
type fixed sim.Time

func (f fixed) CheckpointInterval(_, _ sim.Time) sim.Time { return sim.Time(f) }

type sliceSource struct{ evs []failures.Event }

func (s *sliceSource) Next() (failures.Event, bool) {
	if len(s.evs) == 0 {
		return failures.Event{}, false
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, true
}
func (s *sliceSource) Err() error { return nil }

// fail is a fail-stop event at hour h on host (8 GPUs) of HGX servers.
func fail(at sim.Time, host int, repair sim.Time) failures.Event {
	return failures.Event{Time: at, Category: "gpu", Component: failures.ComponentGPU, Mode: failures.ModeFailStop,
		Scope: failures.ScopeGPU, Unit: host * 8, FirstGPU: host * 8, GPUs: 1, DownFirstGPU: host * 8, DownGPUs: 8,
		Repair: repair, SpeedFraction: 1, Precursor: failures.NoPrecursor}
}

func software(at sim.Time, gpu int) failures.Event {
	return failures.Event{Time: at, Category: "software", Component: failures.ComponentSoftware, Mode: failures.ModeFailStop,
		Scope: failures.ScopeProcess, Unit: gpu, FirstGPU: gpu, GPUs: 1, SpeedFraction: 1, Precursor: failures.NoPrecursor}
}

// smallConfig: 2 servers, 10 h, fixed 10 min detection and 5 min restart,
// 60 s writes every hour of compute.
func smallConfig() Config {
	return Config{GPUs: 16, HorizonHours: 10, SpareServers: 1, DetectionMinS: 600, DetectionMaxS: 600,
		RestartMinS: 300, RestartMaxS: 300, CheckpointWriteS: 60, PricePerGPUHour: 2}
}

func runJob(t *testing.T, cfg Config, evs ...failures.Event) Result {
	t.Helper()
	eng := sim.NewEngine()
	j, err := New(cfg, Deps{Engine: eng, Topology: failures.HGX(4, 4), Failures: &sliceSource{evs}, Checkpoint: fixed(sim.Hour),
		MTBF: 100 * sim.Hour, Rand: sim.NewStream(1, "training")})
	require.NoError(t, err)
	j.Start()
	eng.Run(j.Horizon())
	r := j.Result()
	checkConservation(t, r)
	return r
}

// checkConservation: productive + lost GPU-hours = GPUs × wall hours.
func checkConservation(t *testing.T, r Result) {
	t.Helper()
	l := r.Lost
	sum := l.Recompute + l.Restart + l.Detection + l.WaitingSpares + l.CheckpointWrites + l.Slowdown
	require.InDelta(t, l.Total, sum, 1e-6*math.Max(1, sum))
	require.InEpsilon(t, float64(r.GPUs)*r.WallHours, r.ProductiveGPUHours+l.Total, 1e-9)
}

func TestJobNoFailures(t *testing.T) {
	r := runJob(t, smallConfig())
	// 9 full cycles of 3,660 s, then 3,060 s of compute: 36,000 s.
	assert.InDelta(t, (9*3600+3060)/36000.0, r.ETTR, 1e-12)
	assert.InDelta(t, 16*540/3600.0, r.Lost.CheckpointWrites, 1e-9)
	assert.Equal(t, 0, r.Failures)
	assert.Equal(t, 16*10*2.0, r.CostUSD)
	assert.Equal(t, "running", r.FinalState)
}

// TestJobOneFailure walks the timeline: checkpoint done at 1 h 01 min, the
// failure at 2 h loses 59 min of work, detection 10 min, a spare is there,
// restart 5 min, then 7 h 45 min of running.
func TestJobOneFailure(t *testing.T) {
	r := runJob(t, smallConfig(), fail(2*sim.Hour, 1, sim.Hour))
	gh := 16.0 / 3600
	assert.Equal(t, 1, r.Failures)
	assert.Equal(t, 1, r.Interruptions)
	assert.InDelta(t, 3540*gh, r.Lost.Recompute, 1e-9)
	assert.InDelta(t, 600*gh, r.Lost.Detection, 1e-9)
	assert.InDelta(t, 300*gh, r.Lost.Restart, 1e-9)
	assert.Zero(t, r.Lost.WaitingSpares)
	assert.InDelta(t, (60+7*60)*gh, r.Lost.CheckpointWrites, 1e-9)
	assert.InDelta(t, (3600+7*3600+2280)/36000.0, r.ETTR, 1e-12)
	assert.Equal(t, 0, r.MinSparesAvailable)
	assert.Equal(t, 1, r.MaxHostsOut)
	assert.Equal(t, 0, r.SpareWaits)
	assert.InDelta(t, r.Lost.Total*2, r.LostUSD, 1e-9)
}

// TestJobWaitsForSpares: no spare, so the job waits for the repair (1 h
// from the failure: 50 min after detection).
func TestJobWaitsForSpares(t *testing.T) {
	cfg := smallConfig()
	cfg.SpareServers = 0
	r := runJob(t, cfg, fail(2*sim.Hour, 0, sim.Hour))
	gh := 16.0 / 3600
	assert.InDelta(t, 3000*gh, r.Lost.WaitingSpares, 1e-9)
	assert.Equal(t, 1, r.SpareWaits)
	assert.InDelta(t, 300*gh, r.Lost.Restart, 1e-9)
}

// TestJobFailureDuringRestartAndDetection: a second failure during
// detection is not a new interruption; one during the restart aborts it.
func TestJobFailureDuringRestartAndDetection(t *testing.T) {
	r := runJob(t, smallConfig(),
		software(2*sim.Hour, 3),
		software(2*sim.Hour+5*sim.Minute, 9),  // detecting
		software(2*sim.Hour+12*sim.Minute, 0), // 2 min into the restart
	)
	gh := 16.0 / 3600
	assert.Equal(t, 3, r.Failures)
	assert.Equal(t, 2, r.Interruptions)
	assert.Equal(t, 2*600*gh, r.Lost.Detection)
	assert.InDelta(t, (120+300)*gh, r.Lost.Restart, 1e-9)
	assert.Zero(t, r.MaxHostsOut, "software failures take no hardware")
	assert.Equal(t, []failures.Count{{Name: "software", Incidents: 3}}, r.FailuresByCategory)
}

func TestJobIgnoresOtherGPUs(t *testing.T) {
	r := runJob(t, smallConfig(), fail(sim.Hour, 3, sim.Hour)) // host 3 is outside the 16-GPU job
	assert.Equal(t, 0, r.Failures)
}

// TestJobStraggler: a straggler at half speed for 2 h costs 1 h of compute.
func TestJobStraggler(t *testing.T) {
	cfg := smallConfig()
	cfg.CheckpointWriteS = 0
	ev := fail(0, 0, 2*sim.Hour)
	ev.Mode, ev.SpeedFraction, ev.Category = failures.ModeFailSlow, 0.5, "slow"
	r := runJob(t, cfg, ev)
	assert.Equal(t, 1, r.Failures)
	assert.Equal(t, 0, r.Interruptions)
	assert.Equal(t, 1, r.FailSlow)
	assert.InDelta(t, 16.0, r.Lost.Slowdown, 1e-9)
	assert.InDelta(t, 0.9, r.ETTR, 1e-12)
}

func TestJobEndsStopped(t *testing.T) {
	r := runJob(t, smallConfig(), software(10*sim.Hour-sim.Minute, 0))
	assert.Equal(t, "detecting", r.FinalState)
	assert.InDelta(t, 16.0/60, r.Lost.Detection, 1e-9)
}

func TestNewErrors(t *testing.T) {
	eng := sim.NewEngine()
	deps := Deps{Engine: eng, Topology: failures.HGX(4, 4), Failures: &sliceSource{}, Checkpoint: fixed(sim.Hour),
		MTBF: sim.Hour, Rand: sim.NewStream(1, "training")}
	cfg := smallConfig()
	cfg.GPUs = 12
	_, err := New(cfg, deps)
	assert.ErrorContains(t, err, "gpus must be a multiple of 8 (GPUs per host) and at most 32 (the topology), found 12")
	cfg.GPUs = 64
	_, err = New(cfg, deps)
	assert.Error(t, err)
	cfg = smallConfig()
	cfg.RestartMaxS = -1
	_, err = New(cfg, deps)
	assert.ErrorContains(t, err, "training.restart_max_s")
	d := deps
	d.Rand = nil
	_, err = New(smallConfig(), d)
	assert.Error(t, err)
	d = deps
	d.Checkpoint = fixed(0)
	_, err = New(smallConfig(), d)
	assert.ErrorContains(t, err, "checkpoint interval must be > 0")
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want []config.Problem
	}{
		{"default", func(*Config) {}, nil},
		{"llama3", func(c *Config) { *c = Llama3PretrainConfig() }, nil},
		{"sizes", func(c *Config) { c.GPUs, c.HorizonHours, c.SpareServers = 0, -1, -2 }, []config.Problem{
			{Key: "training.gpus", Msg: "must be an integer > 0, found 0"},
			{Key: "training.horizon_hours", Msg: "must be a finite number > 0, found -1"},
			{Key: "training.spare_servers", Msg: "must be an integer >= 0, found -2"},
		}},
		{"ranges", func(c *Config) { c.DetectionMinS, c.DetectionMaxS, c.RestartMinS = 30, 10, math.NaN() }, []config.Problem{
			{Key: "training.detection_max_s", Msg: "must be >= detection_min_s (30), found 10"},
			{Key: "training.restart_min_s", Msg: "must be a finite number >= 0, found NaN"},
		}},
		{"money and writes", func(c *Config) { c.PricePerGPUHour, c.CheckpointWriteS = -1, math.Inf(1) }, []config.Problem{
			{Key: "training.checkpoint_write_s", Msg: "must be a finite number >= 0, found +Inf"},
			{Key: "training.checkpoint_write_s", Msg: "must be at most 30 days, found +Inf"},
			{Key: "training.price_per_gpu_hour", Msg: "must be a finite number >= 0, found -1"},
		}},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.edit(&c)
		var ps config.Problems
		c.Validate("training", &ps)
		assert.Equal(t, tt.want, ps.List, tt.name)
	}
}

// TestSimulateConservesAndRepeats: random llama3 runs conserve GPU-hours and
// are deterministic.
func TestSimulateConservesAndRepeats(t *testing.T) {
	p, err := failures.LookupProfile(failures.ProfileByteRobust) // has stragglers and hangs
	require.NoError(t, err)
	cfg := DefaultConfig()
	cfg.GPUs, cfg.HorizonHours, cfg.SpareServers = 4096, 24*30, 2
	slow := 0
	for seed := uint64(1); seed <= 5; seed++ {
		a, err := Simulate(Spec{Config: cfg, Profile: p, RateMultiplier: 1, Topology: failures.HGX(512, 4), Checkpoint: fixed(20 * sim.Minute), Seed: seed})
		require.NoError(t, err)
		b, err := Simulate(Spec{Config: cfg, Profile: p, RateMultiplier: 1, Topology: failures.HGX(512, 4), Checkpoint: fixed(20 * sim.Minute), Seed: seed})
		require.NoError(t, err)
		assert.Equal(t, a, b)
		checkConservation(t, a.Result)
		assert.Greater(t, a.Failures, 100)
		slow += a.FailSlow
	}
	assert.Greater(t, slow, 0, "stragglers (MFU decline, 1% of failures) in some runs")
}

// slowGPU is a fail-slow GPU on host at speed, repaired after repair.
func slowGPU(at sim.Time, host int, speed float64, repair sim.Time) failures.Event {
	return failures.Event{Time: at, Category: "mfu-decline", Component: failures.ComponentGPU, Mode: failures.ModeFailSlow,
		Scope: failures.ScopeGPU, Unit: host * 8, FirstGPU: host * 8, GPUs: 1, Repair: repair, SpeedFraction: speed,
		Precursor: failures.NoPrecursor}
}

func TestJobEvictsStraggler(t *testing.T) {
	cfg := smallConfig()
	ev := slowGPU(sim.Hour+30*sim.Minute, 1, 0.5, 100*sim.Hour)
	kept := runJob(t, cfg, ev)
	assert.Equal(t, 0, kept.Evictions)
	// At half speed to the horizon (less the checkpoint writes).
	assert.Greater(t, kept.Lost.Slowdown, 16*8*0.5)
	assert.Less(t, kept.Lost.Slowdown, 16*8.5*0.5)

	cfg.EvictStragglers, cfg.StragglerDetectionMinS, cfg.StragglerDetectionMaxS = true, 1200, 1200
	r := runJob(t, cfg, ev)
	assert.Equal(t, 1, r.Evictions)
	assert.Equal(t, 1, r.Interruptions)
	assert.Equal(t, 1, r.MaxHostsOut)
	assert.Equal(t, 0, r.MinSparesAvailable, "the spare took the evicted host's place")
	assert.Equal(t, 0, r.SpareWaits)
	// 20 min at half speed, then the work since the checkpoint at 1:01 is
	// lost and the job restarts on the spare in 5 min.
	assert.InDelta(t, 16*1200*0.5/3600, r.Lost.Slowdown, 1e-9)
	assert.InDelta(t, 16*300/3600.0, r.Lost.Restart, 1e-9)
	assert.Zero(t, r.Lost.Detection, "the job ran (slowly) until the eviction")
	assert.Greater(t, r.ETTR, kept.ETTR+0.3)

	// No spare: the job waits for the repair, which ends the run here.
	cfg.SpareServers = 0
	r = runJob(t, cfg, ev)
	assert.Equal(t, 1, r.SpareWaits)
	assert.Equal(t, "waiting-spares", r.FinalState)

	// A straggler repaired before it is seen is not evicted.
	cfg.SpareServers = 1
	r = runJob(t, cfg, slowGPU(sim.Hour, 1, 0.5, 10*sim.Minute))
	assert.Zero(t, r.Evictions)
	assert.Zero(t, r.Interruptions)
}

func TestJobOverEvicts(t *testing.T) {
	cfg := smallConfig()
	cfg.GPUs, cfg.SpareServers = 32, 2 // 4 servers
	cfg.OverEvictHosts, cfg.OverEvictReturnS = 2, 1800
	hang := failures.Event{Time: sim.Hour, Category: "job-hang", Component: failures.ComponentNCCLWatchdog, Mode: failures.ModeHang,
		Scope: failures.ScopeProcess, Unit: 24, FirstGPU: 24, GPUs: 1, SpeedFraction: 1, Precursor: failures.NoPrecursor}
	eng := sim.NewEngine()
	j, err := New(cfg, Deps{Engine: eng, Topology: failures.HGX(4, 4), Failures: &sliceSource{[]failures.Event{hang}}, Checkpoint: fixed(sim.Hour),
		MTBF: 100 * sim.Hour, Rand: sim.NewStream(1, "training")})
	require.NoError(t, err)
	j.Start()
	eng.Run(j.Horizon())
	r := j.Result()
	checkConservation(t, r)
	// Host 3 hung: hosts 0 and 1 (wrapping round) go with it, its own
	// process restarts in place; the two spares fill them.
	assert.Equal(t, 2, r.OverEvictedHosts)
	assert.Equal(t, 2, r.MaxHostsOut)
	assert.Equal(t, 0, r.MinSparesAvailable)
	assert.Equal(t, 0, r.SpareWaits)
	last := j.Trace()[len(j.Trace())-1]
	assert.Equal(t, 2, last.SparesAvailable, "both back after their checks")
	assert.Equal(t, 0, last.HostsOut)

	// One spare: the restart waits for the over-evicted hosts' return.
	cfg.SpareServers = 1
	r = runJob(t, cfg, hang)
	assert.Equal(t, 1, r.SpareWaits)
	assert.InDelta(t, 32*(1800-600)/3600.0, r.Lost.WaitingSpares, 1e-9)
}

// Planned stops (PlannedEveryHours): every 3 h of a 10-h run the job saves
// its work (the 60-s write booked with the 5-min restart) and restarts:
// three stops, nothing recomputed, each costing 360 s; a stop that finds
// the job stopped by a failure costs nothing more.
func TestPlannedStops(t *testing.T) {
	cfg := smallConfig()
	cfg.PlannedEveryHours = 3
	r := runJob(t, cfg)
	assert.Equal(t, 3, r.Planned)
	assert.Zero(t, r.Interruptions)
	assert.Zero(t, r.Lost.Recompute)
	gh := float64(cfg.GPUs) / 3600
	assert.InDelta(t, 3*360*gh, r.Lost.Restart, 1e-6)
	assert.InDelta(t, float64(cfg.GPUs)*cfg.HorizonHours, r.ProductiveGPUHours+r.Lost.Total, 1e-6)

	// A failure at 2 h 59 min: detection (10 min) covers the 3-h stop.
	r2 := runJob(t, cfg, software(3*sim.Hour-sim.Minute, 0))
	assert.Equal(t, 3, r2.Planned)
	assert.Equal(t, 1, r2.Interruptions)
	assert.InDelta(t, (2*360+300)*gh, r2.Lost.Restart, 1e-6, "the stop inside the failure's costs nothing")

	var ps config.Problems
	cfg.PlannedEveryHours = -1
	cfg.Validate("training", &ps)
	assert.ErrorContains(t, ps.Err(), "training.planned_every_hours")
}
