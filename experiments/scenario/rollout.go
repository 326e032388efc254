package scenario

import (
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/policies"
)

// RolloutGreen are the replicas a [rollout] moves to the new version (its
// green pool), ascending: the last rollout.new_replicas serving replicas
// of the fleet, or, in a fleet of groups, of each group (every kind of
// hardware runs the canary, so the judge compares each group's new
// version with its old one, and a group's own step times do not pass for
// a regression). Replicas in repair for the whole run (run.down_replicas,
// a group's down_replicas) and warm spares (after the serving replicas,
// newFleet) are never green. Nil without a rollout.
func (s *Scenario) RolloutGreen() []int {
	if !s.Rollout.Enabled {
		return nil
	}
	n := max(s.Rollout.NewReplicas, 0)
	var green []int
	add := func(first, end int) {
		for i := max(first, end-n); i < end; i++ {
			green = append(green, i)
		}
	}
	if len(s.Cluster.Groups) == 0 {
		add(0, s.Cluster.Replicas-s.RunDown())
		return green
	}
	first := 0
	for i := range s.Cluster.Groups {
		g := &s.Cluster.Groups[i]
		add(first, first+max(g.Replicas, 0)-g.Down())
		first += max(g.Replicas, 0)
	}
	return green
}

// validateRollout checks [rollout] against the fleet it rolls out on: the
// green pool leaves each group (or the fleet) a blue replica.
func (s *Scenario) validateRollout(ps *config.Problems) {
	s.Rollout.Validate("rollout", s.Cluster.Replicas, ps)
	policies.RolloutJudges.Validate("rollout.judge", s.Rollout.Judge, ps)
	if len(s.Cluster.Groups) == 0 {
		if k := s.RunDown(); k > 0 && s.Rollout.NewReplicas >= 1 && s.Rollout.NewReplicas < s.Cluster.Replicas &&
			s.Rollout.NewReplicas >= s.Cluster.Replicas-k {
			ps.Add("rollout.new_replicas", "must be below cluster.replicas − run.down_replicas = %d (the replicas not in repair keep a blue one), found %d",
				s.Cluster.Replicas-k, s.Rollout.NewReplicas)
		}
		return
	}
	for _, g := range s.Cluster.Groups {
		if n := max(g.Replicas, 0) - g.Down(); s.Rollout.NewReplicas >= 1 && s.Rollout.NewReplicas >= n {
			ps.Add("rollout.new_replicas", "is the green replicas of each group and must be below each group's serving replicas (group %q has %d), found %d",
				g.Name, n, s.Rollout.NewReplicas)
		}
	}
}
