package calibrate

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sort"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// A closed loop's schedule depends on step durations (a request is sent when
// the one before it returns), so no single run gives its latencies under
// every profile. What a run under one profile does give is how its measured
// requests' time splits over the steps it ran: TTFT_i is the time from the
// request reaching the engine to the end of the step that emitted its first
// token (the steps it overlapped, each in the fraction it overlapped) plus
// the front end and the stream back; TPOT_i is the steps it decoded through
// over OSL − 1. closedTally keeps those splits as step tallies
// (hw.StepTally), so that under a nearby profile the latencies are sums of
// the new step durations — exact for the steps the schedule keeps, an
// approximation where the new durations would move arrivals across step
// boundaries. Fit therefore fits on the tallies, re-simulates every closed
// row under the profile it found (retally), and fits again (Options.
// Iterations); a report predicts by simulating (Predict).
type closedTally struct {
	ttft, tpot hw.StepTally
	// next is the step after each measured request's first token (a run's
	// mean step): its output lag is first_token_lag_steps of it.
	next hw.StepTally
	n    float64 // measured requests
	// rest is the measured TTFT (s, summed) no step covered, less the
	// front end's, the stream's and the output lag's share: the time a
	// request spent at the front end while the engine was idle (0 when it
	// is always busy).
	restS float64
	// burstMs is the phase's first burst's mean TTFT under the tally's
	// profile (Row.PhaseRounds; 0 without), and burstEdgeS the front end
	// and stream in it: under another profile the burst moves by their
	// change, its queueing is held until the next re-simulation.
	burstMs, burstEdgeS float64
	// isl is the requests' prompt length (the front end's per-token share).
	isl float64
}

// closedResult is one closed-loop simulation's measured means. With
// Row.PhaseRounds, ttftMs mixes the phase's first burst (burstMs) with
// the steady loop's (steadyTTFTMs) as the benchmark's mean does.
type closedResult struct {
	ttftMs, tpotMs        float64
	n                     int
	burstMs, steadyTTFTMs float64
}

// reqSpan is a measured request's times: at the engine (entry), first
// token and finish, engine time (ns).
type reqSpan struct{ entry, first, fin int64 }

// simulateClosed runs the row's closed loop under pp: Concurrency clients,
// Warmup + opt.Rounds·Concurrency requests, every one ready at t = 0 (sent
// as clients come free). With spans, it also returns the measured requests'
// times and the steps the replica ran.
func (c *Case) simulateClosed(pp hw.PerfProfile, rounds int, record bool) (closedResult, []reqSpan, []hw.StepRecord, error) {
	r := c.Row
	var steps []hw.StepRecord
	var onStep func(hw.StepRecord)
	if record {
		onStep = func(s hw.StepRecord) { steps = append(steps, s) }
	}
	warm := uint64(r.Warmup)
	var spans []reqSpan
	var sumTTFT, sumTPOT float64
	var n int
	onDone := func(o *engine.Outcome) {
		if o.Req.ID <= warm {
			return
		}
		n++
		sumTTFT += (o.FirstToken + o.ClientDelay - o.Req.Arrival).Milliseconds()
		sumTPOT += (o.Finished - o.FirstToken).Milliseconds() / float64(o.Req.OutputTokens-1)
		if record {
			spans = append(spans, reqSpan{entry: int64(o.Enqueued), first: int64(o.FirstToken), fin: int64(o.Finished)})
		}
	}
	cl := fleet.Clients{Concurrency: r.Concurrency}
	if c.jitterS > 0 {
		cl.Think, cl.ThinkRNG = sim.FromSeconds(c.jitterS), rand.New(rand.NewPCG(uint64(r.Line), 7))
	}
	total := r.Warmup + rounds*r.Concurrency
	src := &closedSource{n: total, isl: int32(r.ISL), osl: int32(r.OSL)}
	if !c.lockstep {
		src.c, src.spread = r.Concurrency, c.cycle(pp)
	}
	rec, err := c.runLoop(pp, cl, src, onDone, onStep)
	if err != nil {
		return closedResult{}, nil, nil, err
	}
	if rec.Completed != int64(total) {
		return closedResult{}, nil, nil, fmt.Errorf("batch_size: only %d of %d requests completed (%v): the configuration does not fit", rec.Completed, total, rec.FailedBy)
	}
	out := closedResult{ttftMs: sumTTFT / float64(n), tpotMs: sumTPOT / float64(n), n: n}
	if r.PhaseRounds > 1 {
		b, err := c.burstTTFT(pp)
		if err != nil {
			return closedResult{}, nil, nil, err
		}
		out.burstMs, out.steadyTTFTMs = b, out.ttftMs
		out.ttftMs = (b + float64(r.PhaseRounds-1)*out.ttftMs) / float64(r.PhaseRounds)
	}
	return out, spans, steps, nil
}

// runLoop runs src's requests through the row's replica under pp, sent by
// clients cl, to the end: onDone sees every completed request, onStep
// (when set) every step. It returns the run's recorder.
func (c *Case) runLoop(pp hw.PerfProfile, cl fleet.Clients, src *closedSource, onDone func(*engine.Outcome), onStep func(hw.StepRecord)) (*fleet.Recorder, error) {
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(fleet.SLO{})
	f, err := fleet.NewFleet(eng, withProfile(c.cat, pp), c.fleet, firstReplica{}, rec, "row")
	if err != nil {
		return nil, err
	}
	if onStep != nil {
		f.Replicas[0].RecordSteps(onStep)
	}
	rec.OnDone = onDone
	f.SetClients(cl)
	if err := f.Start(src); err != nil {
		return nil, err
	}
	eng.Run(sim.Forever)
	return rec, f.Err()
}

// burstTTFT is the mean TTFT (ms) of the burst a row's measured phase
// starts with (Row.PhaseRounds): its Concurrency requests sent at once to
// the idle replica, one each.
func (c *Case) burstTTFT(pp hw.PerfProfile) (float64, error) {
	r := c.Row
	var sum float64
	var n int
	onDone := func(o *engine.Outcome) {
		n++
		sum += (o.FirstToken + o.ClientDelay - o.Req.Arrival).Milliseconds()
	}
	rec, err := c.runLoop(pp, fleet.Clients{Concurrency: r.Concurrency}, &closedSource{n: r.Concurrency, isl: int32(r.ISL), osl: int32(r.OSL)}, onDone, nil)
	if err != nil {
		return 0, err
	}
	if n != r.Concurrency {
		return 0, fmt.Errorf("batch_size: only %d of the %d requests of the measured phase's first burst completed (%v)", n, r.Concurrency, rec.FailedBy)
	}
	return sum / float64(n), nil
}

// retally simulates the closed row under pp and rebuilds its tallies.
func (c *Case) retally(pp hw.PerfProfile, opt Options) error {
	res, spans, steps, err := c.simulateClosed(pp, opt.Rounds, true)
	if err != nil {
		return err
	}
	t := &closedTally{n: float64(res.n), isl: float64(c.Row.ISL)}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Start < steps[j].Start })
	ends := make([]int64, len(steps))
	for i, s := range steps {
		ends[i] = s.End
	}
	wTTFT := make([]float64, len(steps))
	wTPOT := make([]float64, len(steps))
	var covered float64 // ns of TTFT the steps cover
	per := 1 / float64(c.Row.OSL-1)
	wNext := make([]float64, len(steps))
	for _, q := range spans {
		covered += overlapInto(steps, ends, q.entry, q.first, wTTFT, 1)
		overlapInto(steps, ends, q.first, q.fin, wTPOT, per)
		// The step planned when the first token came (it starts then).
		if j := sort.Search(len(steps), func(j int) bool { return steps[j].Start >= q.first }); j < len(steps) && steps[j].Start == q.first {
			wNext[j] += 1 / float64(max(steps[j].Steps, 1))
		}
	}
	for i, s := range steps {
		t.ttft.Add(s, wTTFT[i])
		t.tpot.Add(s, wTPOT[i])
		t.next.Add(s, wNext[i])
	}
	m, err := c.stepModel(pp)
	if err != nil {
		return err
	}
	// What the steps do not cover: the front end and the stream (which the
	// estimate adds under each profile) and any idle engine time.
	edges := res.steadyOr()/1000*t.n - covered/1e9
	t.restS = edges - t.n*(m.FrontEndS+m.FrontEndSPerToken*t.isl+m.StreamS) - m.FirstTokenLagSteps*m.Seconds(&t.next)
	t.burstMs, t.burstEdgeS = res.burstMs, m.FrontEndS+m.FrontEndSPerToken*t.isl+m.StreamS
	c.closed = t
	return nil
}

// steadyOr is the steady loop's mean TTFT: ttftMs without a burst.
func (r closedResult) steadyOr() float64 {
	if r.burstMs > 0 {
		return r.steadyTTFTMs
	}
	return r.ttftMs
}

// overlapInto adds, to w[j], weight times the fraction of step j that
// [from, to] overlaps, for every step it overlaps; it returns the overlap
// in ns. steps are in time order and do not overlap; ends are their ends.
func overlapInto(steps []hw.StepRecord, ends []int64, from, to int64, w []float64, weight float64) float64 {
	var got float64
	for j := sort.Search(len(ends), func(j int) bool { return ends[j] > from }); j < len(steps) && steps[j].Start < to; j++ {
		s := steps[j]
		lo, hi := max(from, s.Start), min(to, s.End)
		if hi <= lo || s.End <= s.Start {
			continue
		}
		w[j] += weight * float64(hi-lo) / float64(s.End-s.Start)
		got += float64(hi - lo)
	}
	return got
}

// stepModel is the row's step model under pp.
func (c *Case) stepModel(pp hw.PerfProfile) (*hw.StepModel, error) {
	return hw.NewDeployedStepModel(c.gpu, c.llm, c.fleet.Deployment(), hw.Precision(c.Row.Weights), hw.Precision(c.Row.KVDType), pp)
}

// estimate is a closed row's mean TTFT and TPOT under pp from its tallies.
func (c *Case) estimate(pp hw.PerfProfile) (Prediction, error) {
	t := c.closed
	m, err := c.stepModel(pp)
	if err != nil {
		return Prediction{}, err
	}
	edgeS := m.FrontEndS + m.FrontEndSPerToken*t.isl + m.StreamS
	edges := t.n*edgeS + m.FirstTokenLagSteps*m.Seconds(&t.next) + t.restS
	ttft := (m.Seconds(&t.ttft) + edges) / t.n * 1000
	if k := c.Row.PhaseRounds; k > 1 && t.burstMs > 0 {
		ttft = (t.burstMs + (edgeS-t.burstEdgeS)*1000 + float64(k-1)*ttft) / float64(k)
	}
	return Prediction{
		TTFTMs: ttft,
		TPOTMs: m.Seconds(&t.tpot) / t.n * 1000,
	}, nil
}

// closedSource is a closed loop's n requests, ready at t = 0 (the clients
// send them as they come free), or with spread > 0 the first c of them
// spread evenly over [0, spread) and the rest ready from the last of those.
type closedSource struct {
	n, i     int
	isl, osl int32
	c        int
	spread   sim.Time
}

func (s *closedSource) Next() (workloads.Request, error) {
	if s.i >= s.n {
		return workloads.Request{}, io.EOF
	}
	var at sim.Time
	if s.spread > 0 && s.c > 1 {
		at = s.spread * sim.Time(min(s.i, s.c-1)) / sim.Time(s.c)
	}
	s.i++
	return workloads.Request{ID: uint64(s.i), Arrival: at, InputTokens: s.isl, OutputTokens: s.osl}, nil
}

// cycle estimates one request's time in the row's closed loop under pp:
// its prefill alone plus OSL decode steps of the full batch at the mean
// context. The clients' first requests are spread over it (unless the
// row runs in lockstep), so the loop starts as it runs once the clients
// have drifted apart: a real benchmark's clients do within the warm-up
// (their TTFTs at low concurrency are a lone request's, not a wave's), a
// simulated one of identical requests started at once would not.
func (c *Case) cycle(pp hw.PerfProfile) sim.Time {
	m, err := c.stepModel(pp)
	if err != nil {
		return 0
	}
	r := c.Row
	return sim.FromSeconds(m.ClosedLoopRequestS(float64(r.ISL), float64(r.OSL), float64(r.Concurrency)))
}
