package models

import (
	"math"
	"slices"

	"github.com/fleetsim/fleetsim/sim"
)

// ScaleObs is what an autoscaling policy sees at each evaluation: the
// fleet's state now and over the interval just ended.
type ScaleObs struct {
	Now sim.Time
	// Active replicas serve traffic; Starting are loading (cold start);
	// Draining finish what they hold before they stop. Max is the most the
	// fleet can have (cluster.replicas).
	Active, Starting, Draining, Max int
	// Outstanding requests (waiting + running) and Waiting requests over
	// the active replicas, and their mean KV utilisation (0..1).
	Outstanding, Waiting int
	KVUtilization        float64
	// ArrivalRatePerS is the arrivals per second over the last interval.
	ArrivalRatePerS float64
	// TTFTP99Ms is the p99 time to first token of the requests that
	// completed in the last interval, ms; NaN when none did, or when the
	// policy does not read it (ScaleParams.WatchTTFT).
	TTFTP99Ms float64
}

// ScalePolicy decides how many replicas the fleet wants. Implementations
// live in package policies; the Autoscaler clamps the answer to its min
// and max and applies cooldowns.
type ScalePolicy interface {
	Desired(obs ScaleObs) int
}

// ScaleParams are the autoscaler's mechanics (the policy decides how many;
// these decide how fast and within what bounds).
type ScaleParams struct {
	Min, Max, Initial int
	Interval          sim.Time // between evaluations
	UpCooldown        sim.Time // after a scale-up, no other scale-up for this long
	// DownWindow is the scale-down stabilisation window (Kubernetes HPA's
	// rule): the fleet shrinks only to the largest size the policy asked
	// for over the last DownWindow, so a dip does not drain replicas that
	// the next interval needs again.
	DownWindow sim.Time
	DrainGrace sim.Time // a scaled-down replica's drain limit
	ColdStart  ColdStartConfig
	// WeightBytesPerGPU is what each GPU of a starting replica loads.
	WeightBytesPerGPU float64
	TP                int
	// WatchTTFT keeps the interval's TTFTs for ScaleObs.TTFTP99Ms (a
	// policy that reads it); otherwise TTFTP99Ms is NaN and nothing is kept
	// per request.
	WatchTTFT bool
}

// Replica lifecycle under autoscaling.
type scaleState uint8

const (
	scaleParked   scaleState = iota // not provisioned: costs nothing, takes nothing
	scaleStarting                   // provisioned and loading: costs, takes nothing
	scaleActive                     // serving
	scaleDraining                   // out of rotation, finishing what it holds
)

type desiredAt struct {
	t    sim.Time
	want int
}

// ScaleEvent is one autoscaling action, for the timeline.
type ScaleEvent struct {
	Time    sim.Time
	Replica int
	Event   string // "start", "ready", "drain", "stopped"
	Desired int
}

// Autoscaler adds and removes replicas of the pool at each evaluation
// interval, as its policy asks: a scale-up provisions a parked replica,
// which serves after its cold start (ColdStartConfig.Duration); a
// scale-down drains the highest-numbered active replica (graceful, within
// DrainGrace) and parks it. Replicas not parked cost GPU-hours.
type Autoscaler struct {
	eng    *sim.Engine
	pool   *Pool
	gw     *Gateway
	p      ScaleParams
	policy ScalePolicy
	state  []scaleState

	lastUp      sim.Time
	recent      []desiredAt // the policy's answers within DownWindow
	lastArrived int64
	ttft        []float64 // TTFTs of the current interval, ms

	// Events is every action in order; ProvisionedReplicaNs the integral of
	// replicas not parked over time, StartingReplicaNs of those loading.
	Events               []ScaleEvent
	ProvisionedReplicaNs float64
	StartingReplicaNs    float64
	ScaleUps, ScaleDowns int
	MinSeen, MaxSeen     int // fewest and most provisioned replicas
	lastT                sim.Time
	provisioned, loading int
}

// StartAutoscaler parks every replica beyond p.Initial and evaluates the
// policy every p.Interval from now on, while the fleet is busy. Call
// before Start; p must be valid (Min <= Initial <= Max = replicas).
func (f *Fleet) StartAutoscaler(p ScaleParams, policy ScalePolicy) *Autoscaler {
	a := &Autoscaler{eng: f.Pool.eng, pool: f.Pool, gw: f.Gateway, p: p, policy: policy,
		state: make([]scaleState, len(f.Replicas)), lastUp: -1 << 62}
	for i := range a.state {
		if i < p.Initial {
			a.state[i] = scaleActive
			a.provisioned++
			continue
		}
		a.pool.setParked(i, true)
	}
	a.MinSeen, a.MaxSeen = a.provisioned, a.provisioned
	f.Autoscaler = a
	f.Sampler.scaler = a
	if p.WatchTTFT {
		a.gw.onTTFT = func(ms float64) { a.ttft = append(a.ttft, ms) }
	}
	var tick sim.Action
	tick = func(now sim.Time) {
		a.evaluate(now)
		if f.busy() {
			a.eng.Schedule(now+p.Interval, sim.PriorityMetrics, tick)
		}
	}
	a.eng.Schedule(a.eng.Now()+p.Interval, sim.PriorityMetrics, tick)
	return a
}

// account integrates provisioned and loading replicas up to now.
func (a *Autoscaler) account(now sim.Time) {
	dt := float64(now - a.lastT)
	a.ProvisionedReplicaNs += float64(a.provisioned) * dt
	a.StartingReplicaNs += float64(a.loading) * dt
	a.lastT = now
}

// Finish closes the integrals at end.
func (a *Autoscaler) Finish(end sim.Time) {
	if end > a.lastT {
		a.account(end)
	}
}

// WeightBytesPerGPU is what each GPU of a starting replica loads.
func (a *Autoscaler) WeightBytesPerGPU() float64 { return a.p.WeightBytesPerGPU }

// Provisioned is the number of replicas not parked now.
func (a *Autoscaler) Provisioned() int { return a.provisioned }

func (a *Autoscaler) observe(now sim.Time) ScaleObs {
	o := ScaleObs{Now: now, Max: len(a.state), TTFTP99Ms: math.NaN()}
	var kv float64
	for i, st := range a.state {
		switch st {
		case scaleActive:
			o.Active++
			s := a.pool.states[i]
			o.Outstanding += s.Outstanding
			o.Waiting += s.Waiting
			kv += s.KVUtilization
		case scaleStarting:
			o.Starting++
		case scaleDraining:
			o.Draining++
		}
	}
	if o.Active > 0 {
		o.KVUtilization = kv / float64(o.Active)
	}
	arrived := a.gw.rec.Arrived
	o.ArrivalRatePerS = float64(arrived-a.lastArrived) / a.p.Interval.Seconds()
	a.lastArrived = arrived
	if n := len(a.ttft); n > 0 {
		slices.Sort(a.ttft)
		o.TTFTP99Ms = a.ttft[min(n-1, int(math.Ceil(0.99*float64(n)))-1)]
		a.ttft = a.ttft[:0]
	}
	return o
}

func (a *Autoscaler) evaluate(now sim.Time) {
	o := a.observe(now)
	want := min(max(a.policy.Desired(o), a.p.Min), a.p.Max)
	have := o.Active + o.Starting // draining replicas are on their way out
	a.recent = append(a.recent, desiredAt{now, want})
	drop := 0
	for drop < len(a.recent) && a.recent[drop].t < now-a.p.DownWindow {
		drop++
	}
	a.recent = append(a.recent[:0], a.recent[drop:]...)
	switch {
	case want > have && now-a.lastUp >= a.p.UpCooldown:
		for i := range a.state {
			if have == want {
				break
			}
			// A parked replica is idle hardware, up; one that is down was
			// struck by a failure while parked and waits for its repair.
			if r := a.pool.Replicas[i]; a.state[i] == scaleParked && r.Up() && !r.Recovering() {
				a.start(now, i, want)
				have++
			}
		}
		a.lastUp = now
		a.ScaleUps++
	case want < have:
		for _, d := range a.recent {
			want = max(want, d.want)
		}
		if want >= have {
			return
		}
		// Cancel nothing that is loading: drain active replicas, newest
		// (highest index) first, keeping at least one serving.
		for i := len(a.state) - 1; i >= 0 && have > want; i-- {
			if a.state[i] == scaleActive && o.Active > 1 {
				a.drain(now, i, want)
				have--
				o.Active--
			}
		}
		a.ScaleDowns++
	}
}

func (a *Autoscaler) start(now sim.Time, i, want int) {
	a.account(now)
	a.state[i] = scaleStarting
	a.provisioned++
	a.loading++
	a.MaxSeen = max(a.MaxSeen, a.provisioned)
	a.Events = append(a.Events, ScaleEvent{Time: now, Replica: i, Event: "start", Desired: want})
	peers := 0
	for _, st := range a.state {
		if st == scaleActive {
			peers++
		}
	}
	cold := a.p.ColdStart.Duration(a.p.WeightBytesPerGPU, a.loading*a.p.TP, peers)
	r := a.pool.Replicas[i]
	defer a.pool.setParked(i, false) // after Recover: down, so unavailable until ready
	// A new engine process: empty KV and prefix cache (it holds no copies).
	r.Fail(now, FailDrained)
	r.Recover(now, cold, func() {
		at := a.eng.Now()
		a.account(at)
		a.loading--
		a.state[i] = scaleActive
		a.Events = append(a.Events, ScaleEvent{Time: at, Replica: i, Event: "ready", Desired: want})
	})
}

// drain takes replica i out of rotation and parks it once it is empty, or
// at the drain grace's end, failing what it still holds (reason
// "drained"; a retry policy may send it elsewhere). Unlike Pool.Drain it
// leaves the replica up: parked, it is idle hardware that a failure can
// still strike, and that a later scale-up starts with a cold start.
func (a *Autoscaler) drain(now sim.Time, i, want int) {
	a.state[i] = scaleDraining
	a.Events = append(a.Events, ScaleEvent{Time: now, Replica: i, Event: "drain", Desired: want})
	a.pool.SetInRotation(i, false)
	deadline := now + a.p.DrainGrace
	var check sim.Action
	check = func(at sim.Time) {
		r := a.pool.Replicas[i]
		if r.Outstanding() > 0 && at < deadline {
			a.eng.Schedule(min(at+sim.Second, deadline), sim.PriorityNormal, check)
			return
		}
		r.FailInFlight(at, FailDrained)
		a.account(at)
		a.state[i] = scaleParked
		a.provisioned--
		a.MinSeen = min(a.MinSeen, a.provisioned)
		a.pool.SetInRotation(i, true) // rotation back; parked keeps it out
		a.pool.setParked(i, true)
		a.Events = append(a.Events, ScaleEvent{Time: at, Replica: i, Event: "stopped", Desired: want})
	}
	a.eng.Schedule(min(now+sim.Second, deadline), sim.PriorityNormal, check)
}

// Serving reports whether replica i is an active (serving) replica of the
// autoscaler: not parked, loading or draining.
func (a *Autoscaler) Serving(i int) bool { return a.state[i] == scaleActive }
