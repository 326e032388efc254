package engine

import (
	"reflect"
	"testing"

	"github.com/fleetsim/fleetsim/workloads"
)

// TestSeqOutcomeSetsEveryField: seq.outcome, which writes a finished
// sequence's Outcome field by field into the replica's reused record,
// writes every field of Outcome (checked by reflection over a record
// filled with junk first, so a field added to Outcome and not written
// fails it), with the values the composite literal it replaced gave.
func TestSeqOutcomeSetsEveryField(t *testing.T) {
	c := &Copy{}
	s := &seq{cp: c, req: workloads.Request{ID: 9}, enqueued: 11, sched: 12, first: 13, cachedFirst: 14, preempts: 15}
	want := Outcome{Copy: c, Req: &s.req, Replica: 16, Enqueued: 11, Scheduled: 12, FirstToken: 13, Finished: 17,
		CachedTokens: 14, Preemptions: 15, ClientDelay: 18, FinishDelay: 19}
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
	s.outcome(&o, 16, 17, 18, 19)
	if o != want {
		t.Errorf("outcome %+v, want %+v", o, want)
	}
}
