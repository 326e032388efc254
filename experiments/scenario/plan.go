package scenario

import (
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
)

// PlanConfig is a scenario's [plan] table: the search space of `fleetsim
// plan`. Every list left empty takes a default derived from the catalog and
// the scenario (experiments/plan.go says which).
type PlanConfig struct {
	// SLO is the target, as for --slo. Default "" (then --slo is required).
	SLO string `toml:"slo"`
	// GPUs are catalog GPU names to try. Default: the scenario's
	// cluster.gpu alone.
	GPUs []string `toml:"gpus"`
	// TP are tensor-parallel sizes to try. Default: every size that
	// divides the GPU's NVLink domain and the model's heads.
	TP []int `toml:"tp"`
	// EP, for a mixture-of-experts model, also tries each layout with
	// expert parallelism (ep = tp) beside ep = 1. Default false.
	EP bool `toml:"ep"`
	// MaxBatchedTokens are the step token budgets to try. Default: the
	// scenario's cluster.replica.max_batched_tokens alone.
	MaxBatchedTokens []int `toml:"max_batched_tokens"`
	// MaxSeqs are the running-sequence caps to try. Default: the
	// scenario's cluster.replica.max_seqs alone.
	MaxSeqs []int `toml:"max_seqs"`
	// MaxReplicas is the replica ceiling: a configuration that needs more
	// replicas than this to meet the SLO (or, by its roofline bound, to
	// carry the rate) is not chosen. Default 64 (assumption: a plan above
	// 64 replicas of one configuration is a different question, a
	// region's fleet, not a deployment's).
	MaxReplicas int `toml:"max_replicas"`
}

// DefaultPlanMaxReplicas is PlanConfig.MaxReplicas's default.
const DefaultPlanMaxReplicas = 64

// maxPlanReplicas bounds plan.max_replicas (the sizing search's own
// bound, experiments.maxSizeReplicas).
const maxPlanReplicas = 1 << 14

// validatePlan records the problems of [plan].
func (s *Scenario) validatePlan(ps *config.Problems) {
	p := s.Plan
	if p.SLO != "" {
		if _, err := ParseSLO(p.SLO); err != nil {
			ps.Add("plan.slo", "%v", err)
		}
	}
	cat := s.Catalog()
	for i, g := range p.GPUs {
		if _, ok := cat.GPUs[g]; !ok {
			ps.OneOf(fmt.Sprintf("plan.gpus.%d", i), g, cat.GPUNames())
		}
	}
	for i, v := range p.TP {
		ps.PositiveInt(fmt.Sprintf("plan.tp.%d", i), v)
	}
	for i, v := range p.MaxBatchedTokens {
		ps.PositiveInt(fmt.Sprintf("plan.max_batched_tokens.%d", i), v)
	}
	for i, v := range p.MaxSeqs {
		ps.PositiveInt(fmt.Sprintf("plan.max_seqs.%d", i), v)
	}
	if p.MaxReplicas < 1 || p.MaxReplicas > maxPlanReplicas {
		ps.Add("plan.max_replicas", "must be between 1 and %d, found %d", maxPlanReplicas, p.MaxReplicas)
	} else if p.MaxReplicas <= s.Run.DownReplicas {
		ps.Add("plan.max_replicas", "must exceed run.down_replicas (%d): those replicas are in repair, found %d", s.Run.DownReplicas, p.MaxReplicas)
	}
}
