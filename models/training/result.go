package training

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/models/failures"
)

// LostGPUHours splits the GPU-hours that did not become kept training
// progress. The parts and Result.ProductiveGPUHours sum to GPUs × wall
// hours.
type LostGPUHours struct {
	// Recompute: work done since the last completed checkpoint and lost at
	// a failure (the work a restart must redo).
	Recompute float64 `json:"recompute"`
	// Restart: restart overhead, including restarts aborted by a failure.
	Restart float64 `json:"restart"`
	// Detection: stopped, failure not yet detected.
	Detection float64 `json:"detection"`
	// WaitingSpares: detected, waiting for repaired hosts.
	WaitingSpares float64 `json:"waiting_spares"`
	// CheckpointWrites: blocking checkpoint writes, including any cut short.
	CheckpointWrites float64 `json:"checkpoint_writes"`
	// Slowdown: compute time lost to stragglers running below full speed.
	Slowdown float64 `json:"slowdown"`
	// Total is the sum of the above.
	Total float64 `json:"total"`
}

// Result is what one run of a job produced.
type Result struct {
	GPUs      int     `json:"gpus"`
	WallHours float64 `json:"wall_hours"`
	// ETTR is the effective training time ratio: productive time over
	// wall-clock time (Meta RSC's definition, CALIBRATION.md §1). Work done
	// since the last checkpoint when the horizon ends counts as productive.
	ETTR float64 `json:"ettr"`
	// CheckpointIntervalS is the compute time between checkpoints.
	CheckpointIntervalS float64 `json:"checkpoint_interval_s"`
	// Failures counts every failure that hit the job's GPUs, by category
	// (fail-slow ones included; Llama 3 counts each as an interruption).
	Failures           int              `json:"failures"`
	FailuresByCategory []failures.Count `json:"failures_by_category"`
	// Interruptions counts the failures that stopped a running or
	// restarting job; the others hit it while already stopped, or were
	// fail-slow (FailSlow of them).
	Interruptions           int              `json:"interruptions"`
	InterruptionsByCategory []failures.Count `json:"interruptions_by_category"`
	FailSlow                int              `json:"fail_slow"`
	// SpareWaits is how many restarts had to wait for spares;
	// MinSparesAvailable the smallest the pool got after a restart;
	// MaxHostsOut the most job hosts out for repair at once.
	SpareWaits         int `json:"spare_waits"`
	MinSparesAvailable int `json:"min_spares_available"`
	MaxHostsOut        int `json:"max_hosts_out"`
	// Evictions counts the stragglers evicted (Config.EvictStragglers)
	// and OverEvictedHosts the healthy hosts evicted with a suspect one
	// (Config.OverEvictHosts); both omitted when 0.
	Evictions        int `json:"evictions,omitempty"`
	OverEvictedHosts int `json:"over_evicted_hosts,omitempty"`
	// Planned counts the planned stops (Config.PlannedEveryHours), those
	// that found the job already stopped included; not in Interruptions,
	// which are failures. Omitted when 0.
	Planned int `json:"planned,omitempty"`
	// Retired counts the servers retired by the detection policy
	// (Config.RetireAfterFailures), RetiredLemons those of them that were
	// lemons, and RetiredGPUHours the capacity they took out of the spare
	// pool up to the horizon (each retired server's GPUs × the hours
	// left): the policy's cost. Omitted when 0.
	Retired            int          `json:"retired,omitempty"`
	RetiredLemons      int          `json:"retired_lemons,omitempty"`
	RetiredGPUHours    float64      `json:"retired_gpu_hours,omitempty"`
	ProductiveGPUHours float64      `json:"productive_gpu_hours"`
	Lost               LostGPUHours `json:"lost_gpu_hours"`
	PricePerGPUHour    float64      `json:"price_per_gpu_hour"`
	CostUSD            float64      `json:"cost_usd"`
	LostUSD            float64      `json:"lost_usd"`
	FinalState         string       `json:"final_state"`
}

// Result books the time up to the horizon and reports. Call it once, after
// the engine has run to Horizon.
func (j *Job) Result() Result {
	if !j.done {
		j.settle(max(j.horizon, j.since))
		j.mark(max(j.horizon, j.since), EventEnd, "")
		j.done = true
	}
	a := j.acc
	gh := float64(j.cfg.GPUs) / 3600
	productive := a.committed
	if j.state == Running {
		productive += j.ckpt.uncommittedS
	}
	l := LostGPUHours{Recompute: a.recompute * gh, Restart: a.restart * gh, Detection: a.detection * gh,
		WaitingSpares: a.waiting * gh, CheckpointWrites: a.checkpoint * gh, Slowdown: a.slowdown * gh}
	if j.state != Running { // work since the last checkpoint is lost if stopped at the end
		l.Recompute += j.ckpt.uncommittedS * gh
	}
	l.Total = l.Recompute + l.Restart + l.Detection + l.WaitingSpares + l.CheckpointWrites + l.Slowdown
	wall := j.cfg.HorizonHours * 3600
	r := Result{
		GPUs: j.cfg.GPUs, WallHours: wall / 3600, CheckpointIntervalS: j.ckpt.intervalS,
		Failures: j.count.nFail, FailuresByCategory: countList(j.count.failures),
		Interruptions: j.count.nInterrupt, InterruptionsByCategory: countList(j.count.interrupts), FailSlow: j.count.nSlow,
		Evictions: j.count.evictions, OverEvictedHosts: j.count.overEvicted, Planned: j.count.planned,
		Retired: j.count.retired, RetiredLemons: j.count.retiredLemons, RetiredGPUHours: j.retiredGPUHours,
		SpareWaits: j.hosts.waits, MinSparesAvailable: j.hosts.minSpares, MaxHostsOut: j.hosts.maxOut,
		ProductiveGPUHours: productive * gh, Lost: l, PricePerGPUHour: j.cfg.PricePerGPUHour,
		FinalState: j.state.String(),
	}
	if wall > 0 {
		r.ETTR = productive / wall
	}
	r.CostUSD = float64(j.cfg.GPUs) * r.WallHours * j.cfg.PricePerGPUHour
	r.LostUSD = l.Total * j.cfg.PricePerGPUHour
	return r
}

func countList(m map[string]int) []failures.Count {
	out := make([]failures.Count, 0, len(m))
	for k, v := range m {
		out = append(out, failures.Count{Name: k, Incidents: v})
	}
	slices.SortFunc(out, func(a, b failures.Count) int {
		if c := cmp.Compare(b.Incidents, a.Incidents); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// String is a one-line summary.
func (r Result) String() string {
	return fmt.Sprintf("ETTR %.2f%%, %d failures (%d interruptions), lost %.0f GPU-h", 100*r.ETTR, r.Failures, r.Interruptions, r.Lost.Total)
}
