// Package policies holds fleetsim's decisions: implementations of the small
// interfaces the models (mostly models/fleet) declare at each decision
// point, and a registry that builds them by name from typed configuration.
//
// A policy reads a read-only snapshot and returns a decision; it never
// mutates fleet state (a policy may keep private state of its own, such as a
// round-robin cursor). Nothing here reads the wall clock, sleeps or starts a
// goroutine, and every random choice draws from a *rand.Rand (math/rand/v2)
// that the caller injects, normally the named stream "router" from
// sim.NewStream, so that adding or changing a policy never shifts another
// component's draws.
//
// # Routers
//
// Each router implements fleet.Router and lives in its own file:
//
//	round-robin        RoundRobin        roundrobin.go
//	random             Random            random.go
//	least-outstanding  LeastOutstanding  leastoutstanding.go
//	p2c                PowerOfTwo        p2c.go
//	least-kv           LeastKV           leastkv.go
//	prefix-affinity    PrefixAffinity    prefixaffinity.go
//	weighted-least-outstanding  WeightedLeastOutstanding  weighted.go
//	cost-aware         CostAware         costaware.go (size-aware, fleets of groups)
//
// Every router returns ok=false when no replica in the snapshot is
// Available, and none allocates on the hot path (Route is called once per
// request, over fleets of up to about 1,000 replicas). Read registry.go for
// RouterConfig (the [router] table of a scenario), its defaults and
// validation, and NewRouter, which builds a router by name.
//
// # Autoscaling
//
// autoscale.go holds AutoscaleConfig (a scenario's [autoscale] table) and
// the fleet.ScalePolicy implementations, registered in Scalers: target
// tracking on a load metric (TargetScaler), step scaling on the observed
// p99 TTFT (SLOScaler) and a predictive policy that reads the workload's
// rate profile ahead (ScheduleScaler).
package policies
