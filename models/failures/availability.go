package failures

import (
	"fmt"

	"github.com/fleetsim/fleetsim/models/fleet"

	"github.com/fleetsim/fleetsim/sim"
)

// The events of a serving fleet's failure timeline (failures.csv's event
// column; TimelineEvents lists them, and fleetsim plot reads no others).
const (
	EventFail       = "fail"        // a replica went down
	EventRepair     = "repair"      // a replica came back
	EventSpare      = "spare"       // a warm spare took a failed replica's place
	EventSpareIn    = "spare-in"    // the spare serves, after its swap delay
	EventSpareFail  = "spare-fail"  // a spare failed, waiting or during its swap
	EventSpareReady = "spare-ready" // a repaired replica whose place a spare took waits as a spare
)

// TimelineEvents are the events a failure timeline holds.
var TimelineEvents = []string{EventFail, EventRepair, EventSpare, EventSpareIn, EventSpareFail, EventSpareReady}

// TimelinePoint is one line of failures.csv: a replica going down or
// coming back, or a spare swapping in.
type TimelinePoint struct {
	Time     sim.Time
	Event    string // one of TimelineEvents
	Unit     string // the replica (or the swap) it is about
	GPUsDown int
	Capacity float64 // fraction of serving slots up
	// Detail says more: a failure's repair path and time, a swap's delay.
	Detail string
	// Replica is the replica whose slot a row takes down ("fail") or
	// brings back (a repair, or a spare taking its place), -1 on the other
	// rows (not written to failures.csv): what merges this timeline with
	// another cause's. Decode says the row is about a disaggregated fleet's
	// decode pool (Replica indexes it).
	Replica int
	Decode  bool
}

// outage is one replica's time out of service, [from, to).
type outage struct {
	replica  int
	from, to sim.Time
}

// Availability tallies the serving slots out of service: when each replica
// went down and came back, the fewest slots available, and the timeline.
// Spares waiting are not serving and are not counted down.
type Availability struct {
	slots   int // serving replicas (cluster.replicas)
	gpusPer int // GPUs per replica (TP)
	// In a fleet of groups, gpus[i] is replica i's GPUs and group[i] its
	// group's name, which failures.csv adds to the unit; nil otherwise.
	gpus     []int
	group    []string
	down     []sim.Time // when each replica went down, or -1
	outages  []outage   // closed
	minAvail int
	// name is what the timeline calls a replica of this pool: "replica"
	// (a co-located fleet), "prefill replica" or "decode replica".
	name string
	// timeline is the failures.csv timeline, shared by the pools of a
	// disaggregated fleet (each row's capacity is its own pool's); decode
	// marks the decode pool's availability.
	timeline *[]TimelinePoint
	decode   bool
}

func newAvailability(replicas, slots, gpusPer int) *Availability {
	a := &Availability{slots: slots, gpusPer: gpusPer, down: make([]sim.Time, replicas), minAvail: slots,
		name: "replica", timeline: new([]TimelinePoint)}
	for i := range a.down {
		a.down[i] = -1
	}
	return a
}

// gpusOf is replica i's GPU count.
func (a *Availability) gpusOf(i int) int {
	if a.gpus != nil {
		return a.gpus[i]
	}
	return a.gpusPer
}

// named gives a fleet of groups' replicas their own GPU counts and their
// group's name in the timeline.
func (a *Availability) named(fl *fleet.Fleet) {
	a.gpus, a.group = make([]int, len(a.down)), make([]string, len(a.down))
	for _, g := range fl.Groups {
		for i := g.First; i < g.First+g.Replicas; i++ {
			a.gpus[i], a.group[i] = g.TP, g.Name
		}
	}
}

// unit names replica i in the timeline: "replica 3" ("prefill replica 3",
// "decode replica 3" in a disaggregated fleet), or "replica 3 (h100-0)" in
// a fleet of groups.
func (a *Availability) unit(i int) string {
	if a.group != nil {
		return fmt.Sprintf("%s %d (%s)", a.name, i, a.group[i])
	}
	return fmt.Sprintf("%s %d", a.name, i)
}

func (a *Availability) markDown(i int, now sim.Time) { a.markDownDetail(i, now, "") }

func (a *Availability) markDownDetail(i int, now sim.Time, detail string) {
	if a.down[i] < 0 {
		a.down[i] = now
		a.recordDetail(now, EventFail, a.unit(i), detail)
		(*a.timeline)[len(*a.timeline)-1].Replica = i
	}
	a.minAvail = min(a.minAvail, a.slots-a.downCount())
}

func (a *Availability) markUp(i int, now sim.Time) {
	a.markUpAs(i, now, EventRepair, a.unit(i))
}

// markUpAs ends replica i's outage with a timeline event of the given kind
// (a spare that took its slot may end it before its repair).
func (a *Availability) markUpAs(i int, now sim.Time, event, unit string) {
	if a.down[i] >= 0 {
		a.outages = append(a.outages, outage{i, a.down[i], now})
		a.down[i] = -1
		a.record(now, event, unit)
		(*a.timeline)[len(*a.timeline)-1].Replica = i
	}
}

func (a *Availability) record(now sim.Time, event, unit string) { a.recordDetail(now, event, unit, "") }

func (a *Availability) recordDetail(now sim.Time, event, unit, detail string) {
	down := a.downCount()
	gpusDown := down * a.gpusPer
	if a.gpus != nil {
		gpusDown = 0
		for i, d := range a.down {
			if d >= 0 {
				gpusDown += a.gpus[i]
			}
		}
	}
	*a.timeline = append(*a.timeline, TimelinePoint{Time: now, Event: event, Unit: unit, GPUsDown: gpusDown,
		Capacity: 1 - float64(down)/float64(a.slots), Detail: detail, Replica: -1, Decode: a.decode})
}

// downCount is the number of serving replicas out (spares are not serving).
func (a *Availability) downCount() int {
	n := 0
	for _, d := range a.down {
		if d >= 0 {
			n++
		}
	}
	return n
}

// DownShares are the shares of serving slots whose time out of service
// Report.TimeDown measures, by name.
var DownShares = []struct {
	Name string
	Frac float64
}{{"any", 1e-9}, {"10%", 0.10}, {"25%", 0.25}, {"50%", 0.50}}

// report fills r's availability figures over [0, end]. Repairs can end
// after the run (the engine fires them anyway): every outage is clipped to
// the run.
func (a *Availability) report(r *FleetReport, end sim.Time) {
	// The share of time with at least x% of the slots down is the failures
	// package's sweep line, one unit per slot.
	tally := NewTally(a.slots)
	add := func(o outage) {
		d := max(0, min(o.to, end)-min(o.from, end))
		r.DownNs += d
		r.DownGPUNs += d * sim.Time(a.gpusOf(o.replica))
		tally.Add(Event{Time: o.from, Repair: o.to - o.from, DownFirstGPU: o.replica, DownGPUs: 1, Precursor: NoPrecursor})
	}
	for _, o := range a.outages {
		add(o)
		r.Outages = append(r.Outages, o.to-o.from)
	}
	for i, d := range a.down {
		if d >= 0 && d < end {
			add(outage{i, d, end})
		}
	}
	shares := make([]float64, len(DownShares))
	for k, sh := range DownShares {
		shares[k] = sh.Frac
	}
	down := tally.Report(end, shares).Down
	r.TimeDown = map[string]float64{}
	for k, sh := range DownShares {
		r.TimeDown[sh.Name] = down[k].TimeFraction
	}
	r.MinAvailable = a.minAvail
	for _, p := range *a.timeline {
		if p.Time <= end {
			r.Timeline = append(r.Timeline, p)
		}
	}
}
