package training

import "github.com/fleetsim/fleetsim/sim"

// The events of a training job's timeline (training_timeline.csv's event
// column; Events lists them, and fleetsim plot reads no others).
const (
	EventStart        = "start"
	EventFailure      = "failure"       // a failure stopped, or hit, the job
	EventFailSlow     = "fail-slow"     // a straggler began
	EventStragglerEnd = "straggler-end" // a straggler ended
	EventEvicted      = "evicted"       // a straggler's host taken out (EvictStragglers)
	EventDetected     = "detected"      // the failure was detected
	EventRestarted    = "restarted"     // running again
	EventRepaired     = "repaired"      // a host back in the spare pool
	EventPlanned      = "planned"       // a planned stop (maintenance): checkpoint, then restart
	EventEnd          = "end"           // the horizon
)

// Events are the events a job's timeline holds; States (job.go) the
// states it can be in after one.
var Events = []string{EventStart, EventFailure, EventFailSlow, EventStragglerEnd, EventEvicted, EventDetected, EventRestarted, EventRepaired, EventPlanned, EventEnd}

// TracePoint is the job just after one of its events: a single run's
// timeline of progress, checkpoints, failures, restarts and waits for
// spares (Job.Trace). Progress between two points is closed form: while
// running, work grows at the job's speed and is committed at each
// checkpoint; while stopped, nothing moves.
type TracePoint struct {
	Time sim.Time `json:"time_ns"`
	// Event is one of Events.
	Event string `json:"event"`
	// Category is the failure's category (failure and fail-slow only).
	Category string `json:"category,omitempty"`
	// State is the job's state after the event.
	State string `json:"state"`
	// WorkS is the compute (seconds at full speed) done and not lost:
	// committed plus the work since the last checkpoint. A failure drops
	// it to CommittedS.
	WorkS float64 `json:"work_s"`
	// LostS is the work the event threw away (a failure of a running
	// job: everything since the last checkpoint); WorkS + LostS is the
	// work just before the event.
	LostS float64 `json:"lost_s,omitempty"`
	// CommittedS is the work saved by completed checkpoints.
	CommittedS float64 `json:"committed_s"`
	// Checkpoints is how many checkpoint writes have completed.
	Checkpoints int64 `json:"checkpoints"`
	// SparesAvailable are spare hosts ready; HostsOut the job's hosts out
	// for repair.
	SparesAvailable int `json:"spares_available"`
	HostsOut        int `json:"hosts_out"`
}

// Trace is the job's timeline so far: one point per event that changed
// or could change it, in time order.
func (j *Job) Trace() []TracePoint { return j.trace }

// mark appends a trace point for event at now; the caller has settled the
// job to now and applied the event.
func (j *Job) mark(now sim.Time, event, category string) { j.markLost(now, event, category, 0) }

// markLost is mark for an event that threw away lostS of work.
func (j *Job) markLost(now sim.Time, event, category string, lostS float64) {
	j.trace = append(j.trace, TracePoint{Time: now, Event: event, Category: category, State: j.state.String(), LostS: lostS,
		WorkS: j.acc.committed + j.ckpt.uncommittedS, CommittedS: j.acc.committed, Checkpoints: j.ckpt.done,
		SparesAvailable: j.hosts.spares, HostsOut: j.hosts.out})
}
