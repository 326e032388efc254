package policies

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// AdmitLeastLoadedTokens names LeastLoadedTokensAdmitter.
const AdmitLeastLoadedTokens = "least-loaded-tokens"

// LeastLoadedTokensAdmitter admits a request while at least one available
// replica has fewer than Limit outstanding tokens (leading): unlike "tokens",
// which sheds on the fleet's mean, one overloaded replica does not shed load
// that a router could still place on an idle one, and a fleet whose every
// replica is past the limit sheds even if the mean is pulled down by none.
type LeastLoadedTokensAdmitter struct{ max float64 }

var _ fleet.Admitter = (*LeastLoadedTokensAdmitter)(nil)

func newLeastLoadedTokensAdmitter(c AdmissionConfig, _ Env) (fleet.Admitter, error) {
	return &LeastLoadedTokensAdmitter{max: c.Limit}, nil
}

// Admit implements fleet.Admitter.
func (a *LeastLoadedTokensAdmitter) Admit(_ *workloads.Request, rs []engine.ReplicaState, _ sim.Time) bool {
	for i := range rs {
		if rs[i].Available && float64(rs[i].OutstandingTokens) < a.max {
			return true
		}
	}
	return false
}

// Observe implements fleet.Admitter.
func (a *LeastLoadedTokensAdmitter) Observe(sim.Time, float64) {}
