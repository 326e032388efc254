package plot

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// TrainingPoint is a training_timeline.csv row: a training job just after
// one of its events.
type TrainingPoint struct {
	Arm        string
	TimeH      float64
	Event      string // one of results.TrainingEvents
	Category   string
	State      string // one of results.TrainingStates
	WorkH      float64
	CommittedH float64
	LostH      float64
	// Checkpoints, SparesAvailable and HostsOut are counts after the event.
	Checkpoints, SparesAvailable, HostsOut int
}

func readTrainingTimeline(t *table) ([]TrainingPoint, error) {
	if err := t.require(results.Arm, results.TimeH, results.Event, results.JobState, results.WorkH, results.CommittedH); err != nil {
		return nil, err
	}
	var out []TrainingPoint
	for i := range t.len() {
		c := cursor{t: t, i: i}
		p := TrainingPoint{Arm: c.str(results.Arm), TimeH: c.num(results.TimeH), Event: c.str(results.Event),
			Category: c.str(results.Category), State: c.str(results.JobState), WorkH: c.num(results.WorkH),
			CommittedH: c.num(results.CommittedH), LostH: c.optNum(results.LostH), Checkpoints: c.integer(results.Checkpoints),
			SparesAvailable: c.integer(results.SparesAvailable), HostsOut: c.integer(results.HostsOut)}
		switch {
		case c.err != nil:
		case !slices.Contains(results.TrainingEvents, p.Event):
			c.fail(results.Event, "%q is not one of %s", p.Event, strings.Join(results.TrainingEvents, ", "))
		case !slices.Contains(results.TrainingStates, p.State):
			c.fail(results.JobState, "%q is not one of %s", p.State, strings.Join(results.TrainingStates, ", "))
		case p.TimeH < 0 || p.WorkH < 0 || p.CommittedH < 0 || p.LostH < 0 || math.IsNaN(p.LostH):
			c.fail(results.TimeH, "times and work must be non-negative")
		case len(out) > 0 && out[len(out)-1].Arm == p.Arm && p.TimeH < out[len(out)-1].TimeH:
			c.fail(results.TimeH, "%v is before the previous event (%v): events must be in time order", p.TimeH, out[len(out)-1].TimeH)
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, p)
	}
	return out, nil
}

// TrainingTimeline draws one training run (an arm's replication 0) over
// wall-clock time (hours, or days past three days) as the time it has
// lost so far: wall-clock time minus the compute done and not lost, in
// hours. A failure-free job without checkpoints would stay at 0; checkpoint
// writes and stragglers make the line creep up while the job runs, a
// failure that stops it (or aborts its restart) jumps it up by the work
// since the last checkpoint (a cross), and while stopped it climbs one hour per hour until the
// restart (a triangle). Along the x axis a thick band marks where the job
// was stopped: waiting for spare hosts in one colour, detecting or
// restarting in another. The legend counts each, and the checkpoints
// written. The figure is named training_timeline, or
// training_timeline_ARM for an arm of a sweep or A/B run.
func TrainingTimeline(m Meta, arm string, pts []TrainingPoint) (Figure, error) {
	var sel []TrainingPoint
	for _, p := range pts {
		if p.Arm == arm {
			sel = append(sel, p)
		}
	}
	if len(sel) == 0 {
		return Figure{}, fmt.Errorf("plot: no training timeline for arm %q", arm)
	}
	end := sel[len(sel)-1].TimeH
	unit, div := "h", 1.0
	if end > 72 {
		unit, div = "days", 24
	}
	title := "Training run, time lost"
	if arm != "" {
		title += " (" + armLabel(m, arm) + ")"
	}
	p := newPlot(m, title, "wall-clock time ("+unit+")", "time lost so far (h): wall clock − compute kept")
	var lost, fails, evictions, restarts plotter.XYs
	var waitBands, stopBands []plotter.XYs
	var waitH, stopH float64
	for i, q := range sel {
		x := q.TimeH / div
		if q.LostH > 0 {
			lost = append(lost, plotter.XY{X: x, Y: q.TimeH - q.WorkH - q.LostH})
		}
		y := q.TimeH - q.WorkH
		lost = append(lost, plotter.XY{X: x, Y: y})
		switch q.Event {
		case "failure":
			// It interrupted the job if it was running or restarting (an
			// aborted restart); one that hits a stopped job changes nothing.
			if q.LostH > 0 || i > 0 && (sel[i-1].State == "running" || sel[i-1].State == "restarting") {
				fails = append(fails, plotter.XY{X: x, Y: y})
			}
		case "evicted":
			// A straggler's host evicted (training.evict_stragglers): the
			// job restarts without it.
			evictions = append(evictions, plotter.XY{X: x, Y: y})
		case "restarted":
			restarts = append(restarts, plotter.XY{X: x, Y: y})
		}
		if q.State != "running" && i+1 < len(sel) {
			band := plotter.XYs{{X: x, Y: 0}, {X: sel[i+1].TimeH / div, Y: 0}}
			if q.State == "waiting-spares" {
				waitBands = append(waitBands, band)
				waitH += sel[i+1].TimeH - q.TimeH
			} else {
				stopBands = append(stopBands, band)
				stopH += sel[i+1].TimeH - q.TimeH
			}
		}
	}
	last := sel[len(sel)-1]
	wl := line(lost, palette[0], nil, 1.5)
	p.Add(wl)
	ettr := 0.0
	if last.TimeH > 0 {
		ettr = last.WorkH / last.TimeH
	}
	p.Legend.Add(fmt.Sprintf("time lost (ETTR %.1f%% at the end)", 100*ettr), wl)
	addMarks(p, fails, palette[1], draw.CrossGlyph{}, 3, "failure stopping the job", maxTrainingMarks)
	addMarks(p, evictions, palette[3], draw.PlusGlyph{}, 3, "straggler evicted", maxTrainingMarks)
	addMarks(p, restarts, palette[6], draw.TriangleGlyph{}, 2.5, "restart", maxTrainingMarks)
	for i, b := range stopBands {
		l := line(b, palette[5], nil, 6)
		p.Add(l)
		if i == 0 {
			p.Legend.Add(fmt.Sprintf("detecting or restarting (%s h)", fmtTick(round1(stopH))), l)
		}
	}
	for i, b := range waitBands {
		l := line(b, palette[4], nil, 6)
		p.Add(l)
		if i == 0 {
			p.Legend.Add(fmt.Sprintf("waiting for spare hosts (%s h)", fmtTick(round1(waitH))), l)
		}
	}
	if last.Checkpoints > 0 {
		// A legend line for the checkpoints, which have no mark of their
		// own: their writes are the slope while running.
		p.Legend.Add(fmt.Sprintf("%d checkpoints written", last.Checkpoints))
	}
	p.X.Min, p.Y.Min = 0, 0
	name := "training_timeline"
	if arm != "" {
		name += "_" + fileSafe(arm)
	}
	return Figure{Name: name, Plot: p}, nil
}

// maxTrainingMarks is the most marks of one kind the training timeline
// draws; past it (a months-long run with hundreds of interruptions) the
// legend gives the count alone: a plot area some 600 points wide holds
// about 100 marks of 6 points side by side, and more merge into a band
// that hides the line beneath (Llama 3's 54 days drew 765 as one).
const maxTrainingMarks = 100

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// fileSafe turns an arm name into a file-name part: letters, digits, '.',
// '-' and '_' kept, runs of anything else one '_'.
func fileSafe(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_'
		if ok {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}
