// Package fleet is the serving fleet: its pools of replicas, the gateway
// that routes over them, and the mechanisms that change what serves (health
// probes, rollouts, autoscaling, spot capacity, disaggregation). One replica
// is package models/engine; the hardware and model catalog, layouts and the
// step-time model are package models/hw.
//
// Decision points are small interfaces declared here with the read-only
// snapshot they see (Router in router.go over engine.ReplicaState, the
// gateway's policies in policy.go); implementations live in package
// policies.
//
// The fleet is wired from parts with one job each (NewFleet in fleet.go
// connects them; Fleet embeds them, so their methods are the fleet's). What
// faults do to the fleet (scripted and stochastic, spares, availability)
// is package models/failures.
//
//	fleet.go             FleetConfig and placement; Fleet and its constructor
//	pool.go              Pool, one pool of replicas (the primary pool, a
//	                     disaggregated fleet's decode pool): the replicas,
//	                     their routing snapshot and availability (up, not
//	                     held, breaker not open), its circuit breaker, drains
//	lifecycle.go         the one owner of provisioning state: each
//	                     mechanism's Hold on a replica (probes, maintenance,
//	                     repairs, rollouts, spot, the autoscaler, spares)
//	gateway.go           Gateway: client requests and their copies, the
//	                     replicas' Observer, routing over the fleet's pools
//	                     (primary, fallback, decode; Pool.Base numbers them)
//	route_index.go       the routing index: IndexedRouter's decision (least
//	                     outstanding, least KV, weighted) in O(log n) per change
//	gateway_policies.go  Policies; admission, timeouts, hedges, breakers
//	gateway_queue.go     late binding: the gateway's queue while no replica
//	                     has a free slot (QueuePolicy; Erlang C for M/M/c)
//	fanout.go            fan-out: a client request of K sub-requests, done
//	                     when the last is (FanOutStats)
//	health.go            Health: probes, ejection, time to isolate a fault
//	sampling.go          Sampler: the time series and the drain limit
//	intake.go            the workload, pulled one request at a time
//	rollout.go           a blue-green rollout: traffic split and judge
//	autoscale.go         Autoscaler: parks, starts (cold start) and drains
//	                     replicas as a ScalePolicy asks; provisioned time
//	coldstart.go         ColdStartConfig: provisioning + engine start +
//	                     weight load over its path + warm-up
//	metrics.go           Recorder: outcome counts and latency sketches
//	fleet_layout.go      the fleet's layout (hw.Layout) and its validation
//	fleet_kvtier.go      KV tiers on the fleet's replicas, and the PrefixIndex
//	                     routers read
//	disagg*.go           disaggregation: the decode pool, the KV hand-off and
//	                     its links, the decode pool's health and breakers
package fleet
