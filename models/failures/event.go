package failures

import "github.com/fleetsim/fleetsim/sim"

// NoPrecursor is Event.Precursor when no precursor signal is seen.
const NoPrecursor sim.Time = -1

// Event is one failure. Events are values; a Source yields them in
// nondecreasing Time order.
type Event struct {
	// Time is when the unit fails.
	Time sim.Time
	// Category is the profile row (for a replayed log, "Level/Class").
	Category string
	// Label is the source's wording (a Table 5 row, a log's Desc).
	Label     string
	Component Component
	Mode      Mode
	// Scope and Unit name the failed unit: GPU, host, domain or rack index
	// in the Topology (for ScopeProcess, the GPU whose process fails).
	Scope Scope
	Unit  int
	// FirstGPU and GPUs are the failed unit's GPUs, [FirstGPU,
	// FirstGPU+GPUs): the hardware blast radius. A consumer widens it to
	// what depends on those GPUs (a TP group, a job).
	FirstGPU, GPUs int
	// DownFirstGPU and DownGPUs are the GPUs out of service for Repair: the
	// failed unit widened to its host when the action reboots the node or
	// replaces a part (an SXM GPU is swapped with its server down); none
	// for restart-app or a fail-slow unit (degraded, not down). A replayed
	// log takes its node out whatever the mode.
	DownFirstGPU, DownGPUs int
	// Xid is the NVIDIA Xid code reported, 0 for none.
	Xid int
	// Action is the recommended repair action.
	Action Action
	// Repair is how long the unit is out of service from Time (0 for
	// restart-app; for ModeFailSlow, how long the slowdown lasts).
	Repair sim.Time
	// SpeedFraction is, for ModeFailSlow, the unit's fraction of normal
	// speed while it lasts; 1 otherwise.
	SpeedFraction float64
	// NVLinkFraction is, for ModeNVLinkDegraded, the NVLink bandwidth the
	// domain keeps while it lasts (e.g. 8/9 with one NVL72 switch tray of
	// 9 out); 1 otherwise.
	NVLinkFraction float64
	// RepairPath is the escalation stages the repair went through
	// ("reset>reboot"), when the profile escalates; "" otherwise.
	RepairPath string
	// Precursor is when a precursor signal was seen (<= Time), or
	// NoPrecursor.
	Precursor sim.Time
}

// End is when the unit is back in service.
func (e *Event) End() sim.Time { return e.Time + e.Repair }

// HasPrecursor reports whether a precursor signal was seen.
func (e *Event) HasPrecursor() bool { return e.Precursor != NoPrecursor }

// Hits reports whether the event's GPUs intersect [first, first+n).
func (e *Event) Hits(first, n int) bool {
	return e.FirstGPU < first+n && first < e.FirstGPU+e.GPUs
}

// Source yields failure events in nondecreasing time order. Next returns
// ok=false when the source is exhausted or failed; Err then says which (nil:
// exhausted). Generators never fail and never end while any rate is > 0;
// consumers stop pulling at their horizon. A consumer pulls one event, schedules
// it on the engine, and pulls the next when it fires: O(failures) events.
type Source interface {
	Next() (Event, bool)
	Err() error
}
