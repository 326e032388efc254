package fleet

import (
	"reflect"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// TestReleasedClientReqIsZero: a released client request record, which
// releaseClientReq resets field by field rather than as a whole, equals a
// zero record but for req (newClientReq overwrites it) and the capacity
// of its copies list, whether or not it armed timers; the timers it armed
// are cancelled. Every field of clientReq is set first (by reflection, so
// a field added later and not reset fails it; so does not resetting
// attempts).
func TestReleasedClientReqIsZero(t *testing.T) {
	for _, armed := range []bool{false, true} {
		eng := sim.NewEngine()
		g := &Gateway{eng: eng}
		cr := g.newClientReq(&workloads.Request{ID: 7, InputTokens: 100, OutputTokens: 10})
		v := reflect.ValueOf(cr).Elem()
		for i := range v.NumField() { // every field non-zero
			f := v.Field(i)
			switch v.Type().Field(i).Name {
			case "req", "copies", "timeout", "deadline", "hedge", "retry", "armed":
				continue // set below
			case "gen":
				continue // the record's generation: it counts up, never resets
			}
			f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
			switch f.Kind() {
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Int, reflect.Int32, reflect.Int64:
				f.SetInt(3)
			default:
				t.Fatalf("clientReq.%s: kind %v not covered by this test", v.Type().Field(i).Name, f.Kind())
			}
		}
		g.newCopy(cr, engine.CopyPrimary)
		fired := 0
		if armed {
			cr.armed = true
			for _, id := range []*sim.EventID{&cr.timeout, &cr.deadline, &cr.hedge, &cr.retry} {
				*id = eng.Schedule(10, sim.PriorityNormal, func(sim.Time) { fired++ })
			}
		}
		g.releaseClientReq(cr)
		eng.Run(100)
		if fired != 0 {
			t.Errorf("armed %v: %d timers fired after the release", armed, fired)
		}
		got := *cr
		got.req = workloads.Request{}
		if got.gen != 1 {
			t.Errorf("armed %v: generation %d after one release, want 1", armed, got.gen)
		}
		got.gen = 0
		if len(got.copies) != 0 {
			t.Fatalf("armed %v: %d copies left", armed, len(got.copies))
		}
		got.copies = nil
		if !reflect.DeepEqual(got, clientReq{}) {
			t.Errorf("armed %v: released record %+v, want zero but req and copies' capacity", armed, got)
		}
	}
}
