package sim_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
)

// holdIncrements are exponential increments with mean 1 ms, drawn once from
// a fixed seed so that the benchmarks time the engine, not the random source.
var holdIncrements = func() []sim.Time {
	r := rand.New(rand.NewPCG(2024, 1))
	xs := make([]sim.Time, 1<<16)
	for i := range xs {
		xs[i] = sim.Time(math.Round(r.ExpFloat64() * float64(sim.Millisecond)))
	}
	return xs
}()

// holdModel is the classic hold model: every event, when it fires, schedules
// one new event at now + an exponential increment, so the queue size stays
// constant; optionally it also schedules a timeout and cancels the previous
// one, the pattern of hedges and request timeouts.
type holdModel struct {
	e           *sim.Engine
	next        int
	left        int
	act         sim.Action
	timeoutAct  sim.Action
	withTimeout bool
	timeout     sim.EventID
}

func newHoldModel(pending int, withTimeout bool) *holdModel {
	h := &holdModel{e: sim.NewEngine(), withTimeout: withTimeout}
	h.act = h.fire
	h.timeoutAct = func(sim.Time) { panic("bench: a timeout fired; it should have been cancelled") }
	for range pending {
		h.e.Schedule(h.increment(), sim.PriorityNormal, h.act)
	}
	return h
}

func (h *holdModel) increment() sim.Time {
	d := holdIncrements[h.next&(len(holdIncrements)-1)]
	h.next++
	return d
}

func (h *holdModel) fire(now sim.Time) {
	h.e.Schedule(now+h.increment(), sim.PriorityNormal, h.act)
	if h.withTimeout {
		h.e.Cancel(h.timeout)
		h.timeout = h.e.Schedule(now+100*sim.Millisecond, sim.PriorityNormal, h.timeoutAct)
	}
	h.left--
	if h.left == 0 {
		h.e.Stop()
	}
}

// fireN fires n events through Engine.Run.
func (h *holdModel) fireN(n int) {
	before := h.e.Fired()
	h.left = n
	h.e.Run(sim.Forever)
	if got := h.e.Fired() - before; got != uint64(n) {
		panic(fmt.Sprintf("bench: fired %d events, want %d", got, n))
	}
}

// warmHoldModels keeps one warmed-up model per configuration for all the
// rounds of a benchmark (the testing package calls it with growing b.N), so
// that every round measures the steady state and pays setup once.
var warmHoldModels = map[string]*holdModel{}

// warmHoldModel returns the model with pending events after max(pending,
// 1e5) warm-up events: a freshly prefilled queue (times all drawn from 0) is
// not yet in the hold model's steady state.
func warmHoldModel(pending int, withTimeout bool) *holdModel {
	k := fmt.Sprint(pending, withTimeout)
	if h, ok := warmHoldModels[k]; ok {
		return h
	}
	h := newHoldModel(pending, withTimeout)
	h.fireN(max(pending, 100_000))
	warmHoldModels[k] = h
	return h
}

// run fires b.N events through Engine.Run and reports events/s.
func (h *holdModel) run(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	h.fireN(b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkHoldModel measures the cost of one event (pop + Schedule of its
// successor from inside the action) in the steady state, with 1e3, 1e5 and
// 1e6 events pending. Run: go test ./sim -run '^$' -bench HoldModel
func BenchmarkHoldModel(b *testing.B) {
	for _, pending := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			warmHoldModel(pending, false).run(b)
		})
	}
}

// BenchmarkScheduleCancel is the hold model with 1e5 chains where every
// event also schedules a timeout and cancels the previous one: two schedules,
// one cancel and one fire per iteration, half of all scheduled events
// cancelled (and dropped by lazy deletion or compaction).
func BenchmarkScheduleCancel(b *testing.B) {
	warmHoldModel(100_000, true).run(b)
	b.ReportMetric(2*float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
}
