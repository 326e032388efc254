package results

import (
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/training"
)

// The vocabularies of the files' event and state columns, declared where
// their events are written and gathered here, so that a reader (fleetsim
// plot) accepts exactly what the writers write.
var (
	// FailureEvents are failures.csv's events: a serving fleet's failure
	// timeline and spot interruptions.
	FailureEvents = slices.Concat(failures.TimelineEvents, fleet.SpotEvents)
	// TrainingEvents and TrainingStates are training_timeline.csv's
	// events and job states.
	TrainingEvents = training.Events
	TrainingStates = training.States
)

// oneOf is a column meaning that lists its vocabulary.
func oneOf(vocab []string, after string) string {
	return "one of " + strings.Join(vocab, ", ") + after
}

// Column is one fixed column of a results file.
type Column struct {
	Name    string // header name
	Unit    string // "" for a label or count without unit
	Meaning string // one line
}

// File is one CSV file of a run directory.
type File struct {
	Name    string   // file name in the run directory
	Meaning string   // what a row is
	Columns []Column // fixed columns, in header order
	// Before and After say how the dynamic columns before and after the
	// fixed ones are named; "" when there are none.
	Before, After string
	// Optional are trailing columns written only in some runs (After names
	// when); readers treat them as absent otherwise.
	Optional []Column
}

// Names are the file's fixed column names, in order.
func (f *File) Names() []string {
	out := make([]string, len(f.Columns))
	for i, c := range f.Columns {
		out[i] = c.Name
	}
	return out
}

// Header is the file's header: before, the fixed columns, then after.
func (f *File) Header(before, after []string) []string {
	h := make([]string, 0, len(before)+len(f.Columns)+len(after))
	h = append(h, before...)
	h = append(h, f.Names()...)
	return append(h, after...)
}

// Leading is the dynamic columns of header that come before the file's
// first fixed column (the swept keys of sweep.csv and ettr.csv); nil when
// that column is missing.
func (f *File) Leading(header []string) []string {
	i := slices.Index(header, f.Columns[0].Name)
	if i < 0 {
		return nil
	}
	return header[:i:i]
}

// Column names. A name used by several files means the same there.
const (
	Arm                 = "arm"
	Metric              = "metric"
	Quantile            = "quantile"
	ValueMs             = "value_ms"
	Replication         = "replication"
	Seed                = "seed"
	TimeS               = "time_s"
	ArrivalsPerS        = "arrivals_per_s"
	CompletionsPerS     = "completions_per_s"
	InFlight            = "in_flight"
	Waiting             = "waiting"
	KVUsedFrac          = "kv_used_frac"
	KVCachedFrac        = "kv_cached_frac"
	AvailableReplicas   = "available_replicas"
	ProvisionedReplicas = "provisioned_replicas"
	// ProvisionedSpotReplicas, dotted with a group's name, is a trailing
	// column of timeseries.csv (see TimeseriesFile.After).
	ProvisionedSpotReplicas = "provisioned_spot_replicas"
	// USDPerHour is timeseries.csv's spend rate; dotted with a group's
	// name, and SpotUSDPerHour so, trailing columns (TimeseriesFile.After).
	USDPerHour     = "usd_per_hour"
	SpotUSDPerHour = "spot_usd_per_hour"

	Replications              = "replications"
	TTFTP99Ms                 = "ttft_p99_ms"
	TTFTP99MsCI95             = "ttft_p99_ms_ci95"
	E2EP99Ms                  = "e2e_p99_ms"
	E2EP99MsCI95              = "e2e_p99_ms_ci95"
	GoodputRPS                = "goodput_rps"
	GoodputRPSCI95            = "goodput_rps_ci95"
	ThroughputRPS             = "throughput_rps"
	SLOAttainment             = "slo_attainment"
	SLOAttainmentCI95         = "slo_attainment_ci95"
	USDPerMonth               = "usd_per_month"
	USDPerMillionOutputTokens = "usd_per_million_output_tokens"
	TTFTP50Ms                 = "ttft_p50_ms"
	TTFTP50MsCI95             = "ttft_p50_ms_ci95"
	TPOTP50Ms                 = "tpot_p50_ms"
	TPOTP50MsCI95             = "tpot_p50_ms_ci95"
	TPOTP99Ms                 = "tpot_p99_ms"
	TPOTP99MsCI95             = "tpot_p99_ms_ci95"
	PrefixHitRate             = "prefix_hit_rate"
	PrefixHitRateCI95         = "prefix_hit_rate_ci95"
	Availability              = "availability"
	AvailabilityCI95          = "availability_ci95"
	SuccessRate               = "success_rate"
	SuccessRateCI95           = "success_rate_ci95"

	CheckpointIntervalS = "checkpoint_interval_s"
	TimeH               = "time_h"
	JobState            = "state"
	Category            = "category"
	WorkH               = "work_h"
	CommittedH          = "committed_h"
	LostH               = "lost_h"
	Checkpoints         = "checkpoints"
	SparesAvailable     = "spares_available"
	HostsOut            = "hosts_out"
	ETTR                = "ettr"
	ETTRCI95            = "ettr_ci95"
	LostGPUHours        = "lost_gpu_hours"

	Row         = "row"
	Replicas    = "replicas"
	GPUs        = "gpus"
	Failures    = "failures"
	Utilization = "utilization"
	MFU         = "mfu"
	HeadroomPct = "headroom_pct"
	Success     = "success"
	MetSLO      = "met_slo"

	Event        = "event"
	Unit         = "unit"
	GPUsDown     = "gpus_down"
	CapacityFrac = "capacity_frac"
	Detail       = "detail"

	ArmA     = "arm_a"
	ArmB     = "arm_b"
	AMean    = "a_mean"
	BMean    = "b_mean"
	Diff     = "diff"
	DiffCI95 = "diff_ci95"
	Rel      = "rel"
	RelCI95  = "rel_ci95"

	ID           = "id"
	Session      = "session"
	Replica      = "replica"
	ArrivalS     = "arrival_s"
	InputTokens  = "input_tokens"
	OutputTokens = "output_tokens"
	CachedTokens = "cached_tokens"
	QueueMs      = "queue_ms"
	TTFTMs       = "ttft_ms"
	TPOTMs       = "tpot_ms"
	E2EMs        = "e2e_ms"
	Preemptions  = "preemptions"

	Where       = "where"
	Model       = "model"
	GPU         = "gpu"
	TP          = "tp"
	Weights     = "weights"
	KVDType     = "kv_dtype"
	Batching    = "batching"
	ISL         = "isl"
	OSL         = "osl"
	MaxSeqs     = "max_seqs"
	Measured    = "measured"
	Predicted   = "predicted"
	RelError    = "error"
	Role        = "role"
	CVPredicted = "cv_predicted"
	CVError     = "cv_error"
)

const armMeaning = "arm name (\"\" for a plain run; a sweep point's is KEY=VALUE ...)"

// The files of a run directory.
var (
	CDFFile = &File{Name: "cdf.csv", Meaning: "one row per arm, metric and quantile, pooled over replications",
		Columns: []Column{
			{Arm, "", armMeaning},
			{Metric, "", "ttft, tpot, itl or e2e; a disaggregated fleet adds its TTFT stages ttft_prefill_queue, ttft_prefill, ttft_decode_wait, ttft_transfer, ttft_decode_first, ttft_to_client"},
			{Quantile, "fraction", "the quantile, in (0, 1)"},
			{ValueMs, "ms", "the latency at that quantile"},
		}}

	TimeseriesFile = &File{Name: "timeseries.csv", Meaning: "one row per arm and sample of replication 0",
		Columns: []Column{
			{Arm, "", armMeaning},
			{Replication, "index", "the replication sampled (0)"},
			{TimeS, "s", "simulated time of the sample"},
			{ArrivalsPerS, "req/s", "arrivals since the previous sample"},
			{CompletionsPerS, "req/s", "completions since the previous sample"},
			{InFlight, "requests", "admitted and not finished"},
			{Waiting, "requests", "queued, not yet admitted"},
			{KVUsedFrac, "fraction", "KV blocks held by running sequences / total"},
			{KVCachedFrac, "fraction", "KV blocks held only by the prefix cache / total"},
			{AvailableReplicas, "replicas", "replicas in service"},
			{ProvisionedReplicas, "replicas", "replicas paid for: all in a static fleet; under [autoscale], those loading, serving or draining"},
			{USDPerHour, "USD/h", "the GPU spend rate at the sample: every pool's replicas paid in their lifecycle phase then (all but parked; reserved ones always), each at its rate (its GPUs at its price, spot at the spot fraction); energy not included"},
		},
		After: "only for a fleet of [[cluster.groups]] (absent for a fleet of one kind): provisioned_replicas.GROUP, the group's replicas paid for (as provisioned_replicas), one per group in order; then provisioned_spot_replicas.GROUP, those of them on spot, for each group with spot replicas; then usd_per_hour.GROUP (USD/h), each group's spend rate (as usd_per_hour), and spot_usd_per_hour.GROUP, its spot replicas' part of it, in the same order; the union over all arms, empty where an arm lacks it"}

	ReplicationsFile = &File{Name: "replications.csv", Meaning: "one row per arm and replication",
		Columns: []Column{
			{Arm, "", armMeaning},
			{Replication, "index", "replication number, from 0"},
			{Seed, "", "the replication's seed"},
		},
		After: "one column per numeric leaf of summary.json, named by its dotted path (latency_ms.ttft.p99), sorted; the union over all arms, empty where an arm lacks it"}

	SweepFile = &File{Name: "sweep.csv", Meaning: "one row per grid point of a serving sweep; metrics are means over replications",
		Before: "one column per swept scenario key (workload.arrival.rate_per_s), in --param order, holding the point's value (TOML string quotes removed)",
		Columns: []Column{
			{Replications, "count", "replications per point"},
			{TTFTP99Ms, "ms", "p99 time to first token"},
			{TTFTP99MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{E2EP99Ms, "ms", "p99 end-to-end latency"},
			{E2EP99MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{GoodputRPS, "req/s", "requests meeting the SLO per second"},
			{GoodputRPSCI95, "req/s", "its 95% CI half-width; empty from one replication"},
			{ThroughputRPS, "req/s", "completed requests per second"},
			{SLOAttainment, "fraction", "share of requests meeting the SLO"},
			{SLOAttainmentCI95, "fraction", "its 95% CI half-width; empty from one replication"},
			{USDPerMonth, "USD/month", "fleet cost per 720-h month"},
			{USDPerMillionOutputTokens, "USD", "cost per million good output tokens"},
			{TTFTP50Ms, "ms", "median time to first token"},
			{TTFTP50MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{TPOTP50Ms, "ms", "median time per output token after the first"},
			{TPOTP50MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{TPOTP99Ms, "ms", "p99 time per output token after the first"},
			{TPOTP99MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{PrefixHitRate, "fraction", "share of prompt tokens served from the prefix cache (token-weighted)"},
			{PrefixHitRateCI95, "fraction", "its 95% CI half-width; empty from one replication"},
		},
		After: "the Optional columns, when the runs had [failures]",
		Optional: []Column{
			{Availability, "fraction", "replica availability"},
			{AvailabilityCI95, "fraction", "its 95% CI half-width; empty from one replication"},
			{SuccessRate, "fraction", "completed / arrived"},
			{SuccessRateCI95, "fraction", "its 95% CI half-width; empty from one replication"},
		}}

	ETTRFile = &File{Name: "ettr.csv", Meaning: "one row per grid point of a training sweep; means over replications",
		Before: "one column per swept scenario key (training.spare_servers), in --param order, holding the point's value",
		Columns: []Column{
			{CheckpointIntervalS, "s", "checkpoint interval the point ran with"},
			{ETTR, "fraction", "effective training time ratio"},
			{ETTRCI95, "fraction", "its 95% CI half-width; empty from one replication"},
			{LostGPUHours, "GPU-h", "GPU-hours lost to failures, restarts, checkpoints and slowdown"},
		}}

	TrainingTimelineFile = &File{Name: "training_timeline.csv", Meaning: "one row per event of each arm's replication 0 of a training scenario: the job just after it",
		Columns: []Column{
			{Arm, "", "the arm (sweep point, A/B arm; empty for a single run)"},
			{TimeH, "h", "wall-clock time of the event since the job started"},
			{Event, "", oneOf(TrainingEvents, "")},
			{Category, "", "the failure's category (failure and fail-slow rows)"},
			{JobState, "", oneOf(TrainingStates, ", after the event")},
			{WorkH, "h", "compute done and not lost (at full speed): committed plus since the last checkpoint"},
			{CommittedH, "h", "compute saved by completed checkpoints"},
			{LostH, "h", "compute the event threw away (a failure: the work since the last checkpoint); work_h + lost_h is the work just before it"},
			{Checkpoints, "", "checkpoint writes completed"},
			{SparesAvailable, "hosts", "spare hosts ready"},
			{HostsOut, "hosts", "the job's hosts out for repair"},
		}}

	SizeFile = &File{Name: "size.csv", Meaning: "one row per reported fleet size: N (no failures), N, N+1, N+2",
		Columns: []Column{
			{Row, "", "the size's label"},
			{Replicas, "replicas", "fleet size"},
			{GPUs, "GPUs", "replicas × GPUs per replica"},
			{Failures, "bool", "evaluated with the scenario's failures"},
			{USDPerMonth, "USD/month", "fleet cost per 720-h month"},
			{Utilization, "fraction", "model FLOPs utilisation, the same as mfu (kept for readers of earlier files)"},
			{HeadroomPct, "%", "the share of this size that is spare: (replicas − N without failures) / replicas × 100, N without failures the fewest replicas meeting the targets with no failures"},
			{TTFTP99Ms, "ms", "p99 time to first token"},
			{TTFTP99MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{Success, "fraction", "completed / arrived"},
			{MetSLO, "bool", "the one-sided confidence bound meets every target"},
			{SLOAttainment, "fraction", "share of requests meeting the [slo] (mean over replications)"},
			{SLOAttainmentCI95, "fraction", "its 95% CI half-width; empty from one replication"},
			{MFU, "fraction", "model FLOPs utilisation: model FLOPs / (GPUs × dense peak × time), mean over replications"},
		},
		After: "one column per --slo target, named by the target's metric with its unit (ttft_p999_ms, success_frac), holding its mean over replications, then TARGET_ci95, its 95% CI half-width (empty from one replication)"}

	SizeSearchFile = &File{Name: "size_search.csv", Meaning: "one row per fleet size the search evaluated",
		Columns: []Column{
			{Replicas, "replicas", "fleet size"},
			{Failures, "bool", "evaluated with the scenario's failures"},
			{TTFTP99Ms, "ms", "p99 time to first token"},
			{TTFTP99MsCI95, "ms", "its 95% CI half-width; empty from one replication"},
			{Success, "fraction", "completed / arrived"},
			{MetSLO, "bool", "the one-sided confidence bound meets every target"},
			{USDPerMonth, "USD/month", "fleet cost per 720-h month"},
			{SLOAttainment, "fraction", "share of requests meeting the [slo] (mean over replications)"},
			{SLOAttainmentCI95, "fraction", "its 95% CI half-width; empty from one replication"},
		}}

	// PlanFile is fleetsim plan's (experiments/plan_output.go).
	PlanFile = &File{Name: "plan.csv", Meaning: "one row per configuration of fleetsim plan's search space, in the space's order",
		Columns: []Column{
			{"config", "", "the configuration: GPU, tp, ep, max_batched_tokens (mbt), max_seqs (seqs)"},
			{"gpu", "", "GPU type"},
			{"tp", "", "tensor parallelism"},
			{"ep", "", "expert parallelism (1: none)"},
			{"max_batched_tokens", "tokens", "the engine's step token budget"},
			{"max_seqs", "", "the engine's running-sequence cap"},
			{"gpus_per_replica", "GPUs", "tp"},
			{"roofline_rps_per_replica", "req/s", "the roofline bound on one replica's request rate; empty when not computed"},
			{Replicas, "replicas", "fewest replicas meeting the SLO (N with the scenario's failures); the largest tried when none met; empty when not simulated"},
			{GPUs, "GPUs", "replicas × GPUs per replica"},
			{USDPerMonth, "USD/month", "fleet cost per 720-h month at that size"},
			{TTFTP99Ms, "ms", "p99 time to first token at that size"},
			{"output_tokens_per_s_per_gpu", "tokens/s", "output throughput per GPU at that size"},
			{"sizes_simulated", "", "fleet sizes the sizing search ran"},
			{MetSLO, "bool", "the one-sided confidence bound meets every target at that size"},
			{"frontier", "bool", "on the Pareto frontier of the sized configurations that meet the SLO: none other is at least as cheap, as fast to first token (p99) and as productive per GPU (output tokens/s), and better in one"},
			{"status", "", "chosen, does not fit, cannot reach the rate, misses the SLO at any size, or dearer than the chosen one"},
			{"reason", "", "why, in words"},
		}}

	FailuresFile = &File{Name: "failures.csv", Meaning: "one row per failure timeline event of each arm's replication 0 (every arm with a failure timeline, in arm order, each in time order)",
		Columns: []Column{
			{TimeS, "s", "simulated time of the event"},
			{Event, "", oneOf(FailureEvents, " (spare: a swap begins; spare-in: the spare serves, after spare_swap_s; spot-*: a spot interruption's notice, kill and replacement)")},
			{Unit, "", "the replica or spare the event is about"},
			{GPUsDown, "GPUs", "GPUs down after the event"},
			{CapacityFrac, "fraction", "share of the fleet available after the event"},
			{Detail, "", "a failure's category, and its repair path and time when repairs escalate (\"gpu: reset>reboot, 0.67 h\"); a swap's delay"},
			{Arm, "", armMeaning},
			{Replication, "index", "the replication whose timeline this is (0)"},
		}}

	ABFile = &File{Name: "ab.csv", Meaning: "one row per metric (flattened summary.json key, in column metric) and arm compared with the first",
		Columns: []Column{
			{Metric, "", "dotted summary.json key"},
			{ArmA, "", "the baseline arm"},
			{ArmB, "", "the compared arm"},
			{AMean, "metric's", "the baseline's mean"},
			{BMean, "metric's", "the compared arm's mean"},
			{Diff, "metric's", "paired mean difference b − a"},
			{DiffCI95, "metric's", "its 95% CI half-width; empty from one replication (no interval)"},
			{Rel, "fraction", "diff / a_mean; empty when undefined"},
			{RelCI95, "fraction", "its 95% CI half-width; empty when undefined or from one replication"},
		}}

	RequestsFile = &File{Name: "requests.csv", Meaning: "one row per completed request of replication 0, in completion order",
		Columns: []Column{
			{ID, "", "request id"},
			{Session, "", "session id"},
			{Replica, "index", "replica that served it"},
			{ArrivalS, "s", "arrival time"},
			{InputTokens, "tokens", "prompt length"},
			{OutputTokens, "tokens", "output length"},
			{CachedTokens, "tokens", "prompt tokens served from the prefix cache"},
			{QueueMs, "ms", "arrival to scheduling"},
			{TTFTMs, "ms", "time to first token"},
			{TPOTMs, "ms", "time per output token after the first; empty for one token"},
			{E2EMs, "ms", "arrival to last token"},
			{Preemptions, "count", "times the request was preempted"},
		}}

	CalibrationFile = &File{Name: "calibration.csv", Meaning: "one row per benchmark row and metric: measured against predicted",
		Columns: []Column{
			{Where, "", "FILE:LINE of the benchmark row"},
			{Model, "", "model"},
			{GPU, "", "GPU"},
			{TP, "GPUs", "tensor parallelism"},
			{Weights, "", "weight precision"},
			{KVDType, "", "KV cache precision"},
			{Batching, "", "batching mode"},
			{ISL, "tokens", "input sequence length"},
			{OSL, "tokens", "output sequence length"},
			{MaxSeqs, "sequences", "batch size limit"},
			{Metric, "", "output_tokens_per_s, ttft_ms, tpot_ms, itl_ms or e2e_ms"},
			{Measured, "metric's", "benchmark value (tok/s or ms)"},
			{Predicted, "metric's", "the calibrated profile's prediction"},
			{RelError, "fraction", "predicted / measured − 1"},
			{Role, "", "fit (fitted) or test (held out)"},
			{CVPredicted, "metric's", "prediction by a fit that did not see the row; empty without cross-validation"},
			{CVError, "fraction", "its relative error; empty without cross-validation"},
		}}
)

// Files are every CSV file of a run directory.
var Files = []*File{CDFFile, TimeseriesFile, ReplicationsFile, SweepFile, ETTRFile, SizeFile, SizeSearchFile,
	PlanFile, FailuresFile, ABFile, RequestsFile, CalibrationFile, TrainingTimelineFile, ColumnsFile}

// Lookup finds a file by name.
func Lookup(name string) (*File, bool) {
	for _, f := range Files {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}
