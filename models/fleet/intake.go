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
// Source one at a time, so memory does not depend on the number of
// requests.
//
// Between the source and the gateway a request may pass two stages, both
// off by default (then a request reaches the gateway at its arrival, one
// pending arrival event at a time):
//
//   - the clients (SetClients): at most Concurrency requests outstanding; a
//     request due while the clients are all waiting is sent when one
//     returns, plus the think time, and its latency counts from then (its
//     Arrival is rewritten to the send time, as a benchmark client's timer
//     starts when it sends);
//   - the front end (SetFrontEnd): the time from a request's send to the
//     engines seeing it (HTTP handling, tokenisation), in send order: a
//     request enters after its own front-end time and not before the one
//     sent before it.
//
// Requests sent but not yet through the front end wait in sent, in entry
// order; the timer holds the first one's entry.
type intake struct {
	eng       *sim.Engine
	gw        *Gateway
	src       workloads.Source
	into      workloads.IntoSource // src, when it is one (pull writes into next)
	onArrival sim.Action
	tm        sim.Timer // holds the next entry: one at a time
	srcErr    error
	srcEOF    bool // the source is exhausted
	// srcDone: the source is exhausted and every request it gave has
	// reached the gateway (nothing more will arrive).
	srcDone     bool
	lastArrival sim.Time
	prevSource  sim.Time // the source's last arrival (they never go back)
	// sent holds the requests sent and not yet at the gateway, from
	// head (ring buffer of len(sent) slots, n in use); sentAt their entry
	// times.
	sent       []workloads.Request
	sentAt     []sim.Time
	head, n    int
	lastEntry  sim.Time
	clients    Clients
	out        int // requests the clients have outstanding (or thinking after)
	stage      int // the clients' stage (Clients.StageEnds)
	ramped     int // clients started by the ramp (Clients.RampUp), up to rampN
	rampN      int
	gateOpen   sim.Time // when a client last came free with all busy before
	lastSend   sim.Time // the last request's send time
	onSlotFree sim.Action
	front      FrontEnd
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

// Clients is how the workload's clients send requests.
type Clients struct {
	// Concurrency is the most requests the clients have outstanding; 0: no
	// cap (open loop).
	Concurrency int
	// Think is the pause between a response and the client's next request
	// (its mean when ThinkRNG is set).
	Think sim.Time
	// ThinkRNG, when set, draws each pause from an exponential distribution
	// of mean Think (clients whose pauses vary drift apart; a closed loop of
	// identical requests started at once otherwise stays in lockstep).
	ThinkRNG *rand.Rand
	// StageEnds and StageConcurrency, when set, are a staged closed loop:
	// Concurrency is StageConcurrency[i] until StageEnds[i] (increasing),
	// and nothing is sent after the last end. Concurrency must then be the
	// most of them.
	StageEnds        []sim.Time
	StageConcurrency []int
	// Until, when > 0, is the last time a request may be sent.
	Until sim.Time
	// RampUp, when > 0, starts the clients evenly over it: the cap is k
	// from (k−1)·RampUp/n, for the first stage's n clients.
	RampUp sim.Time
}

// FrontEnd is the time from a request's send to its arrival at the
// gateway: Fixed plus PerToken per prompt token (tokenisation).
type FrontEnd struct {
	FixedS, PerTokenS float64
}

// On says whether the front end takes any time.
func (f FrontEnd) On() bool { return f.FixedS > 0 || f.PerTokenS > 0 }

// delay is the front end's time for a prompt of tokens, rounded to ns.
func (f FrontEnd) delay(tokens int32) sim.Time {
	return sim.FromSeconds(f.FixedS + f.PerTokenS*float64(tokens))
}

// Overloaded reports whether the in-flight cap (MaxInFlight) stopped the
// run.
func (in *intake) Overloaded() bool { return in.overloaded }

func newIntake(eng *sim.Engine, gw *Gateway) *intake {
	in := &intake{eng: eng, gw: gw, tm: eng.NewStreamTimer(), sent: make([]workloads.Request, 1), sentAt: make([]sim.Time, 1)}
	in.onArrival = in.arrive
	in.onSlotFree = in.slotFree
	return in
}

// SetClients caps the requests the clients have outstanding (see
// Clients); call before Start.
func (in *intake) SetClients(c Clients) {
	if len(c.StageEnds) > 0 {
		c.Until = c.StageEnds[len(c.StageEnds)-1]
		for _, n := range c.StageConcurrency {
			c.Concurrency = max(c.Concurrency, n)
		}
		// A stage that allows more clients sends them at its start.
		for i, end := range c.StageEnds[:len(c.StageEnds)-1] {
			if c.StageConcurrency[i+1] > c.StageConcurrency[i] {
				in.eng.Schedule(end, sim.PriorityArrival, in.stageStart)
			}
		}
	}
	in.clients = c
	if c.Concurrency > 0 {
		in.gw.rec.clientEnd = in.returned
	}
	if c.RampUp > 0 && c.Concurrency > 1 {
		in.rampN = c.Concurrency
		if len(c.StageConcurrency) > 0 {
			in.rampN = c.StageConcurrency[0]
		}
		in.ramped = 1
		for k := 1; k < in.rampN; k++ {
			in.eng.Schedule(c.RampUp*sim.Time(k)/sim.Time(in.rampN), sim.PriorityArrival, in.rampStep)
		}
	}
}

// rampStep starts one more client of the ramp (Clients.RampUp).
func (in *intake) rampStep(now sim.Time) {
	in.ramped++
	in.gateOpen = max(in.gateOpen, now)
	in.fill(now)
}

// stageStart sends what a stage with more clients allows.
func (in *intake) stageStart(now sim.Time) {
	in.gateOpen = max(in.gateOpen, now)
	in.fill(now)
}

// SetFrontEnd sets the front end's time (see FrontEnd); call before Start.
func (in *intake) SetFrontEnd(f FrontEnd) { in.front = f }

// Start pulls the first requests from src and schedules their arrival.
func (in *intake) Start(src workloads.Source) error {
	if !in.front.On() && len(in.gw.pool.Replicas) > 0 {
		// The front end is the (first) serving pool's engine's.
		p := in.gw.pool.Replicas[0].StepModel()
		in.front = FrontEnd{FixedS: p.FrontEndS, PerTokenS: p.FrontEndSPerToken}
	}
	in.src = src
	in.into, _ = src.(workloads.IntoSource)
	in.fill(in.eng.Now())
	return in.srcErr
}

// Err is the first error the source returned during the run, if any.
func (in *intake) Err() error { return in.srcErr }

// gated says whether the clients cap their outstanding requests.
func (in *intake) gated() bool { return in.clients.Concurrency > 0 }

// limit is the clients' cap at now: Concurrency, or the stage's.
func (in *intake) limit(now sim.Time) int {
	c := &in.clients
	for in.stage < len(c.StageEnds) && c.StageEnds[in.stage] <= now {
		in.stage++
	}
	n := c.Concurrency
	if len(c.StageEnds) > 0 {
		if in.stage >= len(c.StageEnds) {
			return 0
		}
		n = c.StageConcurrency[in.stage]
	}
	if in.ramped < in.rampN {
		return min(n, in.ramped)
	}
	return n
}

// fill sends what can be sent at now. Without a cap: the next request
// (it is due at or after now; its arrival event pulls the one after).
// With one: requests while a client is free, in source order, each sent at
// its arrival or when a client came free for it, whichever is later; a
// request not due yet is drawn and held, and the next is drawn once it is
// at the gateway.
func (in *intake) fill(now sim.Time) {
	for !in.srcEOF && in.srcErr == nil {
		if in.gated() {
			if in.out >= in.limit(now) || in.lastSend > now {
				break
			}
		} else if in.n > 0 {
			break // one pending arrival at a time
		}
		req := in.slot()
		if !in.pull(req) {
			break
		}
		send := req.Arrival
		if in.gated() {
			send = max(send, in.gateOpen, in.lastSend)
			if in.clients.Until > 0 && send > in.clients.Until {
				in.srcEOF = true
				break
			}
			in.out++
			req.Arrival = send
		}
		in.lastSend = send
		at := send
		if in.front.On() {
			at = max(send+in.front.delay(req.InputTokens), in.lastEntry, now)
		}
		in.push(at)
	}
	if in.srcEOF && in.n == 0 {
		in.srcDone = true
	}
}

// slot is the ring buffer's next free slot (grown when full).
func (in *intake) slot() *workloads.Request {
	if in.n == len(in.sent) {
		grown := make([]workloads.Request, 2*len(in.sent))
		grownAt := make([]sim.Time, 2*len(in.sent))
		for i := 0; i < in.n; i++ {
			grown[i] = in.sent[(in.head+i)%len(in.sent)]
			grownAt[i] = in.sentAt[(in.head+i)%len(in.sent)]
		}
		in.sent, in.sentAt, in.head = grown, grownAt, 0
	}
	return &in.sent[(in.head+in.n)%len(in.sent)]
}

// push queues the request in slot() to enter at at, and arms the timer if
// it is the head.
func (in *intake) push(at sim.Time) {
	in.sentAt[(in.head+in.n)%len(in.sent)] = at
	in.n++
	in.lastEntry = at
	if in.n == 1 {
		in.arm(at)
	}
}

func (in *intake) arm(at sim.Time) {
	if in.eng.TimerArmed(in.tm) { // (never in fleetsim: the timer holds the head only)
		in.eng.Schedule(at, sim.PriorityArrival, in.onArrival)
	} else {
		in.eng.SetTimer(in.tm, at, sim.PriorityArrival, in.onArrival)
	}
}

// pull draws the source's next request into req and its per-request draws
// (model, lengths, speculation); false at the end of the source or on an
// error (srcErr, and the run is stopped).
func (in *intake) pull(req *workloads.Request) bool {
	var err error
	if in.into != nil {
		err = in.into.NextInto(req)
	} else {
		*req, err = in.src.Next()
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			in.srcEOF = true
			return false
		}
		in.srcErr = err
		in.eng.Stop()
		return false
	}
	if req.Arrival < in.prevSource || (!in.gated() && !in.front.On() && req.Arrival < in.eng.Now()) {
		in.srcErr = fmt.Errorf("workload: request %d arrives at %v, before the previous one (%v)", req.ID, req.Arrival, max(in.prevSource, in.eng.Now()))
		in.eng.Stop()
		return false
	}
	in.prevSource = req.Arrival
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
	return true
}

// arrive hands the head of sent to the gateway, then arms the timer for
// the next one or sends more.
func (in *intake) arrive(now sim.Time) {
	in.lastArrival = now
	req := &in.sent[in.head]
	in.gw.accept(req, now) // the slot is reused once popped (the gateway copies what it keeps)
	in.head = (in.head + 1) % len(in.sent)
	in.n--
	if in.MaxInFlight > 0 && in.gw.rec.InFlight() > in.MaxInFlight {
		in.overloaded, in.OverloadedAt = true, now
		in.eng.Stop()
		return
	}
	if in.n > 0 {
		in.arm(in.sentAt[in.head])
		return
	}
	in.fill(now)
}

// returned hears that a client request ended (completed, failed or shed)
// at client time at: its client is free again after the think time.
func (in *intake) returned(at sim.Time) {
	think := in.clients.Think
	if in.clients.ThinkRNG != nil {
		think = sim.FromSeconds(in.clients.ThinkRNG.ExpFloat64() * think.Seconds())
	}
	in.eng.Schedule(max(at+think, in.eng.Now()), sim.PriorityArrival, in.onSlotFree)
}

// slotFree frees a client and sends what is due.
func (in *intake) slotFree(now sim.Time) {
	if in.out >= in.limit(now) {
		in.gateOpen = now
	}
	in.out--
	in.fill(now)
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
