package engine

import "github.com/fleetsim/fleetsim/sim"

// ReplicaStats are a replica's counters, read at the end of a run.
type ReplicaStats struct {
	Steps           int64   // steps executed (a decode run of k steps counts k)
	Events          int64   // step events fired
	Preemptions     int64   // sequences preempted (recompute)
	PrefillTokens   int64   // prompt tokens computed (excluding cache hits, including recompute)
	DecodeTokens    int64   // output tokens generated
	PromptTokens    int64   // prompt tokens at first admission
	CachedTokens    int64   // of which served by the prefix cache
	BusyNs          int64   // time with a step in progress
	KVUsedBlockNs   float64 // ∫ used blocks dt, for time-weighted utilisation
	KVCachedBlockNs float64 // ∫ cached blocks dt
	FragNs          float64 // ∫ external fragmentation dt (contiguous allocator)
	OOMCrashes      int64   // worker crashes: a contiguous allocation failed for fragmentation
	FragAtOOM       float64 // the largest fragmentation seen at such a failure
	FLOPs           float64 // model FLOPs done by one GPU of the group (for MFU)
	// Work on copies that were cancelled or failed: prompt tokens prefilled
	// and output tokens generated for nothing.
	WastedPrefillTokens int64
	WastedDecodeTokens  int64
	// CancelledTokens is the part of that work on copies the gateway
	// withdrew (losing hedges, timed-out requests), as opposed to failed.
	CancelledTokens   int64
	Cancelled, Failed int64 // copies
}

// account integrates time-weighted statistics up to now.
func (r *Replica) account(now sim.Time) {
	dt := float64(now - r.lastT)
	if dt > 0 {
		r.Stats.KVUsedBlockNs += dt*float64(r.kv.Used()) + r.runGrowth(r.lastT, now)
		r.Stats.KVCachedBlockNs += dt * float64(r.kv.Cached())
		if r.kv.contiguous { // (paged KV has none: the call would add 0)
			r.Stats.FragNs += dt * r.kv.Fragmentation()
		}
	}
	r.lastT = now
}

// BusyNsAt is Stats.BusyNs with the step or decode run under way counted
// up to now (Stats.BusyNs counts a step when it ends). A hung replica's
// stalled step never ends and is not counted.
func (r *Replica) BusyNsAt(now sim.Time) int64 {
	b := r.Stats.BusyNs
	if r.busy && !r.hung && !r.down && now > r.runStart {
		b += int64(now - r.runStart)
	}
	return b
}

// Finish closes time-weighted statistics at now (end of the run).
func (r *Replica) Finish(now sim.Time) { r.account(now) }
