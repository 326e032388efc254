package report

import (
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
	writeTestFile(t, filepath.Join(final, "plots", "x.png"), "stale")

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
		require.Len(t, ents, 1, "inPlace %v", inPlace)
		require.Equal(t, "summary.json", ents[0].Name())
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
