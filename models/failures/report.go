package failures

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/fleetsim/fleetsim/sim"
)

// DefaultDownThresholds are the shares of GPUs down that Report.Down
// measures: 0.1%, 1% and 5% (issue 3; CALIBRATION.md §6: "81% of the time
// some 0.1% of GPUs is broken").
var DefaultDownThresholds = []float64{0.001, 0.01, 0.05}

// Tally accumulates failure events into a Report. It keeps O(events)
// memory: counts, repair times and down intervals.
type Tally struct {
	gpus       int
	incidents  int
	precursors int
	byCategory map[string]int
	byComp     map[string]int
	byXid      map[int]int
	byMode     map[string]int
	lost       map[int]int
	lostDown   map[int]int
	repairs    []sim.Time
	down       []downInterval
}

type downInterval struct {
	start, end sim.Time
	first, n   int
}

// NewTally returns an empty tally for a fleet of gpus GPUs.
func NewTally(gpus int) *Tally {
	return &Tally{gpus: gpus, byCategory: map[string]int{}, byComp: map[string]int{}, byXid: map[int]int{},
		byMode: map[string]int{}, lost: map[int]int{}, lostDown: map[int]int{}}
}

// Add records one event. Its DownGPUs are down over [Time, Time+Repair).
func (t *Tally) Add(ev Event) {
	t.incidents++
	t.byCategory[ev.Category]++
	t.byComp[string(ev.Component)]++
	t.byXid[ev.Xid]++
	t.byMode[ev.Mode.String()]++
	t.lost[ev.GPUs]++
	t.lostDown[ev.DownGPUs]++
	if ev.HasPrecursor() {
		t.precursors++
	}
	t.repairs = append(t.repairs, ev.Repair)
	if ev.Repair > 0 && ev.DownGPUs > 0 {
		t.down = append(t.down, downInterval{ev.Time, ev.Time + ev.Repair, ev.DownFirstGPU, ev.DownGPUs})
	}
}

// Count is a number of incidents under a name.
type Count struct {
	Name      string `json:"name"`
	Incidents int    `json:"incidents"`
}

// Bucket is how many incidents took a given number of GPUs.
type Bucket struct {
	GPUs      int `json:"gpus"`
	Incidents int `json:"incidents"`
}

// Quantiles summarise a distribution: mean and nearest-rank quantiles (the
// smallest value whose rank reaches ceil(p·n)).
type Quantiles struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// DownFraction is the share of the horizon during which at least GPUs
// GPUs (Threshold of the fleet, rounded up, at least 1) were down.
type DownFraction struct {
	Threshold    float64 `json:"threshold"`
	GPUs         int     `json:"gpus"`
	TimeFraction float64 `json:"time_fraction"`
}

// CapacityStep says that from Time on, Available GPUs were in service.
type CapacityStep struct {
	Time      sim.Time `json:"time_ns"`
	Available int      `json:"available_gpus"`
}

// Report summarises failures over a horizon.
type Report struct {
	GPUs         int     `json:"gpus"`
	HorizonHours float64 `json:"horizon_hours"`
	Incidents    int     `json:"incidents"`
	// Precursors is how many incidents had a precursor seen.
	Precursors int `json:"precursors"`
	// ByCategory, ByComponent and ByMode are sorted by count, then name;
	// ByXid by code ("none" for 0, first).
	ByCategory  []Count `json:"by_category"`
	ByComponent []Count `json:"by_component"`
	ByMode      []Count `json:"by_mode"`
	ByXid       []Count `json:"by_xid"`
	// GPUsLost is the distribution of GPUs per incident (the failed unit's
	// GPUs: the blast radius), by size; GPUsDown of the GPUs each incident
	// took out of service for its repair (0 for restarts and stragglers).
	GPUsLost     []Bucket `json:"gpus_lost_per_incident"`
	GPUsLostMean float64  `json:"gpus_lost_mean"`
	GPUsDown     []Bucket `json:"gpus_down_per_incident"`
	// DownGPUHours is the sum over incidents of GPUs down × repair time
	// within the horizon, before merging overlaps.
	DownGPUHours float64 `json:"down_gpu_hours"`
	// RepairHours is the time-to-repair distribution of every incident.
	RepairHours Quantiles `json:"repair_hours"`
	// AnyDown is the share of the horizon with at least one GPU down.
	AnyDown float64        `json:"any_down"`
	Down    []DownFraction `json:"down"`
	// MeanGPUsDown is the time-average number of GPUs down; MinAvailable
	// the fewest in service at any time.
	MeanGPUsDown float64 `json:"mean_gpus_down"`
	MinAvailable int     `json:"min_available_gpus"`
	// Capacity is the number of GPUs in service over time, a step series
	// starting at time 0 (a point per change).
	Capacity []CapacityStep `json:"capacity"`
}

// Report summarises what was added over [0, horizon] (horizon > 0).
// Counts include every event added; down time is clipped to the horizon.
// A GPU hit by overlapping incidents is down once. thresholds nil means
// DefaultDownThresholds. The cost is O(events log events + GPUs lost).
func (t *Tally) Report(horizon sim.Time, thresholds []float64) Report {
	if thresholds == nil {
		thresholds = DefaultDownThresholds
	}
	r := Report{GPUs: t.gpus, HorizonHours: horizon.Seconds() / 3600, Incidents: t.incidents, Precursors: t.precursors,
		ByCategory: counts(t.byCategory), ByComponent: counts(t.byComp), ByMode: counts(t.byMode)}
	xs := make([]int, 0, len(t.byXid))
	for x := range t.byXid {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	for _, x := range xs {
		name := "none"
		if x != 0 {
			name = strconv.Itoa(x)
		}
		r.ByXid = append(r.ByXid, Count{name, t.byXid[x]})
	}
	sum := 0
	r.GPUsLost, sum = buckets(t.lost)
	r.GPUsDown, _ = buckets(t.lostDown)
	for _, iv := range t.down {
		if d := min(iv.end, horizon) - max(iv.start, 0); d > 0 {
			r.DownGPUHours += float64(iv.n) * d.Seconds() / 3600
		}
	}
	if t.incidents > 0 {
		r.GPUsLostMean = float64(sum) / float64(t.incidents)
	}
	r.RepairHours = quantiles(t.repairs)
	t.sweep(&r, horizon, thresholds)
	return r
}

func buckets(m map[int]int) ([]Bucket, int) {
	sizes := make([]int, 0, len(m))
	sum := 0
	for s, n := range m {
		sizes = append(sizes, s)
		sum += s * n
	}
	slices.Sort(sizes)
	out := make([]Bucket, 0, len(sizes))
	for _, s := range sizes {
		out = append(out, Bucket{s, m[s]})
	}
	return out, sum
}

func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		if c := cmp.Compare(b.Incidents, a.Incidents); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// quantiles of durations, in hours.
func quantiles(ds []sim.Time) Quantiles {
	if len(ds) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += d.Seconds()
	}
	h := func(d sim.Time) float64 { return d.Seconds() / 3600 }
	q := func(p float64) float64 {
		k := int(math.Ceil(p*float64(len(s)))) - 1
		return h(s[max(0, min(k, len(s)-1))])
	}
	return Quantiles{Mean: sum / float64(len(s)) / 3600, P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: h(s[len(s)-1])}
}

type boundary struct {
	at   sim.Time
	iv   int
	open bool
}

// sweep computes the down fractions and the capacity series exactly from
// the down intervals.
func (t *Tally) sweep(r *Report, horizon sim.Time, thresholds []float64) {
	need := make([]int, len(thresholds))
	for i, x := range thresholds {
		need[i] = max(1, int(math.Ceil(x*float64(t.gpus)-1e-9)))
		r.Down = append(r.Down, DownFraction{Threshold: x, GPUs: need[i]})
	}
	r.Capacity = []CapacityStep{{0, t.gpus}}
	r.MinAvailable = t.gpus
	if horizon <= 0 {
		return
	}
	bs := make([]boundary, 0, 2*len(t.down))
	for i, iv := range t.down {
		s, e := max(iv.start, 0), min(iv.end, horizon)
		if e <= s {
			continue
		}
		bs = append(bs, boundary{s, i, true}, boundary{e, i, false})
	}
	slices.SortStableFunc(bs, func(a, b boundary) int { return cmp.Compare(a.at, b.at) })
	perGPU := map[int]int32{}
	down := 0
	var last sim.Time
	var anyNs, weighted float64
	thNs := make([]float64, len(need))
	for i := 0; i < len(bs); {
		at := bs[i].at
		span := float64(at - last)
		if down > 0 {
			anyNs += span
			weighted += span * float64(down)
			for j, n := range need {
				if down >= n {
					thNs[j] += span
				}
			}
		}
		for ; i < len(bs) && bs[i].at == at; i++ {
			iv := t.down[bs[i].iv]
			for g := iv.first; g < iv.first+iv.n; g++ {
				if bs[i].open {
					if perGPU[g]++; perGPU[g] == 1 {
						down++
					}
				} else {
					if perGPU[g]--; perGPU[g] == 0 {
						delete(perGPU, g)
						down--
					}
				}
			}
		}
		last = at
		if avail := t.gpus - down; avail != r.Capacity[len(r.Capacity)-1].Available {
			if n := len(r.Capacity); r.Capacity[n-1].Time == at {
				r.Capacity[n-1].Available = avail
				if n > 1 && r.Capacity[n-2].Available == avail {
					r.Capacity = r.Capacity[:n-1]
				}
			} else {
				r.Capacity = append(r.Capacity, CapacityStep{at, avail})
			}
			r.MinAvailable = min(r.MinAvailable, avail)
		}
	}
	// down is 0 after the last boundary (intervals are clipped to horizon).
	hz := float64(horizon)
	r.AnyDown = anyNs / hz
	r.MeanGPUsDown = weighted / hz
	for j := range need {
		r.Down[j].TimeFraction = thNs[j] / hz
	}
}
