package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fleetsim/fleetsim/internal/tomlx"
)

// Kind is a kind of input file: its name in messages ("an engine
// profile") and the most bytes read of one.
type Kind struct {
	Name string
	Max  int64
}

// The kinds of file fleetsim reads, with their size limits.
var (
	Scenario       = Kind{"a scenario", tomlx.MaxBytes} // as any TOML file
	EngineProfile  = Kind{"an engine profile", tomlx.MaxBytes}
	Models         = Kind{"a models file", tomlx.MaxBytes}
	RateProfile    = Kind{"a rate profile", 64 << 20}
	Trace          = Kind{"a trace", 16 << 30}
	FaultLog       = Kind{"a fault log", 1 << 30}
	Part           = Kind{"a part file", 256 << 20}
	CalibrationCSV = Kind{"a calibration file", 64 << 20}
	BenchmarkJSON  = Kind{"a benchmark result file", 64 << 20}
	ModelConfig    = Kind{"a model config (config.json)", 16 << 20}
	Summary        = Kind{"a summary.json", 64 << 20}
	ResultsCSV     = Kind{"a results CSV", 256 << 20}
)

// ErrTooLarge is wrapped by the error of a file past its kind's limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is wrapped by the error of a path that is not a regular
// file (a device, a FIFO, a directory, or a symbolic link where OpenIn
// refuses one).
var ErrNotRegular = errors.New("not a regular file")

// File is an open input file. Reading past its kind's limit fails with
// ErrTooLarge.
type File struct {
	f    fs.File
	r    io.Reader
	path string
	kind Kind
	n    int64
}

// Open opens path, in fsys or on disk when fsys is nil, as a file of kind
// k. On disk it must be a regular file (symbolic links followed) no larger
// than k.Max.
func Open(fsys fs.FS, path string, k Kind) (*File, error) {
	if fsys == nil {
		// Before opening: opening a FIFO blocks. A path that cannot be
		// stat'ed is left to os.Open to report.
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return nil, notRegular(path, k, st.Mode())
		}
	}
	var f fs.File
	var err error
	if fsys != nil {
		f, err = fsys.Open(path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() { // replaced since checkRegular
		f.Close()
		return nil, notRegular(path, k, st.Mode())
	}
	if st.Size() > k.Max {
		f.Close()
		return nil, tooLarge(path, k)
	}
	return &File{f: f, r: f, path: path, kind: k}, nil
}

// OpenIn opens name, a path relative to the run directory dir, as a file of
// kind k, refusing a symbolic link anywhere from dir down to it.
func OpenIn(dir, name string, k Kind) (*File, error) {
	path := filepath.Join(dir, name)
	p := dir
	for _, part := range splitPath(name) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w (a symbolic link); fleetsim reads only the run directory's own files", path, ErrNotRegular)
		}
	}
	return Open(nil, path, k)
}

// splitPath splits a relative path into its elements.
func splitPath(name string) []string {
	var parts []string
	for name != "" && name != "." {
		dir, base := filepath.Split(name)
		parts = append([]string{base}, parts...)
		name = filepath.Clean(dir)
		if dir == "" {
			break
		}
	}
	return parts
}

// Read reads from the file, failing with ErrTooLarge past its kind's limit.
func (f *File) Read(p []byte) (int, error) {
	if f.n > f.kind.Max {
		return 0, tooLarge(f.path, f.kind)
	}
	if int64(len(p)) > f.kind.Max-f.n+1 {
		p = p[:f.kind.Max-f.n+1]
	}
	n, err := f.r.Read(p)
	f.n += int64(n)
	if f.n > f.kind.Max {
		return n, tooLarge(f.path, f.kind)
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Name is the path the file was opened as.
func (f *File) Name() string { return f.path }

// ReadFile reads path whole (Open).
func ReadFile(fsys fs.FS, path string, k Kind) ([]byte, error) {
	f, err := Open(fsys, path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadFileIn reads name in the run directory dir whole (OpenIn).
func ReadFileIn(dir, name string, k Kind) ([]byte, error) {
	f, err := OpenIn(dir, name, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func notRegular(path string, k Kind, m fs.FileMode) error {
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s: %w (%s); %s must be a file", path, ErrNotRegular, what, k.Name)
}

func tooLarge(path string, k Kind) error { return &limitError{path, k} }

// limitError is a file past its kind's limit; it matches ErrTooLarge.
type limitError struct {
	path string
	kind Kind
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the limit for %s (docs/reference.md, Limits)", e.path, Size(e.kind.Max), e.kind.Name)
}

func (e *limitError) Is(target error) bool { return target == ErrTooLarge }

// Size writes a byte count in the largest binary unit that divides it
// ("64 MiB").
func Size(n int64) string {
	for _, u := range []struct {
		s string
		b int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.b && n%u.b == 0 {
			return fmt.Sprintf("%d %s", n/u.b, u.s)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
