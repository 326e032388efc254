package workloads

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/sim"
)

// Interpolations of a piecewise rate profile (ArrivalConfig.Interpolation).
const (
	InterpLinear = "linear"
	InterpStep   = "step"
)

var interpNames = []string{InterpLinear, InterpStep}

// RatePoint is one point of a rate profile: from TimeS on, the arrival rate
// is RatePerS (held until the next point, or moving linearly towards it).
type RatePoint struct {
	TimeS    float64 // seconds from the start of the run (or of the cycle)
	RatePerS float64 // arrival rate at TimeS, requests per second (>= 0)
}

// Piecewise is a non-homogeneous Poisson process whose rate follows a
// profile of points: a measured day of traffic, a launch ramp, a burst.
// Between points the rate is held ("step") or interpolated linearly
// ("linear"). After the last point the rate is held for ever, unless
// RepeatS > 0: then the profile is a cycle of RepeatS seconds (a linear
// profile's last segment then runs back to the first point's rate).
//
// It is sampled exactly, not by thinning: with the cumulative intensity
// Λ(t) = ∫₀ᵗ rate, the next arrival after prev is the t with
// Λ(t) − Λ(prev) = E, E ~ Exp(1). Λ is piecewise quadratic, so each
// arrival costs one exponential draw and a binary search over the points,
// whatever the rate; a long stretch at rate 0 costs nothing.
//
// Build one with NewPiecewise (which checks the points); its methods panic
// on a zero value.
type Piecewise struct {
	t      []float64 // point times, seconds; t[0] = 0, increasing; cycle end appended when repeating
	r      []float64 // rates at t, per second (scaled)
	cum    []float64 // Λ(t[i]), expected arrivals from 0 to t[i]
	linear bool
	cycleS float64 // 0: hold the last rate after the last point
}

// NewPiecewise checks points and returns the process. points must start at
// TimeS = 0, have strictly increasing times, finite rates >= 0 and at least
// one positive rate; scale (> 0) multiplies every rate; repeatS is 0 or at
// least the last point's time.
func NewPiecewise(points []RatePoint, interpolation string, scale, repeatS float64) (*Piecewise, error) {
	if len(points) == 0 {
		return nil, errors.New("a rate profile needs at least one point")
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("scale must be a finite number > 0, found %v", scale)
	}
	linear := false
	switch interpolation {
	case InterpLinear, "":
		linear = true
	case InterpStep:
	default:
		return nil, fmt.Errorf("interpolation %q: valid names: %s", interpolation, strings.Join(interpNames, ", "))
	}
	if points[0].TimeS != 0 {
		return nil, fmt.Errorf("the first point must be at t_s = 0, found %v", points[0].TimeS)
	}
	positive := false
	for i, p := range points {
		if !(p.RatePerS >= 0) || math.IsInf(p.RatePerS, 0) {
			return nil, fmt.Errorf("point %d: rate_per_s must be a finite number >= 0, found %v", i+1, p.RatePerS)
		}
		if math.IsNaN(p.TimeS) || math.IsInf(p.TimeS, 0) || p.TimeS > maxDurationS {
			return nil, fmt.Errorf("point %d: t_s must be a finite number of seconds <= %g, found %v", i+1, maxDurationS, p.TimeS)
		}
		if i > 0 && !(p.TimeS > points[i-1].TimeS) {
			return nil, fmt.Errorf("point %d: t_s must be after the previous point's %v, found %v", i+1, points[i-1].TimeS, p.TimeS)
		}
		positive = positive || p.RatePerS > 0
	}
	if !positive {
		return nil, errors.New("every rate is 0: nothing would ever arrive")
	}
	last := points[len(points)-1]
	if math.IsNaN(repeatS) || repeatS < 0 || math.IsInf(repeatS, 0) || repeatS > maxDurationS {
		return nil, fmt.Errorf("repeat_s must be 0 (hold the last rate) or a finite number of seconds, found %v", repeatS)
	}
	if repeatS > 0 && repeatS < last.TimeS {
		return nil, fmt.Errorf("repeat_s = %v is before the last point's t_s = %v", repeatS, last.TimeS)
	}
	p := &Piecewise{linear: linear, cycleS: repeatS}
	for _, pt := range points {
		p.t = append(p.t, pt.TimeS)
		p.r = append(p.r, pt.RatePerS*scale)
	}
	if repeatS > last.TimeS {
		end := p.r[len(p.r)-1]
		if linear {
			end = p.r[0]
		}
		p.t, p.r = append(p.t, repeatS), append(p.r, end)
	}
	p.cum = make([]float64, len(p.t))
	for i := 1; i < len(p.t); i++ {
		p.cum[i] = p.cum[i-1] + p.segmentArea(i-1, p.t[i]-p.t[i-1])
	}
	if repeatS > 0 && !(p.cum[len(p.cum)-1] > 0) {
		return nil, errors.New("the cycle's rates are all 0: nothing would ever arrive")
	}
	return p, nil
}

// slope is segment i's rate change per second (0 for a step profile and for
// the open last segment).
func (p *Piecewise) slope(i int) float64 {
	if !p.linear || i+1 >= len(p.t) {
		return 0
	}
	return (p.r[i+1] - p.r[i]) / (p.t[i+1] - p.t[i])
}

// segmentArea is Λ over the first u seconds of segment i.
func (p *Piecewise) segmentArea(i int, u float64) float64 {
	return p.r[i]*u + p.slope(i)*u*u/2
}

// RateAt returns the rate at t seconds from the start, per second.
func (p *Piecewise) RateAt(tS float64) float64 {
	tS = p.fold(tS)
	i := sort.SearchFloat64s(p.t, tS)
	if i == len(p.t) || p.t[i] > tS {
		i--
	}
	return p.r[i] + p.slope(i)*(tS-p.t[i])
}

// MeanRatePerS is the profile's mean rate: over one cycle when it repeats,
// else over its points' span (the last rate when the span is 0).
func (p *Piecewise) MeanRatePerS() float64 {
	span := p.t[len(p.t)-1]
	if span == 0 {
		return p.r[0]
	}
	return p.cum[len(p.cum)-1] / span
}

// fold maps t into [0, cycle) for a repeating profile.
func (p *Piecewise) fold(tS float64) float64 {
	if p.cycleS > 0 {
		return tS - math.Floor(tS/p.cycleS)*p.cycleS
	}
	return tS
}

// lambda is Λ(t), the expected number of arrivals in [0, t].
func (p *Piecewise) lambda(tS float64) float64 {
	base := 0.0
	if p.cycleS > 0 {
		k := math.Floor(tS / p.cycleS)
		base = k * p.cum[len(p.cum)-1]
		tS -= k * p.cycleS
	}
	i := sort.SearchFloat64s(p.t, tS)
	if i == len(p.t) || p.t[i] > tS {
		i--
	}
	return base + p.cum[i] + p.segmentArea(i, tS-p.t[i])
}

// inverse is the t with Λ(t) = target, or +Inf when Λ never reaches it.
func (p *Piecewise) inverse(target float64) float64 {
	base := 0.0
	if p.cycleS > 0 {
		per := p.cum[len(p.cum)-1]
		k := math.Floor(target / per)
		base = k * p.cycleS
		target -= k * per
		if target >= per { // rounding at a cycle's end
			base, target = base+p.cycleS, 0
		}
	}
	// The segment whose Λ range holds target: C[i] <= target < C[i+1]
	// (zero-area segments are never chosen).
	i := sort.Search(len(p.cum), func(j int) bool { return p.cum[j] > target }) - 1
	d := target - p.cum[i]
	r, s := p.r[i], p.slope(i)
	var u float64
	switch {
	case s == 0 && r == 0:
		return math.Inf(1) // the open last segment at rate 0
	case s == 0:
		u = d / r
	default:
		// s/2·u² + r·u − d = 0, in the form that is stable for s → 0.
		disc := r*r + 2*s*d
		if disc < 0 {
			disc = 0
		}
		u = 2 * d / (r + math.Sqrt(disc))
	}
	if i+1 < len(p.t) {
		u = min(u, p.t[i+1]-p.t[i])
	}
	return base + p.t[i] + u
}

// NextArrival implements ArrivalProcess.
func (p *Piecewise) NextArrival(rng *rand.Rand, prev sim.Time) sim.Time {
	if p == nil || len(p.t) == 0 {
		panic("workloads: Piecewise not built with NewPiecewise")
	}
	e := rng.ExpFloat64()
	from := prev.Seconds()
	t := p.inverse(p.lambda(from) + e)
	if math.IsInf(t, 1) || t-from >= float64(sim.Forever-prev)/1e9 {
		return sim.Forever
	}
	return addSeconds(prev, max(t-from, 0))
}

// ReadRateProfile reads a rate profile CSV: a header "t_s,rate_per_s" then
// one point per line. Errors name the file and line. fsys nil means the
// OS's file system.
func ReadRateProfile(fsys fs.FS, path string) ([]RatePoint, error) {
	f, err := infile.Open(fsys, path, infile.RateProfile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseRateProfile(path, f)
}

// maxRatePoints bounds a rate profile's length (a day at one point per
// second is 86,400).
const maxRatePoints = 1_000_000

func parseRateProfile(name string, r io.Reader) ([]RatePoint, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 2
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%s:1: empty file; want a header t_s,rate_per_s", name)
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	h0 := strings.TrimPrefix(strings.TrimSpace(head[0]), "\ufeff")
	if h0 != "t_s" || strings.TrimSpace(head[1]) != "rate_per_s" {
		return nil, fmt.Errorf("%s:1: header must be t_s,rate_per_s, found %q", name, strings.Join(head, ","))
	}
	var pts []RatePoint
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Before FieldPos: a record that did not parse has no fields.
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(pts) == maxRatePoints {
			return nil, fmt.Errorf("%s:%d: more than %d points", name, line, maxRatePoints)
		}
		var p RatePoint
		if p.TimeS, err = strconv.ParseFloat(strings.TrimSpace(rec[0]), 64); err != nil {
			return nil, fmt.Errorf("%s:%d: t_s: not a number: %q", name, line, rec[0])
		}
		if p.RatePerS, err = strconv.ParseFloat(strings.TrimSpace(rec[1]), 64); err != nil {
			return nil, fmt.Errorf("%s:%d: rate_per_s: not a number: %q", name, line, rec[1])
		}
		if !(p.RatePerS >= 0) || math.IsInf(p.RatePerS, 0) {
			return nil, fmt.Errorf("%s:%d: rate_per_s must be a finite number >= 0, found %v", name, line, p.RatePerS)
		}
		if math.IsNaN(p.TimeS) || math.IsInf(p.TimeS, 0) || p.TimeS < 0 || p.TimeS > maxDurationS {
			return nil, fmt.Errorf("%s:%d: t_s must be a finite number of seconds in [0, %g], found %v", name, line, maxDurationS, p.TimeS)
		}
		if n := len(pts); n == 0 && p.TimeS != 0 {
			return nil, fmt.Errorf("%s:%d: the first point must be at t_s = 0, found %v", name, line, p.TimeS)
		} else if n > 0 && !(p.TimeS > pts[n-1].TimeS) {
			return nil, fmt.Errorf("%s:%d: t_s must be after the previous point's %v, found %v", name, line, pts[n-1].TimeS, p.TimeS)
		}
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s:2: no points after the header", name)
	}
	return pts, nil
}

// validatePiecewise records the problems of a "piecewise" arrival's keys.
// Inline points are checked here; a profile file is read by CheckProfile.
func (a *ArrivalConfig) validatePiecewise(prefix string, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	ps.OneOf(k("interpolation"), a.Interpolation, interpNames)
	ps.Positive(k("scale"), a.Scale)
	if math.IsNaN(a.RepeatS) || a.RepeatS < 0 || math.IsInf(a.RepeatS, 0) {
		ps.Add(k("repeat_s"), "must be 0 (hold the last rate) or a finite number of seconds > 0, found %v", a.RepeatS)
	}
	switch {
	case len(a.Points) > 0 && a.ProfileFile != "":
		ps.Add(k("points"), "give either points or profile_file, not both")
		return
	case len(a.Points) == 0 && a.ProfileFile == "":
		ps.Add(k("points"), "process %q needs a rate profile: points = [[t_s, rate_per_s], ...] or profile_file = \"rates.csv\"", ProcessPiecewise)
		return
	case a.ProfileFile != "":
		return
	}
	pts := make([]RatePoint, len(a.Points))
	for i, p := range a.Points {
		if len(p) != 2 {
			ps.Add(k("points"), "point %d has %d numbers; each point is [t_s, rate_per_s]", i+1, len(p))
			return
		}
		pts[i] = RatePoint{TimeS: p[0], RatePerS: p[1]}
	}
	if ps.Err() != nil {
		return // scale or interpolation already wrong
	}
	if _, err := NewPiecewise(pts, a.Interpolation, a.Scale, a.RepeatS); err != nil {
		ps.Add(k("points"), "%v", err)
	}
}

// CheckProfile reads a "piecewise" arrival's ProfileFile (when it has one)
// and checks it, so that a missing file or a bad line is refused before
// anything runs; the points are kept for Piecewise. The error names the
// file and line.
func (a *ArrivalConfig) CheckProfile() error {
	if a.Process != ProcessPiecewise || a.ProfileFile == "" {
		return nil
	}
	pts, err := ReadRateProfile(a.FS, a.ProfileFile)
	if err != nil {
		return err
	}
	if _, err := NewPiecewise(pts, a.Interpolation, a.Scale, a.RepeatS); err != nil {
		return fmt.Errorf("%s: %v", a.ProfileFile, err)
	}
	a.profile = pts
	return nil
}

// Piecewise returns the process a "piecewise" arrival describes, reading
// its profile file if CheckProfile has not.
func (a *ArrivalConfig) Piecewise() (*Piecewise, error) {
	if a.ProfileFile != "" {
		if a.profile == nil {
			if err := a.CheckProfile(); err != nil {
				return nil, err
			}
		}
		return NewPiecewise(a.profile, a.Interpolation, a.Scale, a.RepeatS)
	}
	pts := make([]RatePoint, 0, len(a.Points))
	for _, p := range a.Points {
		if len(p) != 2 {
			return nil, fmt.Errorf("point %d has %d numbers; each point is [t_s, rate_per_s]", len(pts)+1, len(p))
		}
		pts = append(pts, RatePoint{TimeS: p[0], RatePerS: p[1]})
	}
	return NewPiecewise(pts, a.Interpolation, a.Scale, a.RepeatS)
}

// RateFunc returns the arrival rate at t seconds from the start that a
// describes, per second: constant for "poisson" and "gamma", the sinusoid
// of "diurnal", the profile of "piecewise". A predictive autoscaler reads
// it (a planner's forecast that happens to be exact).
func (a *ArrivalConfig) RateFunc() (func(tS float64) float64, error) {
	switch a.Process {
	case ProcessDiurnal:
		d := Diurnal{MeanRatePerS: a.RatePerS, Amplitude: a.Amplitude, PeriodS: a.PeriodS, PhaseS: a.PhaseS}
		w := 2 * math.Pi / d.PeriodS
		return func(tS float64) float64 {
			return d.MeanRatePerS * (1 + d.Amplitude*math.Cos(w*(tS-d.PhaseS)))
		}, nil
	case ProcessPiecewise:
		p, err := a.Piecewise()
		if err != nil {
			return nil, err
		}
		return p.RateAt, nil
	}
	r := a.RatePerS
	return func(float64) float64 { return r }, nil
}
