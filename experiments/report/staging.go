package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// A run directory is built whole in a temporary sibling and renamed into
// place (RunDir), so that it never holds files of two runs (a stale
// failures.csv from an earlier run that had failures) or a half-written
// run. An existing directory is replaced only when everything in it, at any
// depth, is something fleetsim writes into a run directory (the layout of
// package results); anything else (part files, a user's files, a symbolic
// link, --out .) is refused, never moved or deleted.

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
	restoreOld(final)
	if err := checkReplaceable(final); err != nil {
		return nil, err
	}
	parent := filepath.Dir(final)
	made, err := missingDirs(parent)
	if err != nil {
		removeEmpty(made)
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
// anything but what a run directory holds, at any depth.
func checkReplaceable(final string) error {
	fi, err := os.Lstat(final)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", final, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("--out %s: is a symbolic link; fleetsim replaces only an earlier run's directory: give a new or empty directory", final)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--out %s: exists and is not a directory", final)
	}
	foreign, err := ForeignPath(final)
	if err != nil {
		return fmt.Errorf("--out %s: %w", final, err)
	}
	if foreign != "" {
		return fmt.Errorf("--out %s: exists and holds files a run does not write (%s); fleetsim replaces only an earlier run's directory: give a new or empty directory",
			final, foreign)
	}
	return nil
}

// ForeignPath returns the first path under dir, in lexical order and
// relative to it, that fleetsim does not write into a run directory (the
// layout of package results): a name it does not write, a directory where
// it writes a file or the reverse, a symbolic link, a device; "" when
// there is none.
func ForeignPath(dir string) (string, error) {
	foreign := ""
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if !ownPath(filepath.ToSlash(rel), d.Type()) {
			foreign = rel
			return fs.SkipAll
		}
		return nil
	})
	return foreign, err
}

// ownPath says whether rel (slash-separated, relative to a run directory)
// of type typ is a path fleetsim writes there.
func ownPath(rel string, typ fs.FileMode) bool {
	parts := strings.Split(rel, "/")
	dir, file := typ.IsDir(), typ.IsRegular()
	switch {
	case len(parts) == 1:
		if parts[0] == results.ArmsDir || parts[0] == results.PlotsDir {
			return dir
		}
		return file && slices.Contains(results.RunDirFiles, parts[0])
	case parts[0] == results.PlotsDir:
		return len(parts) == 2 && file && results.IsPlotFile(parts[1])
	case parts[0] == results.ArmsDir:
		if scenario.CheckName(parts[1]) != nil && scenario.CheckPointName(parts[1]) != nil &&
			scenario.CheckPointName(strings.ReplaceAll(parts[1], ",", " ")) != nil { // an arm, a sweep point (results.ArmDir; spaced before)
			return false
		}
		if len(parts) == 2 {
			return dir
		}
		return len(parts) == 3 && file && slices.Contains(results.ArmFiles, parts[2])
	}
	return false
}

// Path is where the run's files are written until Commit.
func (r *RunDir) Path() string { return r.tmp }

// Final is the run directory's name once committed.
func (r *RunDir) Final() string { return r.final }

// Commit writes the run's data dictionary (WriteDictionary) and renames
// the temporary directory into place, replacing an earlier
// run directory there (checked again: it may have changed meanwhile). The
// replacement is one atomic exchange of the two directories where the
// system has one (Linux), so that the run directory is never missing;
// elsewhere it is two renames, which a signal's RemoveTemps waits for, and
// an earlier run left aside by a command killed between them is put back by
// the next NewRunDir.
func (r *RunDir) Commit() error {
	if r.done {
		return nil
	}
	if err := WriteDictionary(r.tmp); err != nil {
		return err
	}
	if err := checkReplaceable(r.final); err != nil {
		return err
	}
	if err := os.Chmod(r.tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(r.final); err != nil {
		if err := os.Rename(r.tmp, r.final); err != nil {
			return fmt.Errorf("--out %s: %w", r.final, err)
		}
		r.committed()
		return nil
	}
	err := exchange(r.tmp, r.final)
	if err == nil {
		// r.tmp now holds the earlier run: check it once more (a file
		// added since checkReplaceable) before removing it.
		if foreign, ferr := ForeignPath(r.tmp); ferr != nil || foreign != "" {
			if ferr == nil {
				ferr = fmt.Errorf("--out %s: holds files a run does not write (%s), added while the command ran; nothing was replaced", r.final, foreign)
			}
			if exchange(r.tmp, r.final) != nil {
				ferr = fmt.Errorf("%w; the earlier run directory is kept in %s", ferr, r.tmp)
				r.committed() // never remove it
			}
			return ferr
		}
		r.done = true
		staged.Delete(filepath.Clean(r.tmp))
		err := os.RemoveAll(r.tmp)
		DoneTemp(r.tmp)
		return err
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		// A directory that cannot be renamed (a mount point): replace
		// its contents, all of them an earlier run's, instead.
		return r.commitInPlace()
	}
	old := r.tmp + oldSuffix
	temps.Lock() // a signal's RemoveTemps waits until both renames are done
	if err := os.Rename(r.final, old); err != nil {
		temps.Unlock()
		return r.commitInPlace()
	}
	err = os.Rename(r.tmp, r.final)
	if err != nil {
		os.Rename(old, r.final)
	} else {
		temps.add(old)
	}
	temps.Unlock()
	if err != nil {
		return fmt.Errorf("--out %s: %w", r.final, err)
	}
	r.committed()
	err = os.RemoveAll(old)
	DoneTemp(old)
	return err
}

// oldSuffix names an earlier run directory moved aside by Commit's two
// renames (where there is no atomic exchange).
const oldSuffix = ".old"

// committed marks r as renamed into place.
func (r *RunDir) committed() {
	r.done = true
	DoneTemp(r.tmp)
	staged.Delete(filepath.Clean(r.tmp))
}

// restoreOld puts back an earlier run directory that a command killed
// between Commit's two renames left aside as .NAME.tmp-*.old, when final
// is missing and that directory holds only a run's files (the newest, if
// several).
func restoreOld(final string) {
	if _, err := os.Lstat(final); !errors.Is(err, os.ErrNotExist) {
		return
	}
	ents, err := os.ReadDir(filepath.Dir(final))
	if err != nil {
		return
	}
	prefix := "." + filepath.Base(final) + ".tmp-"
	var newest string
	var newestT int64
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), oldSuffix) {
			continue
		}
		o := filepath.Join(filepath.Dir(final), e.Name())
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if f, err := ForeignPath(o); err != nil || f != "" {
			continue
		}
		if t := fi.ModTime().UnixNano(); newest == "" || t > newestT {
			newest, newestT = o, t
		}
	}
	if newest != "" {
		os.Rename(newest, final)
	}
}

// commitInPlace empties final (an earlier run's directory that cannot be
// renamed) and moves the new run's files into it.
func (r *RunDir) commitInPlace() error {
	ents, err := os.ReadDir(r.final)
	if err != nil {
		return err
	}
	if foreign, err := ForeignPath(r.final); err != nil || foreign != "" { // checked before; never delete anything else
		if err == nil {
			err = fmt.Errorf("--out %s: holds %s, which a run does not write", r.final, foreign)
		}
		return err
	}
	for _, e := range ents {
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
//
// The directories it makes are removed by RemoveMadeIfEmpty if the command
// fails (they are then empty).
func CheckWritable(dir string) error {
	made, err := missingDirs(dir)
	if err != nil {
		removeEmpty(made)
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-probe-")
	if err != nil {
		removeEmpty(made)
		return fmt.Errorf("--out %s: cannot write there: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
