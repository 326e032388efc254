package fleet

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
	"github.com/fleetsim/fleetsim/workloads"
)

// SLO is a per-request service-level objective. A request meets it when it
// completes with TTFT <= TTFTMs, TPOT <= TPOTMs and end-to-end latency <=
// E2EMs (a zero threshold is not checked).
type SLO struct {
	TTFTMs float64 `toml:"ttft_ms"`
	TPOTMs float64 `toml:"tpot_ms"`
	E2EMs  float64 `toml:"e2e_ms"`
}

// Set reports whether any threshold is set.
func (s SLO) Set() bool { return s.TTFTMs > 0 || s.TPOTMs > 0 || s.E2EMs > 0 }

// Recorder counts the fleet's client-request outcomes and keeps streaming
// latency sketches (memory does not grow with requests; DESIGN.md decision 6).
// It is not the replicas' Observer: the Gateway is, and it reports each
// client request to the Recorder once, when it completes (RequestDone) or
// fails (RequestFailed), whatever its copies did. All latencies are in
// milliseconds.
type Recorder struct {
	SLO SLO

	Arrived, Completed, Failed, Shed int64
	FailedBy                         map[string]int64
	MetSLO                           int64
	InputTokens, OutputTokens        int64 // of completed requests
	GoodOutputTokens                 int64 // of requests that met the SLO
	CachedTokens                     int64 // prompt tokens served from cache (first admission)
	Preempted                        int64 // completed requests preempted at least once
	LastFinish                       sim.Time

	// InFlightNs is ∫ InFlight() dt over the run (request·ns), for the
	// time-average number in the system (Little's law: L = λW).
	InFlightNs float64
	lastT      sim.Time

	TTFT, TPOT, E2E, Queue *quantile.Sketch
	// ITL is the inter-token latency: every gap between two consecutive
	// output tokens that a replica streamed, of every copy (one value per
	// token after a copy's first, so long outputs weigh more, unlike TPOT's
	// one mean per request). A gap includes whatever delayed that token on
	// its replica: a longer mixed step, a preemption and its recompute. It
	// is filled from the replicas' gaps when the run ends (Fleet.Finish).
	ITL *quantile.Sketch
	// ClientTTFT is what the client waited for a first token, failures
	// included: TTFT for completed requests, time to the failure (a
	// timeout, an error) for failed ones. Survivor-only percentiles flatter
	// a fleet that fails requests; this one does not.
	//
	// Until the first failure it has seen exactly TTFT's values, in TTFT's
	// order, so it is TTFT itself (the same *Sketch: one value recorded
	// per completion instead of two); the first failure, or Finish, makes
	// it a clone of TTFT (the state the separate sketch would have had,
	// bit for bit) that goes its own way.
	ClientTTFT *quantile.Sketch

	// OnDone, if set, sees every completed request (e.g. a streamed
	// per-request CSV writer).
	OnDone func(o *engine.Outcome)

	// PerModel, in a fleet of several models, records each model's
	// requests again, by Request.Model (each with its model's SLO).
	PerModel []*Recorder

	// FanOut, when the fleet's requests fan out (Fleet.SetFanOut),
	// follows the client requests the requests above are sub-requests of.
	FanOut *FanOutStats

	// clientEnd, when set, hears every client request's end at the
	// client's time (a closed loop's clients, intake.go).
	clientEnd func(at sim.Time)
}

// arrive counts a new client request.
func (m *Recorder) arrive(req *workloads.Request, now sim.Time) {
	m.Touch(now)
	m.Arrived++
	if m.PerModel != nil {
		m.PerModel[req.Model].arrive(req, now)
	}
}

// shed counts a client request refused at the gateway.
func (m *Recorder) shed(req *workloads.Request, now sim.Time) {
	m.Touch(now)
	m.Shed++
	if m.PerModel != nil {
		m.PerModel[req.Model].shed(req, now)
	}
	m.clientEnds(req, now, false)
}

// NewRecorder returns an empty recorder for slo.
func NewRecorder(slo SLO) *Recorder {
	m := &Recorder{SLO: slo, FailedBy: map[string]int64{},
		TTFT: quantile.New(), TPOT: quantile.New(), ITL: quantile.New(), E2E: quantile.New(), Queue: quantile.New()}
	m.ClientTTFT = m.TTFT // shared until the first failure (see ClientTTFT)
	return m
}

// splitClientTTFT gives ClientTTFT a sketch of its own if it still
// shares TTFT's: a clone, identical to what it would hold had every
// completion been added to both.
func (m *Recorder) splitClientTTFT() {
	if m.ClientTTFT == m.TTFT {
		m.ClientTTFT = m.TTFT.Clone()
	}
}

// Finish ends the sharing of ClientTTFT with TTFT (so that merging into one
// after the run does not change the other), here and in PerModel's.
// Fleet.Finish calls it.
func (m *Recorder) Finish() {
	m.splitClientTTFT()
	for _, pm := range m.PerModel {
		pm.Finish()
	}
}

// RequestDone records a completed client request (its winning copy's outcome).
//
// (Not inlined: the profile-guided build then inlines its sketch adds here;
// inlined into Gateway.CopyDone, whose profile has no such call sites, they
// were calls.)
//
//go:noinline
func (m *Recorder) RequestDone(o *engine.Outcome) {
	m.Touch(o.Finished)
	m.Completed++
	// The client sees the first token ClientDelay after its engine step
	// ends, the last FinishDelay after its own.
	ttft := (o.FirstToken + o.ClientDelay - o.Req.Arrival).Milliseconds()
	e2e := (o.Finished + o.FinishDelay - o.Req.Arrival).Milliseconds()
	if m.ClientTTFT == m.TTFT {
		m.TTFT.Add(ttft) // ClientTTFT too (it is TTFT until a failure)
	} else {
		quantile.AddTwo(m.TTFT, m.ClientTTFT, ttft) // one bucket computation for both
	}
	m.E2E.Add(e2e)
	m.Queue.Add((o.Scheduled - o.Req.Arrival).Milliseconds())
	met := (m.SLO.TTFTMs <= 0 || ttft <= m.SLO.TTFTMs) && (m.SLO.E2EMs <= 0 || e2e <= m.SLO.E2EMs)
	if o.Req.OutputTokens > 1 {
		tpot := (o.Finished + o.FinishDelay - o.FirstToken - o.ClientDelay).Milliseconds() / float64(o.Req.OutputTokens-1)
		m.TPOT.Add(tpot)
		if m.SLO.TPOTMs > 0 && tpot > m.SLO.TPOTMs {
			met = false
		}
	}
	m.InputTokens += int64(o.Req.InputTokens)
	m.OutputTokens += int64(o.Req.OutputTokens)
	m.CachedTokens += int64(o.CachedTokens)
	if o.Preemptions > 0 {
		m.Preempted++
	}
	if met {
		m.MetSLO++
		m.GoodOutputTokens += int64(o.Req.OutputTokens)
	}
	if o.Finished > m.LastFinish {
		m.LastFinish = o.Finished
	}
	if m.OnDone != nil {
		m.OnDone(o)
	}
	if m.PerModel != nil {
		m.PerModel[o.Req.Model].RequestDone(o)
	}
	m.clientEnds(o.Req, o.Finished+o.FinishDelay, true)
}

// RequestFailed records a failed client request, at the time it failed.
func (m *Recorder) RequestFailed(req *workloads.Request, _ int, at sim.Time, reason string) {
	m.Touch(at)
	m.splitClientTTFT()
	m.ClientTTFT.Add(max(0, (at - req.Arrival).Milliseconds()))
	m.Failed++
	m.FailedBy[reason]++
	if m.PerModel != nil {
		m.PerModel[req.Model].RequestFailed(req, 0, at, reason)
	}
	m.clientEnds(req, at, false)
}

// LastEvent is the time of the last arrival, completion, failure or shed:
// where a drained run ends.
func (m *Recorder) LastEvent() sim.Time { return m.lastT }

// InFlight is arrived − completed − failed − shed: requests still queued or
// running (conservation: it is never negative).
func (m *Recorder) InFlight() int64 { return m.Arrived - m.Completed - m.Failed - m.Shed }

// Touch integrates the in-flight count up to now; call it before any change
// of Arrived, Completed, Failed or Shed.
func (m *Recorder) Touch(now sim.Time) {
	if now > m.lastT {
		m.InFlightNs += float64(now-m.lastT) * float64(m.InFlight())
		m.lastT = now
	}
}
