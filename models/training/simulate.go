package training

import (
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/sim"
)

// Straggler is one GPU running below speed for the whole run (a scenario's
// [[training.stragglers]]): what one bad GPU costs a job.
type Straggler struct {
	// GPU is its index in the job.
	GPU int `toml:"gpu"`
	// SpeedFraction is its speed relative to a healthy GPU, in (0, 1); the
	// synchronous job runs at its pace. 0.9 is the seed's "10% throughput
	// loss" (CALIBRATION.md §6).
	SpeedFraction float64 `toml:"speed_fraction"`
}

// Validate records problems of straggler s of a job of gpus GPUs under
// prefix (e.g. "training.stragglers.0").
func (s *Straggler) Validate(prefix string, gpus int, ps *config.Problems) {
	if s.GPU < 0 || s.GPU >= gpus {
		ps.Add(config.Key(prefix, "gpu"), "must be a GPU of the job, 0..%d, found %d", gpus-1, s.GPU)
	}
	if !(s.SpeedFraction > 0 && s.SpeedFraction < 1) {
		ps.Add(config.Key(prefix, "speed_fraction"), "must be between 0 and 1 (exclusive), found %v", s.SpeedFraction)
	}
}

// Spec is one replication of a job: what Simulate runs.
type Spec struct {
	Config   Config
	Topology failures.Topology
	// Profile is the cluster's failure profile; RateMultiplier scales
	// every rate (0: no random failures, stragglers only).
	Profile        *failures.Profile
	RateMultiplier float64
	// Stragglers are slow from time 0 to the horizon.
	Stragglers []Straggler
	Checkpoint CheckpointPolicy
	// Seed derives the streams: "failures" for the failure generator on
	// the whole topology, "training" for the job's detection and restart
	// draws, so two checkpoint policies see the same failures.
	Seed uint64
}

// Run is one replication's outcome.
type Run struct {
	Result
	// Events is how many engine events the run fired; Horizon is when it
	// ended.
	Events  uint64
	Horizon sim.Time
	// Trace is the job's timeline (Job.Trace): a point per event.
	Trace []TracePoint
}

// Simulate runs one replication of s. The checkpoint policy sees the
// profile's MTBF for the job's GPUs, over the rate multiplier. The profile
// is taken as the job sees it (Profile.ForJob): a row capped at fewer GPUs
// than the job's comes as often as for a job of that many.
func Simulate(s Spec) (Run, error) {
	t, mult := s.Config, s.RateMultiplier
	prof := s.Profile.ForJob(t.GPUs)
	horizon := sim.FromSeconds(t.HorizonHours * 3600)
	var fixed []failures.Event
	for _, st := range s.Stragglers {
		fixed = append(fixed, failures.Event{Time: 0, Category: "straggler", Label: "fail-slow GPU", Component: failures.ComponentGPU,
			Mode: failures.ModeFailSlow, Scope: failures.ScopeGPU, Unit: st.GPU, FirstGPU: st.GPU, GPUs: 1,
			Repair: horizon, SpeedFraction: st.SpeedFraction, Precursor: failures.NoPrecursor})
	}
	sort.SliceStable(fixed, func(i, j int) bool { return fixed[i].Time < fixed[j].Time })
	src := &mergedSource{fixed: fixed}
	var lemons *failures.Lemons
	if mult > 0 {
		gen, err := failures.NewGenerator(prof.Scaled(mult), s.Topology, sim.NewStream(s.Seed, streams.Failures))
		if err != nil {
			return Run{}, err
		}
		src.gen = gen
		if t.LemonFraction > 0 && t.LemonMultiplier > 1 {
			lemons, err = failures.NewLemons(gen, s.Topology, failures.LemonConfig{Fraction: t.LemonFraction, Multiplier: t.LemonMultiplier},
				sim.NewStream(s.Seed, streams.Lemons))
			if err != nil {
				return Run{}, err
			}
			src.gen = lemons
		}
	}
	mtbf := prof.MTBF(t.GPUs)
	if mult > 0 && mtbf != sim.Forever { // a failure-free profile stays failure-free
		mtbf = sim.Time(float64(mtbf) / mult)
	}
	if mtbf == sim.Forever || mult == 0 {
		mtbf = sim.FromSeconds(math.Min(t.HorizonHours*3600*1000, 1e15))
	}
	eng := sim.NewEngine()
	job, err := New(t, Deps{Engine: eng, Topology: s.Topology, Failures: src, Checkpoint: s.Checkpoint,
		MTBF: mtbf, Rand: sim.NewStream(s.Seed, streams.Training), Lemons: lemons})
	if err != nil {
		return Run{}, err
	}
	job.Start()
	eng.Run(job.Horizon())
	res := job.Result()
	return Run{Result: res, Events: eng.Fired(), Horizon: job.Horizon(), Trace: job.Trace()}, nil
}

// mergedSource yields fixed events and a generator's, in time order.
type mergedSource struct {
	fixed []failures.Event
	gen   failures.Source
	next  *failures.Event
	ok    bool
	began bool
}

func (m *mergedSource) Next() (failures.Event, bool) {
	if !m.began {
		m.began = true
		if m.gen != nil {
			ev, ok := m.gen.Next()
			m.next, m.ok = &ev, ok
		}
	}
	if len(m.fixed) > 0 && (!m.ok || m.fixed[0].Time <= m.next.Time) {
		ev := m.fixed[0]
		m.fixed = m.fixed[1:]
		return ev, true
	}
	if !m.ok {
		return failures.Event{}, false
	}
	ev := *m.next
	n, ok := m.gen.Next()
	m.next, m.ok = &n, ok
	return ev, true
}

func (m *mergedSource) Err() error {
	if m.gen != nil {
		return m.gen.Err()
	}
	return nil
}
