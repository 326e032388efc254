package fleet

import (
	"math"
	"slices"

	"github.com/fleetsim/fleetsim/sim"
)

// ScaleObs is what an autoscaling policy sees at each evaluation: the
// fleet's state now and over the interval just ended.
type ScaleObs struct {
	Now sim.Time
	// Active replicas serve traffic; Starting are loading (cold start), or
	// warm spares swapping in for failed replicas; Draining finish what
	// they hold before they stop. Max is the most the fleet can have
	// (cluster.replicas: warm spares are not counted).
	Active, Starting, Draining, Max int
	// Down are provisioned replicas out of service for a failure (down,
	// or restarting after a repair): not Active, so a scale-up starts
	// replacements for them (as a cloud autoscaling group replaces
	// unhealthy instances).
	Down int
	// Outstanding requests (waiting + running) and Waiting requests over
	// the active replicas, and their mean KV utilisation (0..1).
	Outstanding, Waiting int
	KVUtilization        float64
	// OutstandingTokens is the tokens the active replicas still have to
	// process (prompt tokens not yet prefilled and output tokens not yet
	// generated, of what they hold), as of each one's last step.
	OutstandingTokens int64
	// BusyFraction is the mean over the active replicas of the fraction
	// of the last interval each spent stepping (0..1), a step or decode
	// run under way counted up to now: the GPU utilisation a DCGM exporter
	// reports (DCGM_FI_DEV_GPU_UTIL, the time a kernel runs).
	BusyFraction float64
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
	// Down are the replicas in repair for the whole run (run.down_replicas,
	// a group's down_replicas: the run takes them out of service): never
	// among the initial ones, and never started, as they are never up.
	// Max counts the others only.
	Down []int
	// Spares are the pool's warm spares (failures' spare pool): its last
	// Spares replicas, after every serving one. They are outside the
	// autoscaler's range: never started, parked or drained, and not in
	// Max. A spare that stands in for a failed serving replica
	// (Pool.StandIn) takes its place in the range, and counts as starting
	// until its swap ends, then as active; the failed one becomes a spare.
	Spares int
	// Fixed are replicas that are not the autoscaler's: a rollout's green
	// pool, which the rollout holds and releases (StartRollout). They stay
	// provisioned (counted as such), are never started, drained or parked,
	// and are left out of what the policy sees: it scales the others (the
	// blue version) on their own load. Max counts the others only.
	Fixed []int
	// Units, for a fleet of groups, are each replica's own scaling facts
	// (ScaleUnits); nil for a fleet of one kind, whose replicas are all TP
	// GPUs loading WeightBytesPerGPU, started in index order and drained
	// newest first.
	Units []ScaleUnit
}

// ScaleUnit is what the autoscaler knows of one replica of a fleet of
// groups: its GPUs, the weight bytes each loads, its price and capacity,
// and its model.
type ScaleUnit struct {
	GPUs              int
	WeightBytesPerGPU float64
	// USDPerHour is what provisioning the replica costs per hour: its GPUs
	// at its group's price (0 for reserved capacity, paid either way).
	USDPerHour float64
	Capacity   float64 // Group.Capacity
	Model      int     // index in the fleet's served models
}

// ScaleUnits are the scaling facts of a fleet of groups' replicas, each at
// the price per GPU-hour of provisioning it (usdPerGPUHour(g)); nil for a
// fleet of one kind.
func (f *Fleet) ScaleUnits(usdPerGPUHour func(g *Group) float64) []ScaleUnit {
	if len(f.Groups) == 0 {
		return nil
	}
	us := make([]ScaleUnit, len(f.Replicas))
	for k := range f.Groups {
		g := &f.Groups[k]
		w := g.Memory.WeightBytes
		for i := g.First; i < g.First+g.Replicas; i++ {
			m := 0
			if f.Pool.model != nil {
				m = int(f.Pool.model[i])
			}
			us[i] = ScaleUnit{GPUs: g.TP, WeightBytesPerGPU: w, USDPerHour: float64(g.TP) * usdPerGPUHour(g), Capacity: g.Capacity, Model: m}
		}
	}
	return us
}

// Replica lifecycle under autoscaling.
type scaleState uint8

const (
	scaleParked   scaleState = iota // not provisioned: costs nothing, takes nothing
	scaleStarting                   // provisioned and loading: costs, takes nothing
	scaleActive                     // serving
	scaleDraining                   // out of rotation, finishing what it holds
	scaleSpare                      // a warm spare, or a failed replica a spare stands in for: outside the range
	scaleFixed                      // not the autoscaler's (ScaleParams.Fixed): provisioned throughout
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
//
// In a fleet of groups (ScaleParams.Units) the policy still decides a
// total; the scaler starts the cheapest replica per unit of capacity first
// (USD per hour / Capacity, then index) and drains the most expensive
// first. With several models, a scale-up goes to the model with the most
// outstanding requests per unit of provisioned capacity, a scale-down to
// the one with the fewest, and a model's last serving replica is never
// drained (each model starts with at least one).
//
// Warm spares (ScaleParams.Spares) are outside its range: it never starts,
// parks or drains one, and they are not in Max, Provisioned, MinSeen or
// MaxSeen (they are provisioned and paid all the same, from the pool's
// lifecycle). A spare stands in only for a failed replica the autoscaler
// has in service, never for one it parked, starts or drains; from the
// swap on, the spare is the autoscaler's serving replica (starting during
// the swap delay, so the autoscaler does not start a replacement for the
// failed one as well) and the failed replica is a spare, as it becomes
// one once repaired.
type Autoscaler struct {
	eng    *sim.Engine
	pool   *Pool
	gw     *Gateway
	p      ScaleParams
	policy ScalePolicy
	state  []scaleState

	// queued, when set, is the requests waiting for the pool outside its
	// replicas (a decode pool's: prefilled, waiting for room).
	queued func() int

	lastUp      sim.Time
	recent      []desiredAt // the policy's answers within DownWindow
	lastArrived int64
	lastBusyNs  []int64   // each replica's BusyNsAt the last evaluation
	ttft        []float64 // TTFTs of the current interval, ms

	// Events is every action in order; StartingReplicaNs the integral of
	// replicas loading after a scale-up over time. (Each replica's time
	// provisioned is its pool's: Lifecycle.ProvisionedNs.)
	Events            []ScaleEvent
	StartingReplicaNs float64
	// StartingGPUNs is StartingReplicaNs in GPU-time (each replica's own
	// GPUs in a fleet of groups).
	StartingGPUNs        float64
	ScaleUps, ScaleDowns int
	MinSeen, MaxSeen     int // fewest and most provisioned replicas
	lastT                sim.Time
	provisioned, loading int
	loadGPUs             int
	// order is the start order (cheapest per capacity first; index order
	// for a fleet of one kind); drains go the other way.
	order  []int
	models int
}

// StartAutoscaler autoscales the fleet's primary pool (startAutoscaler).
func (f *Fleet) StartAutoscaler(p ScaleParams, policy ScalePolicy) *Autoscaler {
	a := f.startAutoscaler(f.Pool, p, policy)
	f.Autoscaler = a
	f.Sampler.scaler = a
	return a
}

// StartDecodeAutoscaler autoscales a disaggregated fleet's decode pool on
// its own signal (startAutoscaler): its replicas' load, plus the requests
// prefilled and waiting for a decode replica with room, which count as
// outstanding and waiting.
func (f *Fleet) StartDecodeAutoscaler(p ScaleParams, policy ScalePolicy) *Autoscaler {
	d := f.Disagg
	a := f.startAutoscaler(d.Decode, p, policy)
	a.queued = func() int { return d.waiting }
	d.Autoscaler = a
	return a
}

// startAutoscaler parks every replica of pool beyond p.Initial and
// evaluates the policy every p.Interval from now on, while the fleet is
// busy. Call before Start; p must be valid (Min <= Initial <= Max =
// replicas).
func (f *Fleet) startAutoscaler(pool *Pool, p ScaleParams, policy ScalePolicy) *Autoscaler {
	n := len(pool.Replicas)
	a := &Autoscaler{eng: pool.eng, pool: pool, gw: f.Gateway, p: p, policy: policy,
		state: make([]scaleState, n), lastUp: -1 << 62, order: make([]int, n),
		lastBusyNs: make([]int64, n), models: 1}
	for i := range a.order {
		a.order[i] = i
	}
	initial, down, fixed := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, i := range p.Down {
		down[i] = true
	}
	for _, i := range p.Fixed {
		fixed[i], down[i] = true, true // (never among the initial ones)
	}
	if u := p.Units; u != nil {
		perCap := func(i int) float64 { return u[i].USDPerHour / math.Max(u[i].Capacity, 1e-12) }
		slices.SortStableFunc(a.order, func(x, y int) int { return cmpFloat(perCap(x), perCap(y)) })
		for _, x := range u {
			a.models = max(a.models, x.Model+1)
		}
		// Each model's cheapest replica first, then the cheapest others.
		seen := map[int]bool{}
		for _, i := range a.order {
			if !seen[u[i].Model] && !down[i] && i < n-p.Spares {
				seen[u[i].Model] = true
				initial[i] = true
			}
		}
	}
	for _, i := range a.order {
		if len(initial) < p.Initial && !down[i] && i < n-p.Spares {
			initial[i] = true
		}
	}
	for i := n - p.Spares; i < n; i++ {
		a.state[i] = scaleSpare
	}
	pool.onStandIn = a.standIn
	for i := range a.state {
		if a.state[i] == scaleSpare {
			continue
		}
		if fixed[i] {
			a.state[i] = scaleFixed
			a.provisioned++
			continue
		}
		if initial[i] {
			a.state[i] = scaleActive
			a.provisioned++
			continue
		}
		a.pool.Hold(i, HoldParked)
	}
	a.MinSeen, a.MaxSeen = a.provisioned, a.provisioned
	if p.WatchTTFT {
		prev := a.gw.onTTFT // (another pool's autoscaler may watch too)
		a.gw.onTTFT = func(ms float64) {
			if prev != nil {
				prev(ms)
			}
			a.ttft = append(a.ttft, ms)
		}
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

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// gpus is replica i's GPU count.
func (a *Autoscaler) gpus(i int) int {
	if a.p.Units != nil {
		return a.p.Units[i].GPUs
	}
	return a.p.TP
}

// model is replica i's model (0 in a fleet of one model).
func (a *Autoscaler) model(i int) int {
	if a.p.Units != nil {
		return a.p.Units[i].Model
	}
	return 0
}

// account integrates provisioned and loading replicas up to now.
func (a *Autoscaler) account(now sim.Time) {
	dt := float64(now - a.lastT)
	a.StartingReplicaNs += float64(a.loading) * dt
	a.StartingGPUNs += float64(a.loadGPUs) * dt
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
	o := ScaleObs{Now: now, Max: len(a.state) - a.p.Spares, TTFTP99Ms: math.NaN()}
	var kv float64
	var busyNs int64
	for i, st := range a.state {
		busy := a.pool.Replicas[i].BusyNsAt(now)
		// (A step a failure cut short was counted while under way and
		// never ends: the count can go back. Clamped to the interval.)
		dBusy := min(max(busy-a.lastBusyNs[i], 0), int64(a.p.Interval))
		a.lastBusyNs[i] = busy
		switch st {
		case scaleActive:
			if a.swapping(i) {
				o.Starting++ // a spare in its swap delay: on its way in
				continue
			}
			if !a.up(i) {
				o.Down++
				continue
			}
			o.Active++
			s := a.pool.states[i]
			o.Outstanding += s.Outstanding
			o.Waiting += s.Waiting
			o.OutstandingTokens += s.OutstandingTokens
			kv += s.KVUtilization
			busyNs += dBusy
		case scaleStarting:
			o.Starting++
		case scaleDraining:
			o.Draining++
		}
	}
	if a.queued != nil {
		q := a.queued()
		o.Outstanding += q
		o.Waiting += q
	}
	if o.Active > 0 {
		o.KVUtilization = kv / float64(o.Active)
		o.BusyFraction = float64(busyNs) / (float64(o.Active) * float64(a.p.Interval))
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
	have := o.Active + o.Starting // draining replicas are on their way out, down ones replaced
	a.recent = append(a.recent, desiredAt{now, want})
	drop := 0
	for drop < len(a.recent) && a.recent[drop].t < now-a.p.DownWindow {
		drop++
	}
	a.recent = append(a.recent[:0], a.recent[drop:]...)
	switch {
	case want > have && now-a.lastUp >= a.p.UpCooldown:
		for have < want {
			i := a.pickStart()
			if i < 0 {
				break
			}
			a.start(now, i, want)
			have++
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
		// (last in the start order) first, keeping at least one serving
		// (per model).
		for have > want {
			i := a.pickDrain()
			if i < 0 {
				break
			}
			a.drain(now, i, want)
			have--
		}
		a.ScaleDowns++
	}
}

// up reports whether replica i is in service: not down or restarting
// after a failure.
func (a *Autoscaler) up(i int) bool {
	r := a.pool.Replicas[i]
	return r.Up() && !r.Recovering()
}

// swapping reports whether replica i is a spare in its swap delay: in the
// autoscaler's range (it took a failed replica's place), not serving yet.
func (a *Autoscaler) swapping(i int) bool {
	return a.state[i] == scaleActive && a.pool.Held(i, HoldSpare)
}

// standIn swaps replicas i's and j's roles (Pool.StandIn): the spare j
// takes the failed replica i's place in the range, i becomes a spare; the
// same call undoes it.
func (a *Autoscaler) standIn(i, j int) {
	a.state[i], a.state[j] = a.state[j], a.state[i]
}

// startable: a parked replica is idle hardware, up; one that is down was
// struck by a failure while parked and waits for its repair.
func (a *Autoscaler) startable(i int) bool {
	r := a.pool.Replicas[i]
	return a.state[i] == scaleParked && r.Up() && !r.Recovering()
}

// load is each model's outstanding requests per unit of provisioned
// capacity (active and up, or starting), and its active replicas in
// service.
func (a *Autoscaler) load() (perCap []float64, active []int) {
	out, cap := make([]float64, a.models), make([]float64, a.models)
	active = make([]int, a.models)
	for i, st := range a.state {
		m := a.model(i)
		c := 1.0
		if a.p.Units != nil {
			c = a.p.Units[i].Capacity
		}
		switch {
		case st == scaleActive && a.up(i) && !a.swapping(i):
			active[m]++
			out[m] += float64(a.pool.states[i].Outstanding)
			cap[m] += c
		case st == scaleStarting || a.swapping(i):
			cap[m] += c
		}
	}
	perCap = make([]float64, a.models)
	for m := range perCap {
		perCap[m] = out[m] / math.Max(cap[m], 1e-12)
	}
	return perCap, active
}

// pickStart is the replica a scale-up starts next, or -1: the first
// startable in the start order, of the most loaded model that has one.
func (a *Autoscaler) pickStart() int {
	if a.models == 1 {
		for _, i := range a.order {
			if a.startable(i) {
				return i
			}
		}
		return -1
	}
	perCap, _ := a.load()
	best := -1
	for _, i := range a.order {
		if a.startable(i) && (best < 0 || perCap[a.model(i)] > perCap[a.model(best)]) {
			best = i
		}
	}
	return best
}

// pickDrain is the replica a scale-down drains next, or -1: the last
// active in the start order, of the least loaded model with more than one
// serving.
func (a *Autoscaler) pickDrain() int {
	perCap, active := a.load()
	total := 0
	for _, n := range active {
		total += n
	}
	if total <= 1 {
		return -1
	}
	best := -1
	for k := len(a.order) - 1; k >= 0; k-- {
		i := a.order[k]
		if a.state[i] != scaleActive || !a.up(i) || a.swapping(i) || active[a.model(i)] <= 1 && a.models > 1 {
			continue
		}
		if best < 0 || perCap[a.model(i)] < perCap[a.model(best)] {
			best = i
		}
	}
	return best
}

func (a *Autoscaler) start(now sim.Time, i, want int) {
	a.account(now)
	a.state[i] = scaleStarting
	a.provisioned++
	a.loading++
	a.loadGPUs += a.gpus(i)
	a.MaxSeen = max(a.MaxSeen, a.provisioned)
	a.Events = append(a.Events, ScaleEvent{Time: now, Replica: i, Event: "start", Desired: want})
	// Peers hold the same weights: serving replicas of the same model.
	peers := 0
	for j, st := range a.state {
		if st == scaleActive && a.model(j) == a.model(i) {
			peers++
		}
	}
	weights := a.p.WeightBytesPerGPU
	if a.p.Units != nil {
		weights = a.p.Units[i].WeightBytesPerGPU
	}
	cold := a.p.ColdStart.Duration(weights, a.loadGPUs, peers)
	r := a.pool.Replicas[i]
	// Provisioned (after Recover: down, so unavailable until ready), held
	// as starting until its engine is ready.
	defer a.pool.Release(i, HoldParked)
	defer a.pool.Hold(i, HoldStarting)
	// A new engine process: empty KV and prefix cache (it holds no copies).
	r.Fail(now, FailDrained)
	r.Recover(now, cold, func() {
		at := a.eng.Now()
		a.pool.Release(i, HoldStarting)
		a.account(at)
		a.loading--
		a.loadGPUs -= a.gpus(i)
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
	a.pool.Hold(i, HoldScaleIn)
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
		a.pool.Hold(i, HoldParked)
		a.pool.Release(i, HoldScaleIn)
		a.Events = append(a.Events, ScaleEvent{Time: at, Replica: i, Event: "stopped", Desired: want})
	}
	a.eng.Schedule(min(now+sim.Second, deadline), sim.PriorityNormal, check)
}

// Parked reports whether replica i is parked (not provisioned).
func (a *Autoscaler) Parked(i int) bool { return a.state[i] == scaleParked }

// Serving reports whether replica i is an active (serving) replica of the
// autoscaler: not parked, loading or draining, nor a spare.
func (a *Autoscaler) Serving(i int) bool { return a.state[i] == scaleActive }

// Spare reports whether replica i is outside the autoscaler's range: a
// warm spare waiting, or a failed replica a spare stands in for
// (ScaleParams.Spares).
func (a *Autoscaler) Spare(i int) bool { return a.state[i] == scaleSpare }

// Spares is the number of replicas outside the autoscaler's range
// (ScaleParams.Spares; always the same number, as a swap trades one for
// one).
func (a *Autoscaler) Spares() int { return a.p.Spares }
