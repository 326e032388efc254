package scenario

import (
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// A [[serve]] share's range (issue 33 item 5): shares are relative
// weights, so any ratio of real traffic fits in [1e-6, 1e6] (a share of
// 1e-12 of the largest), while their sum cannot overflow (1e308 + 1e308 is
// +Inf, and every share became 0) nor lose precision in subnormals
// (5e-324).
const (
	MinShare = 1e-6
	MaxShare = 1e6
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

// ModelLengths builds each served model's own lengths for the intake; nil
// when no [[serve]] table has [serve.workload].
func (s *Scenario) ModelLengths() ([]fleet.ModelLengths, error) {
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

// SLOFor is the model's SLO: its own terms, else the scenario's.
func (c ServeConfig) SLOFor(def fleet.SLO) fleet.SLO {
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
		} else if c.Share < MinShare || c.Share > MaxShare {
			ps.Add(k("share"), "must be between %g and %g (a hard limit: shares are relative weights; 1e308 overflowed their sum, 5e-324 lost its precision), found %v", MinShare, MaxShare, c.Share)
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
