package experiments

import (
	"fmt"
	"runtime/debug"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// InternalError is a panic inside a simulation run (a bug in fleetsim, not
// bad input), recovered on the worker goroutine so that the command can
// report it and exit with its own status (3) instead of crashing.
type InternalError struct {
	Value any    // what panicked
	Stack []byte // the goroutine's stack at the panic
}

func (e *InternalError) Error() string { return fmt.Sprintf("internal error: %v", e.Value) }

// safeRun is Run with a panic turned into an *InternalError.
func safeRun(sc *scenario.Scenario, o Options) (res *report.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &InternalError{Value: r, Stack: debug.Stack()}
		}
	}()
	return Run(sc, o)
}
