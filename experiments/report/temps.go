package report

import (
	"os"
	"sync"
)

// Temporary files and directories being written (WriteFileAtomic's, a
// run directory being built, requests.csv being streamed) are registered
// here while they exist, so that a command stopped by SIGINT or SIGTERM
// can remove them (RemoveTemps) and leave no partial file behind.
var temps tempSet

type tempSet struct {
	sync.Mutex
	paths map[string]bool
}

// add registers path; the caller holds the lock.
func (t *tempSet) add(path string) {
	if t.paths == nil {
		t.paths = map[string]bool{}
	}
	t.paths[path] = true
}

// AddTemp registers a temporary file or directory.
func AddTemp(path string) {
	temps.Lock()
	defer temps.Unlock()
	temps.add(path)
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
