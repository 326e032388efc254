package report

import (
	"os"
	"path/filepath"
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

// RemoveTemps removes every registered temporary path, then the
// directories made for output that are left empty (RemoveMadeIfEmpty); a
// signal handler calls it before exiting.
func RemoveTemps() {
	temps.Lock()
	for p := range temps.paths {
		os.RemoveAll(p)
		delete(temps.paths, p)
	}
	temps.Unlock()
	RemoveMadeIfEmpty()
}

// made lists the directories created for a command's output (a run
// directory's missing parents, a shard's --out), each list deepest first.
var made struct {
	sync.Mutex
	lists [][]string
}

// missingDirs makes dir and its missing parents and returns those it
// made, deepest first.
func missingDirs(dir string) ([]string, error) {
	var dirs []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		dirs = append(dirs, d)
	}
	err := os.MkdirAll(dir, 0o755)
	made.Lock()
	made.lists = append(made.lists, dirs)
	made.Unlock()
	return dirs, err
}

// RemoveMadeIfEmpty removes the directories made for output (missingDirs)
// that are empty, deepest first: a command that fails or is stopped leaves
// no empty out/ behind. One that succeeded wrote into them, and they stay.
func RemoveMadeIfEmpty() {
	made.Lock()
	defer made.Unlock()
	for _, dirs := range made.lists {
		removeEmpty(dirs)
	}
	made.lists = nil
}
