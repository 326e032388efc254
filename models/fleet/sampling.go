package fleet

import "github.com/fleetsim/fleetsim/sim"

// Sample is the fleet's state at one instant of its time series.
type Sample struct {
	Time              sim.Time
	Arrived           int64 // cumulative
	Completed         int64 // cumulative
	InFlight          int64
	Waiting           int64
	KVUsedFrac        float64 // used blocks / total, over all replicas
	KVCachedFrac      float64 // cached-only blocks / total
	AvailableReplicas int
	// ProvisionedReplicas are the replicas paid for: all of them in a
	// static fleet; under autoscaling, those not parked (loading, serving
	// or draining).
	ProvisionedReplicas int
	// Columns are the provisioned replicas of each of the Sampler's
	// Columns (SetColumns: e.g. each group of a fleet of groups), in
	// order; nil without columns.
	Columns []int `json:",omitempty"`
	// USDPerHour is the fleet's GPU spend rate at the sample (every pool's
	// replicas paid in their phase then, at their rates), and ColumnsUSD
	// that of each column's replicas; both are filled after the run by its
	// price model (experiments/report.PriceSamples), 0 until then.
	USDPerHour float64
	ColumnsUSD []float64 `json:",omitempty"`
}

// Sampler records the fleet's time series and ends a run that cannot
// drain: on each sample after the last arrival it checks DrainLimit.
type Sampler struct {
	eng  *sim.Engine
	rec  *Recorder
	pool *Pool
	in   *intake
	// scaler, when set (autoscaling), says how many replicas are provisioned.
	scaler interface {
		Provisioned() int
		Parked(i int) bool
	}
	// columns are replica index ranges counted apart (SetColumns).
	columns [][2]int

	// Samples is the fleet's time series (see StartSampling).
	Samples  []Sample
	sampleNs sim.Time
	onSample sim.Action

	// DrainLimit stops the run this long after the last arrival even if
	// requests are still in flight (0: no limit); Truncated says it did.
	DrainLimit sim.Time
	Truncated  bool
	// MaxSamples, when > 0, bounds the time series: once it holds this
	// many samples and one more is due, the run stops if every request
	// has arrived (Truncated, as DrainLimit), else the series stops
	// growing (SamplesCut) while the run goes on.
	MaxSamples int
	SamplesCut bool
}

// SetColumns makes each Sample count the provisioned replicas (all of
// them without autoscaling; those not parked with it) of each range
// [first, end) of replica indices apart, in Sample.Columns. Call before
// StartSampling; ranges may overlap.
func (s *Sampler) SetColumns(ranges [][2]int) { s.columns = ranges }

// StartSampling records a Sample every interval from now on, until the
// workload is exhausted and every request has finished. One sample costs
// O(replicas); nothing else in the run depends on it.
func (s *Sampler) StartSampling(interval sim.Time) {
	if interval <= 0 {
		return
	}
	s.sampleNs = interval
	s.onSample = s.sample
	s.eng.Schedule(s.eng.Now(), sim.PriorityMetrics, s.onSample)
}

func (s *Sampler) sample(now sim.Time) {
	if s.MaxSamples > 0 && len(s.Samples) >= s.MaxSamples {
		// One more is due. In the drain (the arrivals are over) the bound
		// ends it as DrainLimit would: with no drain limit, or one the
		// samples outlast, what is still in flight is reported so. Before
		// it (validation bounds the arrivals' span, a trace's too, so only
		// a front end's delay past it gets here) the series stops growing
		// and the ticks go on, keeping the drain's rules.
		if s.in.srcDone {
			if s.rec.InFlight() > 0 {
				s.Truncated = true
				s.eng.Stop()
			}
			return
		}
		s.SamplesCut = true
		s.eng.Schedule(now+s.sampleNs, sim.PriorityMetrics, s.onSample)
		return
	}
	rec, states := s.rec, s.pool.states
	x := Sample{Time: now, Arrived: rec.Arrived, Completed: rec.Completed, InFlight: rec.InFlight()}
	var used, cached, total int64
	x.ProvisionedReplicas = len(s.pool.Replicas)
	if s.scaler != nil {
		x.ProvisionedReplicas = s.scaler.Provisioned()
	}
	if len(s.columns) > 0 {
		x.Columns = make([]int, len(s.columns))
		for k, c := range s.columns {
			for i := c[0]; i < c[1]; i++ {
				if s.scaler == nil || !s.scaler.Parked(i) {
					x.Columns[k]++
				}
			}
		}
	}
	for i, r := range s.pool.Replicas {
		x.Waiting += int64(states[i].Waiting)
		if states[i].Available {
			x.AvailableReplicas++
		}
		used += r.KV().Used()
		cached += r.KV().Cached()
		total += r.KV().Total()
	}
	if total > 0 {
		x.KVUsedFrac = float64(used) / float64(total)
		x.KVCachedFrac = float64(cached) / float64(total)
	}
	s.Samples = append(s.Samples, x)
	if s.in.srcDone && rec.InFlight() == 0 {
		return
	}
	if s.in.srcDone && s.DrainLimit > 0 && now-s.in.lastArrival > s.DrainLimit {
		// Requests stuck where they can never finish (a zombie nobody
		// restarts, no client timeout) would keep the run alive forever:
		// stop, and report them as in flight.
		s.Truncated = true
		s.eng.Stop()
		return
	}
	s.eng.Schedule(now+s.sampleNs, sim.PriorityMetrics, s.onSample)
}
