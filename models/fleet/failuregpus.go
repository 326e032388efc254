package fleet

import "github.com/fleetsim/fleetsim/models/hw"

// topologyGPUs is the GPUs of domains failure domains of domainGPUs GPUs
// each, as the failure topology counts them (failures.HGX: 8-GPU servers;
// failures.NVL72: 72-GPU racks); at least one domain.
func topologyGPUs(domains, domainGPUs int) int {
	if domainGPUs != 72 {
		domainGPUs = 8
	}
	return max(domains, 1) * domainGPUs
}

// FailureGPUs is the GPUs failures strike in a fleet built from c (its
// replicas as the runner builds them: warm spares included, a fleet of
// groups with its spare groups): whole NVLink domains, HGX servers or
// NVL72 racks, of each group's own placement, as failures.Applier.Start
// draws on the built fleet. Pure, so that validation counts the same GPUs
// before any fleet exists. 0 when a GPU is unknown (its own problem).
func (c FleetConfig) FailureGPUs(cat *hw.Catalog) int {
	if len(c.Groups) == 0 {
		gpu, ok := cat.GPUs[c.GPU]
		if !ok || gpu.DomainGPUs < 1 {
			return 0
		}
		p := placement(c, gpu.DomainGPUs)
		return topologyGPUs(p.Domains, p.DomainGPUs)
	}
	n := 0
	for _, g := range c.Groups {
		gpu, ok := cat.GPUs[g.GPU]
		if !ok || gpu.DomainGPUs < 1 {
			return 0
		}
		if g.Replicas <= 0 {
			continue
		}
		sub := c
		sub.Groups = nil
		sub.GPU, sub.TP, sub.Replicas = g.GPU, g.TP, g.Replicas
		p := placement(sub, gpu.DomainGPUs)
		n += topologyGPUs(p.Domains, p.DomainGPUs)
	}
	return n
}

// FailureGPUs is FleetConfig.FailureGPUs of a disaggregated fleet of
// prefill pool cluster and c's decode pool: one topology holding both
// (Disagg.FailureDomains).
func (c DisaggConfig) FailureGPUs(cat *hw.Catalog, cluster FleetConfig) int {
	gp, okP := cat.GPUs[cluster.GPU]
	gd, okD := cat.GPUs[c.Decode.GPU]
	if !okP || !okD || gp.DomainGPUs < 1 || gd.DomainGPUs < 1 || cluster.Replicas <= 0 || cluster.TP <= 0 {
		return 0
	}
	d, g := newDisaggTopology(cluster, gp, c.Decode, gd, c.Link).failureDomains()
	return topologyGPUs(d, g)
}
