package scenario

import (
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/tomlx"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/workloads"
)

// DisaggScenario is a scenario's [disagg] table: disaggregated prefill and
// decode pools (fleet.DisaggConfig) and the decode pool's router.
type DisaggScenario struct {
	fleet.DisaggConfig
	// Router chooses the decode replica for each prefilled request among
	// those with room for its KV ([disagg.router], the keys of [router]).
	// Default "least-outstanding".
	Router policies.RouterConfig `toml:"router"`
	// Faults are scripted faults on decode replicas ([[disagg.faults]], the
	// keys of [[faults]] with replica indexing the decode pool), in the
	// modes DecodeFaultModes. A decode replica that fails loses its
	// requests' KV; they are prefilled again. [policies.probe] watches the
	// decode pool as it does the prefill pool; without deep probes a hang
	// needs duration_s > 0 (nothing else would end it), and a crash with
	// restart_s = 0 stays down unless a probe restarts it.
	Faults []failures.Scripted `toml:"faults"`
	// Autoscale scales the decode pool on its own signal ([disagg.autoscale],
	// the keys of [autoscale]; disagg.decode.replicas is the most it grows
	// to): its replicas' load plus the prefilled requests waiting for room
	// on one. [autoscale] scales the prefill pool. Default off.
	Autoscale policies.AutoscaleConfig `toml:"autoscale"`
}

// DecodeFaultModes are the scripted fault modes a decode replica takes.
var DecodeFaultModes = []string{failures.Fail, failures.Hang, failures.OOM, failures.Slow}

// DefaultDisaggScenario is [disagg] with every default (off).
func DefaultDisaggScenario() DisaggScenario {
	return DisaggScenario{DisaggConfig: fleet.DefaultDisaggConfig(), Router: policies.DefaultRouterConfig(),
		Autoscale: policies.DefaultAutoscaleConfig()}
}

// disaggCluster is the prefill pool as the runner builds it: the cluster
// with the failures' warm spares.
func (s *Scenario) disaggCluster() fleet.FleetConfig {
	c := s.Cluster
	if s.Failures.Enabled && s.Failures.Spares > 0 {
		c.Replicas += s.Failures.Spares
	}
	return c
}

// DecodeReplicas is the decode pool as the runner builds it: its serving
// replicas and the failures' warm decode spares.
func (s *Scenario) DecodeReplicas() int {
	n := s.Disagg.Decode.Replicas
	if s.Failures.Enabled && s.Failures.DecodeSpares > 0 {
		n += s.Failures.DecodeSpares
	}
	return n
}

// DecodePrice is what a decode-pool GPU costs per hour, as the runs bill
// it: the scenario's price (Price: cost.price_per_gpu_hour, or the
// cluster GPU's price for the tier) when the decode pool is on the
// cluster's GPU, else the decode GPU's catalog price for the tier
// (cost.price_per_gpu_hour prices the cluster's GPU).
func (s *Scenario) DecodePrice() float64 {
	d := s.Disagg.DisaggConfig
	d.ResolveDefaults(s.Cluster)
	if d.Decode.GPU == s.Cluster.GPU {
		return s.Price()
	}
	g := s.Catalog().GPUs[d.Decode.GPU]
	if s.Cost.Tier == TierReserved {
		return g.ReservedPricePerGPUHour
	}
	return g.PricePerGPUHour
}

// validateDisagg records the problems of [disagg] when it is enabled.
func (s *Scenario) validateDisagg(ps *config.Problems) {
	d := &s.Disagg
	if !d.Enabled {
		if s.Failures.Enabled && s.Failures.DecodeSpares > 0 {
			ps.Add("failures.decode_spares", "needs a disaggregated fleet ([disagg] enabled = true), found %d", s.Failures.DecodeSpares)
		}
		if d.Autoscale.Enabled {
			ps.Add("disagg.autoscale.enabled", "scales a disaggregated fleet's decode pool: it needs [disagg] enabled = true")
		}
		return
	}
	cluster := s.disaggCluster()
	d.ResolveDefaults(cluster)
	dv := d.DisaggConfig
	dv.Decode.Replicas = s.DecodeReplicas()
	dv.Validate(s.Catalog(), cluster, "disagg", ps)
	d.Router.Validate("disagg.router", ps)
	if s.Cluster.Replica.Spec.Enabled {
		// The prefill pool computes one token per request: nothing to
		// speculate. The decode pool takes it.
		ps.Add("cluster.replica.speculative.enabled", "the prefill pool of a disaggregated fleet has no decode steps to speculate on; set [disagg.decode.replica.speculative] instead")
	}
	for i := range d.Faults {
		fc := &d.Faults[i]
		key := fmt.Sprintf("disagg.faults.%d", i)
		fc.Validate(key, d.Decode.Replicas, ps)
		ok := false
		for _, m := range DecodeFaultModes {
			ok = ok || fc.Mode == m
		}
		if !ok {
			ps.Add(config.Key(key, "mode"), "a decode replica takes one of %v for now, found %q", DecodeFaultModes, fc.Mode)
		}
		if fc.Mode == failures.Hang && !(fc.DurationS > 0) && s.Policies.Probe.Kind != "deep" {
			ps.Add(config.Key(key, "duration_s"), "a decode replica's hang needs a duration > 0 unless deep probes ([policies.probe] kind = \"deep\") watch the pools, found %v", fc.DurationS)
		}
	}
	if a := &d.Autoscale; a.Enabled {
		a.Validate("disagg.autoscale", d.Decode.Replicas, ps)
		if a.Policy == policies.ScaleSchedule && s.Workload.Kind == workloads.KindTrace {
			ps.Add("disagg.autoscale.policy", "%q reads the workload's rate profile; a trace has none (use \"target\" or \"slo\")", policies.ScaleSchedule)
		}
	}
	// Stochastic failures fall on one topology holding both pools: the
	// decode pool's GPUs after the prefill pool's, in domains of one size.
	if s.Failures.Enabled {
		cat := s.Catalog()
		gp, okP := cat.GPUs[cluster.GPU]
		gd, okD := cat.GPUs[d.Decode.GPU]
		if okP && okD && gp.DomainGPUs != gd.DomainGPUs {
			ps.Add("disagg.decode.gpu", "[failures] on a disaggregated fleet needs both pools' GPUs in NVLink domains of one size (one failure topology), found %s (%d GPUs) and %s (%d GPUs)",
				gp.Name, gp.DomainGPUs, gd.Name, gd.DomainGPUs)
		}
	}
}

// applyDisaggFaultDefaults gives each [[disagg.faults]] table the defaults
// of the keys it does not set, as applyFaultDefaults does for [[faults]].
func applyDisaggFaultDefaults(sc *Scenario, doc *tomlx.Doc) {
	def := failures.DefaultScripted()
	for i := range sc.Disagg.Faults {
		f := &sc.Disagg.Faults[i]
		has := func(k string) bool { return doc != nil && doc.Has(fmt.Sprintf("disagg.faults.%d.%s", i, k)) }
		if !has("factor") {
			f.Factor = def.Factor
		}
		if !has("restart_s") {
			f.RestartS = def.RestartS
		}
		if !has("cold_start_s") {
			f.ColdStartS = def.ColdStartS
		}
	}
}
