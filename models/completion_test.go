package models

import (
	"reflect"
	"testing"

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
		g.newCopy(cr, CopyPrimary)
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
		if len(got.copies) != 0 {
			t.Fatalf("armed %v: %d copies left", armed, len(got.copies))
		}
		got.copies = nil
		if !reflect.DeepEqual(got, clientReq{}) {
			t.Errorf("armed %v: released record %+v, want zero but req and copies' capacity", armed, got)
		}
	}
}

// TestSeqOutcomeSetsEveryField: seq.outcome, which writes a finished
// sequence's Outcome field by field into the replica's reused record,
// writes every field of Outcome (checked by reflection over a record
// filled with junk first, so a field added to Outcome and not written
// fails it), with the values the composite literal it replaced gave.
func TestSeqOutcomeSetsEveryField(t *testing.T) {
	c := &Copy{}
	s := &seq{cp: c, req: workloads.Request{ID: 9}, enqueued: 11, sched: 12, first: 13, cachedFirst: 14, preempts: 15}
	want := Outcome{Copy: c, Req: &s.req, Replica: 16, Enqueued: 11, Scheduled: 12, FirstToken: 13, Finished: 17,
		CachedTokens: 14, Preemptions: 15, ClientDelay: 18}
	var o Outcome
	v := reflect.ValueOf(&o).Elem()
	for i := range v.NumField() { // junk in every field
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Int, reflect.Int32, reflect.Int64:
			f.SetInt(-99)
		default:
			t.Fatalf("Outcome.%s: kind %v not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	s.outcome(&o, 16, 17, 18)
	if o != want {
		t.Errorf("outcome %+v, want %+v", o, want)
	}
}
