// Package sim is fleetsim's discrete-event engine: an integer nanosecond
// clock, a totally ordered event queue with O(1) cancellation, and named
// random streams derived from one master seed.
//
// Read engine.go first: Engine.Schedule puts an Action on the queue, Engine.Run
// fires actions in (time, priority, sequence) order until the queue is empty
// or a stop time is reached. A process that always has at most one event
// pending and moves it often (a replica's next step end, the next arrival)
// holds it in a Timer instead (timer.go): a winner tree beside the queue,
// merged at each pop, in the same order. Nothing here reads the wall clock, sleeps or
// starts a goroutine; an Engine is used by one goroutine at a time.
//
// Streaming statistics (quantile sketches) live in the sub-package quantile.
// sim imports nothing of the rest of the project.
package sim
