package experiments

import (
	"fmt"
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/sim"
)

// Scenario modes.
const (
	ModeServing  = "serving"
	ModeTraining = "training"
)

// TrainingScenario is a scenario's [training] table (mode = "training"):
// one synchronous job on a cluster, failing as [failures] says.
type TrainingScenario struct {
	training.Config
	// Checkpoint picks the interval: "daly" (default), "young" or "fixed".
	Checkpoint policies.CheckpointConfig `toml:"checkpoint"`
	// Topology is the cluster the job runs on. Default: 2,048 HGX servers
	// (Llama 3, CALIBRATION.md §1).
	Topology failures.TopologyConfig `toml:"topology"`
	// Stragglers are fail-slow GPUs present from the start for the whole
	// run ([[training.stragglers]]): what one bad GPU costs a job.
	Stragglers []Straggler `toml:"stragglers"`
}

// Straggler is one GPU running below speed for the whole run.
type Straggler struct {
	// GPU is its index in the job.
	GPU int `toml:"gpu"`
	// SpeedFraction is its speed relative to a healthy GPU, in (0, 1); the
	// synchronous job runs at its pace. 0.9 is the seed's "10% throughput
	// loss" (CALIBRATION.md §6).
	SpeedFraction float64 `toml:"speed_fraction"`
}

// DefaultTrainingScenario is Llama 3's job (training.Llama3PretrainConfig).
func DefaultTrainingScenario() TrainingScenario {
	return TrainingScenario{Config: training.Llama3PretrainConfig(), Checkpoint: policies.DefaultCheckpointConfig(),
		Topology: failures.DefaultTopologyConfig()}
}

// Validate records problems under prefix.
func (t *TrainingScenario) Validate(prefix string, ps *config.Problems) {
	t.Config.Validate(prefix, ps)
	t.Checkpoint.Validate(prefix+".checkpoint", ps)
	t.Topology.Validate(prefix+".topology", ps)
	for i, s := range t.Stragglers {
		k := fmt.Sprintf("%s.stragglers.%d", prefix, i)
		if s.GPU < 0 || s.GPU >= t.GPUs {
			ps.Add(k+".gpu", "must be a GPU of the job, 0..%d, found %d", t.GPUs-1, s.GPU)
		}
		if !(s.SpeedFraction > 0 && s.SpeedFraction < 1) {
			ps.Add(k+".speed_fraction", "must be between 0 and 1 (exclusive), found %v", s.SpeedFraction)
		}
	}
}

// TrainingStats is summary.json's training block.
type TrainingStats struct {
	training.Result
	// LostUSDPerMonth is the lost GPU-hours' cost scaled to a 720-hour
	// month (CALIBRATION.md §6: "$6.5/h and 720 h").
	LostUSDPerMonth float64 `json:"lost_usd_per_month"`
	// SlowdownUSDPerMonth is the part of it due to stragglers.
	SlowdownUSDPerMonth float64 `json:"slowdown_usd_per_month"`
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

// runTraining simulates one replication of a training scenario.
func runTraining(sc *Scenario) (*Result, error) {
	t := sc.Training
	topo := t.Topology.Topology()
	prof, err := failures.LookupProfile(sc.Failures.Profile)
	if err != nil {
		return nil, err
	}
	scaled := *prof
	scaled.Rows = append([]failures.Row(nil), prof.Rows...)
	mult := sc.Failures.RateMultiplier
	if !sc.Failures.Enabled {
		mult = 0
	}
	for i := range scaled.Rows {
		scaled.Rows[i].PerGPUHour *= mult
	}
	horizon := sim.FromSeconds(t.HorizonHours * 3600)
	var fixed []failures.Event
	for _, s := range t.Stragglers {
		fixed = append(fixed, failures.Event{Time: 0, Category: "straggler", Label: "fail-slow GPU", Component: failures.ComponentGPU,
			Mode: failures.ModeFailSlow, Scope: failures.ScopeGPU, Unit: s.GPU, FirstGPU: s.GPU, GPUs: 1,
			Repair: horizon, SpeedFraction: s.SpeedFraction, Precursor: failures.NoPrecursor})
	}
	sort.SliceStable(fixed, func(i, j int) bool { return fixed[i].Time < fixed[j].Time })
	src := &mergedSource{fixed: fixed}
	if mult > 0 {
		gen, err := failures.NewGenerator(&scaled, topo, sim.NewStream(sc.Seed, "failures"))
		if err != nil {
			return nil, err
		}
		src.gen = gen
	}
	pol, err := policies.NewCheckpointPolicy(t.Checkpoint)
	if err != nil {
		return nil, err
	}
	mtbf := prof.MTBF(t.GPUs)
	if mult > 0 {
		mtbf = sim.Time(float64(mtbf) / mult)
	}
	if mtbf == sim.Forever || mult == 0 {
		mtbf = sim.FromSeconds(math.Min(t.HorizonHours*3600*1000, 1e15))
	}
	eng := sim.NewEngine()
	job, err := training.New(t.Config, training.Deps{Engine: eng, Topology: topo, Failures: src, Checkpoint: pol,
		MTBF: mtbf, Rand: sim.NewStream(sc.Seed, "training")})
	if err != nil {
		return nil, err
	}
	job.Start()
	eng.Run(job.Horizon())
	r := job.Result()
	month := ratio(HoursPerMonth, r.WallHours)
	ts := &TrainingStats{Result: r, LostUSDPerMonth: round6(r.LostUSD * month),
		SlowdownUSDPerMonth: round6(r.Lost.Slowdown * r.PricePerGPUHour * month)}
	return &Result{Scenario: sc, Events: eng.Fired(), EndTime: job.Horizon(), Training: ts}, nil
}
