package fleet

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// intake feeds the workload to the gateway: it pulls requests from a
// Source one at a time (one pending arrival event), so memory does not
// depend on the number of requests.
type intake struct {
	eng         *sim.Engine
	gw          *Gateway
	src         workloads.Source
	into        workloads.IntoSource // src, when it is one (pull writes into next)
	next        workloads.Request
	onArrival   sim.Action
	tm          sim.Timer // holds the next arrival: one at a time
	srcErr      error
	srcDone     bool
	lastArrival sim.Time
	// spec, when set, draws each request's SpecQuantile (SetSpecStream).
	spec *rand.Rand
	// models and modelCum, when set, draw each request's model by share
	// (SetModelMix).
	models   *rand.Rand
	modelCum []float64
	// lengths, when set, redraws a request's lengths by its model
	// (SetModelLengths).
	lengths []ModelLengths

	// MaxInFlight stops the run (Overloaded) when an arrival finds more
	// than this many requests in flight: arrivals outpace service and the
	// queues would grow without bound. 0: no cap.
	MaxInFlight int64
	// OverloadedAt is when the cap stopped the run; Overloaded says it did.
	OverloadedAt sim.Time
	overloaded   bool
}

// Overloaded reports whether the in-flight cap (MaxInFlight) stopped the
// run.
func (in *intake) Overloaded() bool { return in.overloaded }

func newIntake(eng *sim.Engine, gw *Gateway) *intake {
	in := &intake{eng: eng, gw: gw, tm: eng.NewStreamTimer()}
	in.onArrival = in.arrive
	return in
}

// Start pulls the first request from src and schedules its arrival.
func (in *intake) Start(src workloads.Source) error {
	in.src = src
	in.into, _ = src.(workloads.IntoSource)
	return in.pull()
}

// Err is the first error the source returned during the run, if any.
func (in *intake) Err() error { return in.srcErr }

func (in *intake) pull() error {
	// The request is drawn into in.next, which the last arrival has
	// finished with (the gateway copies what it keeps).
	req := &in.next
	var err error
	if in.into != nil {
		err = in.into.NextInto(req)
	} else {
		*req, err = in.src.Next()
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			in.srcDone = true
			return nil
		}
		in.srcErr = err
		in.eng.Stop()
		return err
	}
	if req.Arrival < in.eng.Now() {
		in.srcErr = fmt.Errorf("workload: request %d arrives at %v, before the previous one (%v)", req.ID, req.Arrival, in.eng.Now())
		in.eng.Stop()
		return in.srcErr
	}
	if in.spec != nil {
		req.SpecQuantile = float32(in.spec.Float64())
	}
	if in.models != nil {
		u := in.models.Float64() * in.modelCum[len(in.modelCum)-1]
		m := 0
		for m < len(in.modelCum)-1 && u >= in.modelCum[m] {
			m++
		}
		req.Model = int16(m)
	}
	if int(req.Model) < len(in.lengths) {
		l := &in.lengths[req.Model]
		if l.Input != nil {
			// The prompt keeps its shared prefix (a system prompt); the
			// rest is the model's own draw.
			req.InputTokens = req.PrefixTokens() + l.Input.Sample(l.RNG)
		}
		if l.Output != nil {
			req.OutputTokens = l.Output.Sample(l.RNG)
		}
	}
	if in.eng.TimerArmed(in.tm) { // (Start called again before the last arrival: never in fleetsim)
		in.eng.Schedule(req.Arrival, sim.PriorityArrival, in.onArrival)
	} else {
		in.eng.SetTimer(in.tm, req.Arrival, sim.PriorityArrival, in.onArrival)
	}
	return nil
}

func (in *intake) arrive(now sim.Time) {
	in.lastArrival = now
	in.gw.accept(&in.next, now) // in.next is reused by pull below
	if in.MaxInFlight > 0 && in.gw.rec.InFlight() > in.MaxInFlight {
		in.overloaded, in.OverloadedAt = true, now
		in.eng.Stop()
		return
	}
	_ = in.pull()
}

// Drained reports whether the workload is exhausted and no request is in
// flight: nothing left to simulate but background processes.
func (in *intake) Drained() bool { return in.srcDone && in.gw.rec.InFlight() == 0 }

// SetModelMix has the intake draw every request's model from rng (the
// scenario's "models" stream) in proportion to shares (> 0, one per model
// of [[serve]], in order); call before Start.
func (in *intake) SetModelMix(rng *rand.Rand, shares []float64) {
	in.models = rng
	in.modelCum = make([]float64, len(shares))
	sum := 0.0
	for i, s := range shares {
		sum += s
		in.modelCum[i] = sum
	}
}

// ModelLengths are one served model's own prompt and output lengths
// ([serve.workload]): a nil distribution keeps the workload's draw. RNG is
// the model's own stream, so the other models' requests draw nothing from
// it.
type ModelLengths struct {
	Input, Output workloads.LengthDist
	RNG           *rand.Rand
}

// SetModelLengths has the intake redraw the lengths of every request for
// model i (its index in [[serve]]) from lengths[i], after the workload has
// drawn them (the workload's draws, and so every other request, do not
// move); call before Start.
func (in *intake) SetModelLengths(lengths []ModelLengths) { in.lengths = lengths }

// SetSpecStream has the intake draw every request's speculative-decoding
// acceptance quantile from rng (the scenario's "speculation" stream); call
// before Start. Without it every quantile is 0.
func (in *intake) SetSpecStream(rng *rand.Rand) { in.spec = rng }
