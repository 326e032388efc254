package experiments

import (
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// ServeConfig is one [[serve]] table: a model the fleet serves, its share
// of the workload's requests and its own SLO. Several of them make one
// fleet serve several models: each request is for one model (drawn by
// share from the "models" stream), and only that model's replicas (the
// [[cluster.groups]] with model = it) take it.
type ServeConfig struct {
	// Model names a catalog model (or a scenario's [[models]] entry).
	Model string `toml:"model"`
	// Share is the model's relative share of the requests (> 0; shares
	// are normalised).
	Share float64 `toml:"share"`
	// TTFTMs, TPOTMs and E2EMs are the model's SLO; 0 takes [slo]'s.
	TTFTMs float64 `toml:"ttft_ms"`
	TPOTMs float64 `toml:"tpot_ms"`
	E2EMs  float64 `toml:"e2e_ms"`
	// Workload gives the model's own request lengths ([serve.workload]):
	// an empty table keeps the workload's.
	Workload ServeWorkload `toml:"workload"`
}

// ServeWorkload is a served model's own prompt and output lengths
// ([serve.workload.input], [serve.workload.output], the keys of
// [workload.input] and [workload.output]). Each request for the model has
// its lengths redrawn from them (from the model's own stream, after the
// workload drew its own), so the other models' requests do not move. Only
// a synthetic workload's lengths can be redrawn.
type ServeWorkload struct {
	Input  workloads.DistConfig `toml:"input"`
	Output workloads.DistConfig `toml:"output"`
}

func (w *ServeWorkload) isZero() bool { return w.Input.IsZero() && w.Output.IsZero() }

// modelLengths builds each served model's own lengths for the intake; nil
// when no [[serve]] table has [serve.workload].
func (s *Scenario) modelLengths() ([]fleet.ModelLengths, error) {
	var out []fleet.ModelLengths
	for i, c := range s.Serve {
		w := c.Workload
		if w.isZero() {
			continue
		}
		if out == nil {
			out = make([]fleet.ModelLengths, len(s.Serve))
		}
		l := &out[i]
		l.RNG = sim.NewStream(s.Seed, streams.Serve(i))
		var err error
		if !w.Input.IsZero() {
			if l.Input, err = w.Input.Build(); err != nil {
				return nil, fmt.Errorf("serve.%d.workload.input: %w", i, err)
			}
		}
		if !w.Output.IsZero() {
			if l.Output, err = w.Output.Build(); err != nil {
				return nil, fmt.Errorf("serve.%d.workload.output: %w", i, err)
			}
		}
	}
	return out, nil
}

// slo is the model's SLO: its own terms, else the scenario's.
func (c ServeConfig) slo(def fleet.SLO) fleet.SLO {
	s := def
	if c.TTFTMs > 0 {
		s.TTFTMs = c.TTFTMs
	}
	if c.TPOTMs > 0 {
		s.TPOTMs = c.TPOTMs
	}
	if c.E2EMs > 0 {
		s.E2EMs = c.E2EMs
	}
	return s
}

// validateServe checks [[serve]] against the groups: every served model
// has replicas, every group's model has traffic.
func (s *Scenario) validateServe(ps *config.Problems) {
	if len(s.Serve) == 0 {
		for i, g := range s.Cluster.Groups {
			if g.Model != "" && g.Model != s.Cluster.Model {
				ps.Add(fmt.Sprintf("cluster.groups.%d.model", i), "%q is not cluster.model (%q): give each model its traffic with [[serve]] tables", g.Model, s.Cluster.Model)
			}
		}
		return
	}
	if len(s.Cluster.Groups) == 0 {
		ps.Add("serve", "[[serve]] needs a fleet of [[cluster.groups]], each serving one model")
		return
	}
	cat := s.Catalog()
	replicas, serving := map[string]int{}, map[string]int{}
	for _, g := range s.Cluster.Groups {
		m := g.Model
		if m == "" {
			m = s.Cluster.Model
		}
		replicas[m] += max(g.Replicas, 0)
		serving[m] += max(g.Replicas, 0) - g.Down()
	}
	seen := map[string]bool{}
	for i, c := range s.Serve {
		k := func(key string) string { return fmt.Sprintf("serve.%d.%s", i, key) }
		if _, ok := cat.LLMs[c.Model]; !ok {
			ps.OneOf(k("model"), c.Model, cat.LLMNames())
		} else if seen[c.Model] {
			ps.Add(k("model"), "%q is served twice", c.Model)
		} else if replicas[c.Model] == 0 {
			ps.Add(k("model"), "%q has traffic but no replicas: add a [[cluster.groups]] table with model = %q", c.Model, c.Model)
		} else if serving[c.Model] == 0 {
			ps.Add(k("model"), "%q has traffic but its groups' down_replicas take all its %d replicas out of service", c.Model, replicas[c.Model])
		}
		seen[c.Model] = true
		if !(c.Share > 0) || math.IsInf(c.Share, 0) {
			ps.Add(k("share"), "must be a finite number > 0, found %v", c.Share)
		}
		ps.NonNegative(k("ttft_ms"), c.TTFTMs)
		ps.NonNegative(k("tpot_ms"), c.TPOTMs)
		ps.NonNegative(k("e2e_ms"), c.E2EMs)
		if w := &c.Workload; !w.isZero() {
			if s.Workload.Kind != workloads.KindSynthetic {
				ps.Add(k("workload"), "a model's own lengths need workload.kind = %q (found %q): a trace's or a session's lengths are not redrawn", workloads.KindSynthetic, s.Workload.Kind)
			}
			if !w.Input.IsZero() {
				w.Input.Validate(k("workload.input"), ps)
			}
			if !w.Output.IsZero() {
				w.Output.Validate(k("workload.output"), ps)
			}
		}
	}
	for i, g := range s.Cluster.Groups {
		m := g.Model
		if m == "" {
			m = s.Cluster.Model
		}
		if !seen[m] {
			ps.Add(fmt.Sprintf("cluster.groups.%d.model", i), "%q has replicas but no [[serve]] traffic", m)
		}
	}
}

// serveModels is the [[serve]] models in order (nil without [[serve]]).
func (s *Scenario) serveModels() []string {
	var out []string
	for _, c := range s.Serve {
		out = append(out, c.Model)
	}
	return out
}

// ModelStats is one served model's requests in a fleet of several models.
type ModelStats struct {
	Model    string        `json:"model"`
	Share    float64       `json:"share"` // of the requests, normalised
	Replicas int           `json:"replicas"`
	Requests RequestCounts `json:"requests"`
	TTFT     Dist          `json:"ttft_ms"`
	TPOT     Dist          `json:"tpot_ms"`
	E2E      Dist          `json:"e2e_ms"`
	// GoodputRPS is requests per second that met the model's SLO;
	// SLOAttainment their share of arrivals (absent without an SLO).
	GoodputRPS    float64  `json:"goodput_requests_per_s"`
	SLOAttainment *float64 `json:"slo_attainment,omitempty"`
	TTFTSLOMs     float64  `json:"ttft_slo_ms,omitempty"`
	TPOTSLOMs     float64  `json:"tpot_slo_ms,omitempty"`
}

func modelStats(r *Result, secs float64) []ModelStats {
	sc, rec := r.Scenario, r.Rec
	if len(rec.PerModel) == 0 {
		return nil
	}
	total := 0.0
	for _, c := range sc.Serve {
		total += c.Share
	}
	var out []ModelStats
	for i, c := range sc.Serve {
		m := rec.PerModel[i]
		n := 0
		for _, g := range sc.Cluster.Groups {
			if g.Model == c.Model {
				n += g.Replicas
			}
		}
		ms := ModelStats{Model: c.Model, Share: round6(c.Share / total), Replicas: n,
			Requests: RequestCounts{Arrived: m.Arrived, Completed: m.Completed, Failed: m.Failed, Shed: m.Shed, InFlight: m.InFlight(), Preempted: m.Preempted},
			TTFT:     dist(m.TTFT), TPOT: dist(m.TPOT), E2E: dist(m.E2E),
			GoodputRPS: round6(ratio(float64(m.MetSLO), secs)), TTFTSLOMs: m.SLO.TTFTMs, TPOTSLOMs: m.SLO.TPOTMs}
		if m.SLO.Set() {
			ms.SLOAttainment = ptr(round6(ratio(float64(m.MetSLO), float64(m.Arrived))))
		}
		out = append(out, ms)
	}
	return out
}

// perModelRecorders gives rec one recorder per served model (with the
// model's SLO) when the fleet serves several.
func (s *Scenario) perModelRecorders(rec *fleet.Recorder) {
	if len(s.Serve) < 2 {
		return
	}
	for _, c := range s.Serve {
		rec.PerModel = append(rec.PerModel, fleet.NewRecorder(c.slo(s.SLO)))
	}
}
