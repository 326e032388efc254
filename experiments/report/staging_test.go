package report

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// TestRunDir: a run directory is built aside and replaces an earlier
// run's whole; a directory with anything else is refused and left alone;
// an aborted one leaves nothing, not even the parents it made.
func TestRunDir(t *testing.T) {
	root := t.TempDir()
	final := filepath.Join(root, "out", "run")
	writeTestFile(t, filepath.Join(final, "failures.csv"), "stale")
	writeTestFile(t, filepath.Join(final, "plots", "ttft_cdf.png"), "stale")

	for _, inPlace := range []bool{false, true} {
		rd, err := NewRunDir(final)
		require.NoError(t, err)
		require.Equal(t, final, ShownDir(rd.Path()))
		writeTestFile(t, filepath.Join(rd.Path(), "summary.json"), "new")
		if inPlace {
			require.NoError(t, rd.commitInPlace()) // as for a mount point
		} else {
			require.NoError(t, rd.Commit())
		}
		ents, err := os.ReadDir(final)
		require.NoError(t, err)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		want := []string{"columns.csv", "summary.json"} // Commit writes the data dictionary
		if inPlace {
			want = want[1:]
		}
		require.Equal(t, want, names, "inPlace %v", inPlace)
		left, _ := filepath.Glob(filepath.Join(root, "out", ".*"))
		require.Empty(t, left, "temporary directories left")
		writeTestFile(t, filepath.Join(final, "failures.csv"), "stale")
	}

	// Foreign content: refused before anything runs, nothing deleted.
	writeTestFile(t, filepath.Join(final, "notes.txt"), "mine")
	_, err := NewRunDir(final)
	require.ErrorContains(t, err, "holds files a run does not write (notes.txt)")
	require.FileExists(t, filepath.Join(final, "notes.txt"))
	_, err = NewRunDir(filepath.Join(final, "notes.txt"))
	require.ErrorContains(t, err, "not a directory")

	// Aborted: nothing left, not even the parents it created.
	rd, err := NewRunDir(filepath.Join(root, "new", "deep", "run"))
	require.NoError(t, err)
	writeTestFile(t, filepath.Join(rd.Path(), "summary.json"), "x")
	rd.Abort()
	require.NoDirExists(t, filepath.Join(root, "new"))
}

// TestRunDirForeignAtAnyDepth: a user's file anywhere in an earlier run's
// directory (under plots/ or arms/, a directory where a run writes a file,
// a symbolic link) makes it irreplaceable, named; nothing is touched.
func TestRunDirForeignAtAnyDepth(t *testing.T) {
	for _, c := range []struct {
		make func(t *testing.T, dir string)
		want string
	}{
		{func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "plots", "fig.png"), "keep") }, "plots/fig.png"},
		{func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "plots", "deep", "ttft_cdf.png"), "keep")
		}, "plots/deep"},
		{func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "arms", "a", "notes.txt"), "keep") }, "arms/a/notes.txt"},
		{func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "arms", ".a", "summary.json"), "keep") }, "arms/.a"},
		{func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "arms", "summary.json"), "keep") }, "arms/summary.json"},
		{func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "cdf.csv", "mine.txt"), "keep") }, "cdf.csv"},
		{func(t *testing.T, d string) { require.NoError(t, os.Symlink("/etc", filepath.Join(d, "plots"))) }, "plots"},
	} {
		t.Run(c.want, func(t *testing.T) {
			root := t.TempDir()
			final := filepath.Join(root, "run")
			writeTestFile(t, filepath.Join(final, "summary.json"), "old")
			writeTestFile(t, filepath.Join(final, "arms", "b", "summary.json"), "old")
			writeTestFile(t, filepath.Join(final, "arms", "workload.arrival.rate_per_s=10", "summary.json"), "old") // a sweep point
			c.make(t, final)
			before := listTree(t, root)
			_, err := NewRunDir(final)
			require.ErrorContains(t, err, "holds files a run does not write ("+c.want+")")
			require.Equal(t, before, listTree(t, root))
		})
	}
	// --out a symbolic link: the link is the user's.
	root := t.TempDir()
	require.NoError(t, os.Symlink(root, filepath.Join(root, "link")))
	_, err := NewRunDir(filepath.Join(root, "link"))
	require.ErrorContains(t, err, "is a symbolic link")
}

// listTree lists the paths under root with their contents.
func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b, _ := os.ReadFile(p)
		out[p] = d.Type().String() + string(b)
		return nil
	}))
	return out
}

// TestRunDirCommitChecksAgain: a user's file added to the earlier run's
// directory while the command ran is found at Commit, on either path
// (atomic exchange, two renames), and nothing is replaced or deleted.
func TestRunDirCommitChecksAgain(t *testing.T) {
	for _, twoRenames := range []bool{false, true} {
		if twoRenames {
			saved := exchange
			exchange = func(a, b string) error { return errors.ErrUnsupported }
			t.Cleanup(func() { exchange = saved })
		}
		root := t.TempDir()
		final := filepath.Join(root, "run")
		writeTestFile(t, filepath.Join(final, "summary.json"), "old")
		rd, err := NewRunDir(final)
		require.NoError(t, err)
		writeTestFile(t, filepath.Join(rd.Path(), "summary.json"), "new")
		writeTestFile(t, filepath.Join(final, "plots", "fig.png"), "keep")
		require.ErrorContains(t, rd.Commit(), "plots/fig.png")
		rd.Abort()
		b, err := os.ReadFile(filepath.Join(final, "plots", "fig.png"))
		require.NoError(t, err)
		require.Equal(t, "keep", string(b))
		b, err = os.ReadFile(filepath.Join(final, "summary.json"))
		require.NoError(t, err)
		require.Equal(t, "old", string(b))
		left, _ := filepath.Glob(filepath.Join(root, ".*"))
		require.Empty(t, left)

		// And without it, the commit replaces the run.
		require.NoError(t, os.RemoveAll(filepath.Join(final, "plots")))
		rd, err = NewRunDir(final)
		require.NoError(t, err)
		writeTestFile(t, filepath.Join(rd.Path(), "summary.json"), "new")
		require.NoError(t, rd.Commit())
		b, err = os.ReadFile(filepath.Join(final, "summary.json"))
		require.NoError(t, err)
		require.Equal(t, "new", string(b), "two renames: %v", twoRenames)
		left, _ = filepath.Glob(filepath.Join(root, ".*"))
		require.Empty(t, left)
	}
}

// TestRunDirRestoresOld: an earlier run left aside by a command killed
// between Commit's two renames (final missing, .NAME.tmp-*.old present)
// is put back by the next NewRunDir, and kept if that run is aborted.
func TestRunDirRestoresOld(t *testing.T) {
	root := t.TempDir()
	final := filepath.Join(root, "run")
	writeTestFile(t, filepath.Join(root, ".run.tmp-123.old", "summary.json"), "old")
	rd, err := NewRunDir(final)
	require.NoError(t, err)
	rd.Abort()
	b, err := os.ReadFile(filepath.Join(final, "summary.json"))
	require.NoError(t, err)
	require.Equal(t, "old", string(b))
	require.NoDirExists(t, filepath.Join(root, ".run.tmp-123.old"))
}
