package experiments

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"

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
func safeRun(sc *scenario.Scenario, o Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &InternalError{Value: r, Stack: debug.Stack()}
		}
	}()
	return Run(sc, o)
}

// Temporary files and directories being written (WriteFileAtomic's, a
// run directory being built, requests.csv being streamed) are registered
// here while they exist, so that a command stopped by SIGINT or SIGTERM
// can remove them (RemoveTemps) and leave no partial file behind.
var temps struct {
	sync.Mutex
	paths map[string]bool
}

// AddTemp registers a temporary file or directory.
func AddTemp(path string) {
	temps.Lock()
	defer temps.Unlock()
	if temps.paths == nil {
		temps.paths = map[string]bool{}
	}
	temps.paths[path] = true
}

// DoneTemp unregisters a temporary path (renamed into place or removed).
func DoneTemp(path string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.paths, path)
}

// RemoveTemps removes every registered temporary path; a signal handler
// calls it before exiting.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	for p := range temps.paths {
		os.RemoveAll(p)
		delete(temps.paths, p)
	}
}
