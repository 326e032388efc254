package workloads

import "math"

// ExpectedRequests is the expected number of requests a generated
// workload's open-loop arrivals send over [0, spanS] seconds, before
// max_requests: the arrival process's expected arrivals (the integral of a
// "piecewise" profile times its scale, the sum of staged rates, rate_per_s
// × span otherwise) times the mean turns per session for kinds "sessions"
// and "agentic" (or request_rate_per_s × span when that sets the rate).
// ok is false when it cannot be told before running: a trace, a closed
// loop, a "piecewise" profile file not yet read (CheckProfile), or keys
// that do not validate (their own problems are reported).
//
// It is what the scenario's request limit is checked against
// (experiments/scenario, MaxExpectedRequests), so that no arrival process
// or session shape escapes it.
func (c *Config) ExpectedRequests(spanS float64) (n float64, ok bool) {
	if c.Kind == KindTrace || c.ClosedLoop() || math.IsNaN(spanS) || spanS < 0 {
		return 0, false
	}
	a := &c.Arrival
	switch {
	case len(c.Stages) > 0:
		t := 0.0
		for _, st := range c.Stages {
			if !(st.RatePerS >= 0) || !(st.DurationS > 0) {
				return 0, false
			}
			d := math.Min(st.DurationS, spanS-t)
			if d <= 0 {
				break
			}
			n += st.RatePerS * d
			t += st.DurationS
		}
	case a.Process == ProcessPiecewise:
		if a.ProfileFile != "" && a.profile == nil {
			return 0, false
		}
		p, err := a.Piecewise()
		if err != nil {
			return 0, false
		}
		if n = math.Inf(1); !math.IsInf(spanS, 1) {
			n = p.lambda(spanS)
		}
	default:
		if !(a.RatePerS > 0) {
			return 0, false
		}
		n = a.RatePerS * spanS
	}
	if c.Kind != KindSessions && c.Kind != KindAgentic {
		return n, true
	}
	if r := c.Sessions.RequestRatePerS; r > 0 && a.Process != ProcessPiecewise && len(c.Stages) == 0 {
		return r * spanS, true
	}
	turns := c.Resolved().Sessions.Turns
	m, ok := meanBound(turns)
	if !ok {
		return 0, false
	}
	return n * m, true
}

// meanBound is d's mean as configured, at least its Min and at most its
// Max (0: no bound): an estimate of the mean turns per session that needs
// no sampling (the clamped distribution's mean lies between Min and Max).
func meanBound(d DistConfig) (float64, bool) {
	m := d.Mean
	if d.Dist == DistEmpirical {
		var sw, s float64
		for i, v := range d.Values {
			w := 1.0
			if len(d.Weights) == len(d.Values) {
				w = d.Weights[i]
			}
			sw += w
			s += w * float64(v)
		}
		if !(sw > 0) {
			return 0, false
		}
		m = s / sw
	}
	if math.IsNaN(m) || m < 0 {
		return 0, false
	}
	m = math.Max(m, float64(d.Min))
	if d.Max > 0 {
		m = math.Min(m, float64(d.Max))
	}
	return m, true
}
