package fleet

import (
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/hw"
)

// Layout is the fleet's replica layout (unset degrees 1).
func (c *FleetConfig) Layout() hw.Layout {
	return hw.Layout{TP: c.TP, DP: c.DP, EP: c.EP, PP: c.PP}.Norm()
}

// GPUsPerReplica is tp·dp·pp.
func (c *FleetConfig) GPUsPerReplica() int { return c.Layout().GPUs() }

// Deployment is the replica's layout, routing and speculation.
func (c *FleetConfig) Deployment() hw.Deployment {
	return hw.Deployment{Layout: c.Layout(), MoE: c.Replica.MoE, Spec: c.Replica.Spec, Compute: hw.Precision(c.Replica.Compute)}
}

// validateLayout checks dp and ep against the GPU and model
// (CheckDeployment): a replica of tp·dp GPUs fits in one NVLink domain (as
// many as fit are packed in each; a 64-GPU replica on an NVL72 rack leaves
// 8 GPUs spare) or takes whole domains.
func (c *FleetConfig) validateLayout(gpu hw.GPU, llm hw.LLM, known bool, prefix string, ps *config.Problems) {
	if c.DP < 0 {
		ps.Add(config.Key(prefix, "dp"), "must be >= 1 (0: 1), found %d", c.DP)
	}
	if c.EP < 0 {
		ps.Add(config.Key(prefix, "ep"), "must be >= 1 (0: 1), found %d", c.EP)
	}
	if c.PP < 0 {
		ps.Add(config.Key(prefix, "pp"), "must be >= 1 (0: 1), found %d", c.PP)
	}
	if !known || c.TP <= 0 || c.DP < 0 || c.EP < 0 || c.PP < 0 || c.TP > gpu.DomainGPUs || gpu.DomainGPUs%c.TP != 0 || hw.CheckTP(llm, c.TP) != nil {
		return // reported under tp
	}
	l := c.Layout()
	if l.PP > 1 {
		if err := hw.CheckDeployment(gpu, llm, l); err != nil {
			ps.Add(config.Key(prefix, "pp"), "%v", err)
		}
		if c.Replica.Spec.On() {
			ps.Add(config.Key(prefix, "replica", "speculative", "enabled"), "speculative decoding with pipeline stages (pp = %d) is not modelled", l.PP)
		}
		return
	}
	if l.EP > 1 && !llm.IsMoE() {
		ps.Add(config.Key(prefix, "ep"), "%s is dense; expert parallelism needs a mixture-of-experts model", llm.Name)
		return
	}
	if l.EP > 1 && l.EP != l.GPUs() {
		ps.Add(config.Key(prefix, "ep"), "must equal tp·dp = %d (experts spread over all the replica's GPUs), found %d", l.GPUs(), l.EP)
		return
	}
	if l.EP > 1 && llm.Experts%l.EP != 0 {
		ps.Add(config.Key(prefix, "ep"), "EP=%d does not divide %s's %d experts", l.EP, llm.Name, llm.Experts)
		return
	}
	if err := hw.CheckDeployment(gpu, llm, l); err != nil {
		ps.Add(config.Key(prefix, "dp"), "%v", err)
	}
}
