package plot

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzPlotDir checks that no run directory's summary.json and CSV file
// crash plot's readers (Check reads and builds every figure Dir would
// draw; issue 33 item 8). One directory per worker is rewritten for each
// input: which is the CSV's name among the inputs plot reads. `go test`
// runs the seeds only.
func FuzzPlotDir(f *testing.F) {
	for i, name := range inputs[1:] {
		if b, err := os.ReadFile(filepath.Join("testdata", "run", name)); err == nil && len(b) < 8192 {
			f.Add([]byte(`{"scenario": "x", "slo": {"ttft_ms": 500}}`), uint8(i), b)
		}
	}
	f.Add([]byte(`{"scenario": 1}`), uint8(0), []byte("t_s\n1e308\n"))
	f.Add([]byte(`null`), uint8(1), []byte("a,a\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, summary []byte, which uint8, csv []byte) {
		for _, n := range inputs {
			os.Remove(filepath.Join(dir, n))
		}
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), summary, 0o644); err != nil {
			t.Fatal(err)
		}
		name := inputs[1+int(which)%(len(inputs)-1)]
		if err := os.WriteFile(filepath.Join(dir, name), csv, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Check(dir)
	})
}
