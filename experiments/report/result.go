package report

import (
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/training"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Result is one run's raw outcome, before summarising.
type Result struct {
	Scenario *scenario.Scenario
	Fleet    *fleet.Fleet
	Rec      *fleet.Recorder
	Events   uint64
	EndTime  sim.Time
	Failures *FailureStats  // nil when failures are off
	Training *TrainingStats // training mode only
	// TrainingTrace is the training job's timeline (training mode only).
	TrainingTrace []training.TracePoint
	Timeline      []failures.TimelinePoint // replicas failing and coming back (with [failures])
	// DownGPUSeconds is the GPU-seconds of serving replicas out of service (with
	// [failures]; each replica's own GPUs in a fleet of groups).
	DownGPUSeconds float64
	// IdleSpareS is replica-seconds of warm spares waiting unused;
	// SpareRepairS of replicas repaired while a spare held their place.
	IdleSpareS, SpareRepairS float64
	// SpareRepairGPUSeconds is SpareRepairS in GPU-seconds (each replica's
	// own GPUs); IdleSpareSOf is IdleSpareS by replica (nil without
	// spares), which prices a fleet of groups' spares at their group's
	// price.
	SpareRepairGPUSeconds float64
	IdleSpareSOf          []float64
	// Stopped says why the run stopped early ("overload: ..."), or "".
	Stopped string
}

// RepResult is what one replication leaves for aggregation and output.
type RepResult struct {
	Index   int
	Seed    uint64
	Summary *Summary
	// Latency sketches, for pooled CDFs across replications.
	TTFT, TPOT, ITL, E2E *quantile.Sketch
	// TTFTSplit is a disaggregated fleet's TTFT by stage (disagg.go's
	// ttftStages), nil when co-located.
	TTFTSplit map[string]*quantile.Sketch
	// Samples is the fleet time series and Timeline its failures (kept for
	// replication 0 only).
	Samples  []fleet.Sample
	Timeline []failures.TimelinePoint
	// TrainingTrace is a training job's timeline (replication 0 only).
	TrainingTrace []training.TracePoint
}
