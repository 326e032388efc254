package models

import (
	"errors"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// intake feeds the workload to the gateway: it pulls requests from a
// Source one at a time (one pending arrival event), so memory does not
// depend on the number of requests.
type intake struct {
	eng         *sim.Engine
	gw          *Gateway
	src         workloads.Source
	next        workloads.Request
	onArrival   sim.Action
	srcErr      error
	srcDone     bool
	lastArrival sim.Time

	// MaxInFlight stops the run (Overloaded) when an arrival finds more
	// than this many requests in flight: arrivals outpace service and the
	// queues would grow without bound. 0: no cap.
	MaxInFlight int64
	// OverloadedAt is when the cap stopped the run; Overloaded says it did.
	OverloadedAt sim.Time
	overloaded   bool
}

// Overloaded reports whether the in-flight cap (MaxInFlight) stopped the
// run.
func (in *intake) Overloaded() bool { return in.overloaded }

func newIntake(eng *sim.Engine, gw *Gateway) *intake {
	in := &intake{eng: eng, gw: gw}
	in.onArrival = in.arrive
	return in
}

// Start pulls the first request from src and schedules its arrival.
func (in *intake) Start(src workloads.Source) error {
	in.src = src
	return in.pull()
}

// Err is the first error the source returned during the run, if any.
func (in *intake) Err() error { return in.srcErr }

func (in *intake) pull() error {
	req, err := in.src.Next()
	if errors.Is(err, io.EOF) {
		in.srcDone = true
		return nil
	}
	if err != nil {
		in.srcErr = err
		in.eng.Stop()
		return err
	}
	if req.Arrival < in.eng.Now() {
		in.srcErr = fmt.Errorf("workload: request %d arrives at %v, before the previous one (%v)", req.ID, req.Arrival, in.eng.Now())
		in.eng.Stop()
		return in.srcErr
	}
	in.next = req
	in.eng.Schedule(req.Arrival, sim.PriorityArrival, in.onArrival)
	return nil
}

func (in *intake) arrive(now sim.Time) {
	in.lastArrival = now
	in.gw.accept(&in.next, now) // in.next is reused by pull below
	if in.MaxInFlight > 0 && in.gw.rec.InFlight() > in.MaxInFlight {
		in.overloaded, in.OverloadedAt = true, now
		in.eng.Stop()
		return
	}
	_ = in.pull()
}

// Drained reports whether the workload is exhausted and no request is in
// flight: nothing left to simulate but background processes.
func (in *intake) Drained() bool { return in.srcDone && in.gw.rec.InFlight() == 0 }
