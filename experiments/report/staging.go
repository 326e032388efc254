package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// A run directory is built whole in a temporary sibling and renamed into
// place (RunDir), so that it never holds files of two runs (a stale
// failures.csv from an earlier run that had failures) or a half-written
// run. An existing directory is replaced only when everything in it is
// something fleetsim writes into a run directory; anything else (part
// files, a user's files, --out .) is refused, never deleted.

// runDirEntries are the names a run directory may hold; a directory
// holding only these may be replaced by a new run.
var runDirEntries = map[string]bool{
	"summary.json": true, "summary.md": true, "replications.csv": true, "cdf.csv": true,
	"timeseries.csv": true, "failures.csv": true, "requests.csv": true, "ab.csv": true,
	"sweep.csv": true, "ettr.csv": true, "size.csv": true, "size_search.csv": true,
	"arms": true, "plots": true, "report.html": true,
}

// RunDir is a run directory being built.
type RunDir struct {
	final, tmp string
	done       bool
	made       []string // parent directories NewRunDir created, deepest first
}

var staged sync.Map // temporary path → *RunDir: its final name for messages, and commitStaged

// NewRunDir checks that final can be written (its parent can be created
// and written, and final is absent, empty, or an earlier run directory)
// and creates the temporary sibling the run is written into. Call it
// before simulating, so that an unwritable --out is found at once, and
// Abort (deferred) or Commit when done.
func NewRunDir(final string) (*RunDir, error) {
	final = filepath.Clean(final)
	if err := checkReplaceable(final); err != nil {
		return nil, err
	}
	parent := filepath.Dir(final)
	var made []string
	for d := parent; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", final, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(final)+".tmp-")
	if err != nil {
		removeEmpty(made)
		return nil, fmt.Errorf("--out %s: cannot write there: %w", final, err)
	}
	AddTemp(tmp)
	rd := &RunDir{final: final, tmp: tmp, made: made}
	staged.Store(filepath.Clean(tmp), rd)
	return rd, nil
}

// checkReplaceable refuses a final directory that exists and holds
// anything but what a run directory holds.
func checkReplaceable(final string) error {
	fi, err := os.Stat(final)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", final, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--out %s: exists and is not a directory", final)
	}
	ents, err := os.ReadDir(final)
	if err != nil {
		return fmt.Errorf("--out %s: %w", final, err)
	}
	var foreign []string
	for _, e := range ents {
		if !runDirEntries[e.Name()] {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		if len(foreign) > 3 {
			foreign = append(foreign[:3], "...")
		}
		return fmt.Errorf("--out %s: exists and holds files a run does not write (%s); fleetsim replaces only an earlier run's directory: give a new or empty directory",
			final, strings.Join(foreign, ", "))
	}
	return nil
}

// Path is where the run's files are written until Commit.
func (r *RunDir) Path() string { return r.tmp }

// Final is the run directory's name once committed.
func (r *RunDir) Final() string { return r.final }

// Commit renames the temporary directory into place, replacing an earlier
// run directory there (checked again: it may have changed meanwhile).
func (r *RunDir) Commit() error {
	if r.done {
		return nil
	}
	if err := checkReplaceable(r.final); err != nil {
		return err
	}
	if err := os.Chmod(r.tmp, 0o755); err != nil {
		return err
	}
	old := ""
	if _, err := os.Stat(r.final); err == nil {
		old = r.tmp + ".old"
		if err := os.Rename(r.final, old); err != nil {
			// A directory that cannot be renamed (a mount point): replace
			// its contents, all of them an earlier run's, instead.
			return r.commitInPlace()
		}
	}
	if err := os.Rename(r.tmp, r.final); err != nil {
		if old != "" {
			os.Rename(old, r.final)
		}
		return fmt.Errorf("--out %s: %w", r.final, err)
	}
	r.done = true
	DoneTemp(r.tmp)
	staged.Delete(filepath.Clean(r.tmp))
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// commitInPlace empties final (an earlier run's directory that cannot be
// renamed) and moves the new run's files into it.
func (r *RunDir) commitInPlace() error {
	ents, err := os.ReadDir(r.final)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !runDirEntries[e.Name()] { // checked before; never delete anything else
			return fmt.Errorf("--out %s: holds %s, which a run does not write", r.final, e.Name())
		}
		if err := os.RemoveAll(filepath.Join(r.final, e.Name())); err != nil {
			return err
		}
	}
	ents, err = os.ReadDir(r.tmp)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.Rename(filepath.Join(r.tmp, e.Name()), filepath.Join(r.final, e.Name())); err != nil {
			return fmt.Errorf("--out %s: %w", r.final, err)
		}
	}
	r.Abort() // removes the now empty temporary directory
	return nil
}

// Abort removes the temporary directory unless committed.
func (r *RunDir) Abort() {
	if r == nil || r.done {
		return
	}
	r.done = true
	os.RemoveAll(r.tmp)
	DoneTemp(r.tmp)
	staged.Delete(filepath.Clean(r.tmp))
	removeEmpty(r.made)
}

// removeEmpty removes the directories dirs (deepest first) while they are
// empty: a failed command leaves no directory it created behind.
func removeEmpty(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}

// ShownDir is the name to print for a directory being written: the final
// name of a RunDir's temporary directory, else dir itself.
func ShownDir(dir string) string {
	if r, ok := staged.Load(filepath.Clean(dir)); ok {
		return r.(*RunDir).final
	}
	return dir
}

// CommitStaged commits the RunDir whose temporary directory is dir, if
// dir is one: the Finish functions call it once every file is written and
// before printing, so that a closed stdout (fleetsim run | head) cannot
// lose a finished run.
func CommitStaged(dir string) error {
	if r, ok := staged.Load(filepath.Clean(dir)); ok {
		return r.(*RunDir).Commit()
	}
	return nil
}

// CheckWritable makes dir and checks that a file can be created in it
// (a shard's part file is written there after the run): an unwritable
// --out is found before simulating.
func CheckWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-probe-")
	if err != nil {
		return fmt.Errorf("--out %s: cannot write there: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
