package infile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOpenRefusesSpecialFiles: a device (directly or through a symbolic
// link), a FIFO (without blocking on it) and a directory are refused
// before being read, naming the path and the kind.
func TestOpenRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	zero := filepath.Join(dir, "zero")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: not a regular file (a device); an engine profile must be a file"},
		{zero, "zero: not a regular file (a device)"},
		{fifo, "fifo: not a regular file (a FIFO)"},
		{dir, "not a regular file (a directory)"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(nil, c.path, EngineProfile); done <- err }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, ErrNotRegular)
			require.ErrorContains(t, err, c.want)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: blocked", c.path)
		}
	}
}

// TestReadLimit: a file at its kind's limit is read whole, one byte past it
// is refused (by its size before reading, or while reading when it grows).
func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	k := Kind{"a test file", 100}
	at := filepath.Join(dir, "at")
	require.NoError(t, os.WriteFile(at, []byte(strings.Repeat("x", 100)), 0o644))
	b, err := ReadFile(nil, at, k)
	require.NoError(t, err)
	require.Len(t, b, 100)
	past := filepath.Join(dir, "past")
	require.NoError(t, os.WriteFile(past, []byte(strings.Repeat("x", 101)), 0o644))
	_, err = ReadFile(nil, past, k)
	require.ErrorIs(t, err, ErrTooLarge)
	require.ErrorContains(t, err, "past: larger than 100 bytes, the limit for a test file (docs/reference.md, Limits)")

	// Grown after the open: the reader stops at the limit.
	f, err := Open(nil, at, k)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.WriteFile(at, []byte(strings.Repeat("x", 1000)), 0o644))
	_, err = io.ReadAll(f)
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = f.Read(make([]byte, 10))
	require.ErrorIs(t, err, ErrTooLarge)
}

// TestOpenInRefusesLinks: a file of a run directory that is, or lies under,
// a symbolic link is refused, even to a regular file.
func TestOpenInRefusesLinks(t *testing.T) {
	run := t.TempDir()
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "summary.json"), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(run, "cdf.csv"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(other, "summary.json"), filepath.Join(run, "summary.json")))
	require.NoError(t, os.Symlink(other, filepath.Join(run, "arms")))
	_, err := ReadFileIn(run, "summary.json", Summary)
	require.ErrorContains(t, err, "a symbolic link")
	_, err = ReadFileIn(run, filepath.Join("arms", "summary.json"), Summary)
	require.ErrorContains(t, err, "a symbolic link")
	b, err := ReadFileIn(run, "cdf.csv", ResultsCSV)
	require.NoError(t, err)
	require.Equal(t, "x", string(b))
}

func TestSize(t *testing.T) {
	require.Equal(t, "1 MiB", Size(1<<20))
	require.Equal(t, "16 GiB", Size(16<<30))
	require.Equal(t, "100 bytes", Size(100))
}
