package scenario

import (
	"fmt"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
)

// ProfileWarnings lists every pool whose replica lies outside what its
// engine profile was fitted on (hw.ProfileDomain): another GPU, compute
// precision, dense/MoE kind or a model size more than twice away; and
// every pool on a GPU not NVIDIA's (AMD's), whatever its profile. A fit
// carries over to those only as well as README "Calibrating to your engine" measures,
// so the run goes on and the user is told (on stderr). Nil for profiles
// that record no domain.
func (s *Scenario) ProfileWarnings() []string {
	cat := s.Catalog()
	var out []string
	var check func(where string, c fleet.FleetConfig)
	check = func(where string, c fleet.FleetConfig) {
		if len(c.Groups) > 0 {
			for i, g := range c.Groups {
				sub := c
				sub.Groups, sub.GPU, sub.Model, sub.TP = nil, g.GPU, g.Model, g.TP
				sub.Replica = c.GroupReplica(i)
				check(fmt.Sprintf("%s.groups.%d (%s)", where, i, g.Name), sub)
			}
			return
		}
		gpu, okG := cat.GPUs[c.GPU]
		llm, okM := cat.LLMs[c.Model]
		pp, okP := cat.Profiles[c.Replica.Perf.Profile]
		if !okG || !okM || !okP {
			return
		}
		compute := hw.Precision(c.Replica.Compute)
		if compute == "" {
			compute = hw.DefaultCompute(gpu, hw.Precision(c.Replica.Weights))
		}
		whys := pp.Domain.Outside(gpu, llm, compute)
		if !gpu.IsNVIDIA() && pp.Domain.Empty() {
			// Every profile's constants come from NVIDIA engines, whether
			// or not it records its domain.
			whys = append(whys, fmt.Sprintf("GPU %s (%s; the profiles were fitted on NVIDIA GPUs only)", gpu.Name, gpu.Vendor))
		}
		for _, why := range whys {
			out = append(out, fmt.Sprintf("%s: engine profile %q was not fitted on %s; its constants carry over only as README \"Engine profiles\" measures", where, pp.Name, why))
		}
	}
	check("cluster", s.Cluster)
	if s.Disagg.Enabled {
		check("disagg.decode", s.Disagg.Decode)
	}
	if s.Fallback.Enabled {
		check("fallback", s.Fallback.FleetConfig)
	}
	return out
}
