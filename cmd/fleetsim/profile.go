package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/fleetsim/fleetsim/experiments/report"
)

// cpuProfile is the --cpuprofile of the command running, if any: the
// profile is written to a temporary file beside path and renamed into
// place only when the command succeeds (nothing is left behind by a
// failed or interrupted one, like every other output).
var cpuProfile struct {
	f    *os.File
	path string
}

// startCPUProfile starts profiling into a temporary sibling of path.
func startCPUProfile(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return usagef("--cpuprofile %s: %v", path, err)
	}
	report.AddTemp(f.Name())
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		report.DoneTemp(f.Name())
		return usagef("--cpuprofile %s: %v", path, err)
	}
	cpuProfile.f, cpuProfile.path = f, path
	return nil
}

// stopCPUProfile stops a started profile and keeps it (renamed to its
// path) when ok, else removes it. An error keeping it is returned.
func stopCPUProfile(ok bool) error {
	f := cpuProfile.f
	if f == nil {
		return nil
	}
	cpuProfile.f = nil
	pprof.StopCPUProfile()
	tmp := f.Name()
	defer report.DoneTemp(tmp)
	err := f.Close()
	if ok && err == nil {
		err = os.Chmod(tmp, 0o644) // as the run directory's files
	}
	if ok && err == nil {
		err = os.Rename(tmp, cpuProfile.path)
	}
	if !ok || err != nil {
		os.Remove(tmp)
	}
	if err != nil {
		return fmt.Errorf("--cpuprofile %s: %w", cpuProfile.path, err)
	}
	return nil
}
