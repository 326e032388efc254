package scenario

import (
	"github.com/fleetsim/fleetsim/internal/config"
)

// Rule is one cross-feature rule: a combination of two sections of a
// scenario that is refused, because it is not modelled yet or has no
// meaning, with the reason, under the key where the user would change it.
//
// Rules holds every such rule, in one table: a section never refuses
// another anywhere else. testdata/rules/ holds a scenario that breaks each
// rule (TestRulesFromTestdata), so that removing a rule is a row deleted
// here, that scenario's expectation turned to "ok", and the code that makes
// the combination work.
type Rule struct {
	// Name is the two sections, "disagg+fallback": the name of the
	// rule's testdata file.
	Name string
	// Applies reports whether the scenario has both sections on.
	Applies func(s *Scenario) bool
	// Key is where the problem is reported; KeyOf, when set, instead.
	Key   string
	KeyOf func(s *Scenario) string
	// Reason is the problem's text; ReasonOf, when set, instead.
	Reason   string
	ReasonOf func(s *Scenario) string
}

// Sections of a scenario, as the rules test them.
func (s *Scenario) groups() bool        { return len(s.Cluster.Groups) > 0 }
func (s *Scenario) failureSpares() bool { return s.Failures.Enabled && s.Failures.Spares > 0 }
func (s *Scenario) spot() bool          { return s.SpotReplicas() > 0 }
func (s *Scenario) wideLayout() bool {
	l := s.Cluster.Layout()
	return l.DP != 1 || l.EP != 1 || l.PP != 1
}

// Rules are the refused combinations, in the order their problems are
// reported.
var Rules = []Rule{
	{Name: "groups+layout", Key: "cluster.groups",
		Applies: func(s *Scenario) bool { return s.groups() && s.wideLayout() },
		Reason:  "groups are TP-only for now; remove cluster.dp, cluster.ep and cluster.pp"},
	{Name: "disagg+rollout", Key: "disagg.enabled",
		Applies: func(s *Scenario) bool { return s.Disagg.Enabled && s.Rollout.Enabled },
		// Not meaningless, not modelled: the green pool would be the last
		// replicas of each pool, and a green prefill would hand off to a
		// green decode replica only (per-version queues between the
		// pools, and the judge reading the decode outcomes).
		Reason: "cannot be combined with [rollout] yet (a new version runs in both pools, and a request's decode must run the version of its prefill, whose KV it reads: the decode choice does not model versions)"},
	{Name: "disagg+groups", Key: "cluster.groups",
		Applies: func(s *Scenario) bool { return s.Disagg.Enabled && s.groups() },
		Reason:  "cannot be combined with [disagg] yet ([[cluster.groups]])"},
}

// checkRules reports every rule the scenario breaks.
func (s *Scenario) checkRules(ps *config.Problems) {
	for _, r := range Rules {
		if !r.Applies(s) {
			continue
		}
		key, reason := r.Key, r.Reason
		if r.KeyOf != nil {
			key = r.KeyOf(s)
		}
		if r.ReasonOf != nil {
			reason = r.ReasonOf(s)
		}
		ps.Add(key, "%s", reason)
	}
}
