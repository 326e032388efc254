package calibrate

import (
	"math"
	"os"
	"strings"
	"testing"
)

// FuzzCalibrationCSV checks that no calibration CSV crashes the reader and
// that every row it accepts is in its documented ranges (issue 33 items 5
// and 8). `go test` runs the seeds only.
func FuzzCalibrationCSV(f *testing.F) {
	const head = "model,gpu,tp,weights,kv_dtype,batching,isl,osl,num_requests,max_seqs,output_tokens_per_s,ttft_ms,source\n"
	f.Add(head + "llama-3-8b,H100,1,fp8,fp8,inflight,1024,1024,3000,,10893.9,,x\n")
	f.Add(head + "llama-3-8b,H100,1,fp8,fp8,inflight,128,128,16,,5e-324,,x\n")
	f.Add(head + "llama-3-8b,H100,1,fp8,fp8,inflight,128,128,1000000000,,1e308,1e-300,\"a\nb\"\n")
	if b, err := os.ReadFile("testdata/public-benchmarks.csv"); err == nil && len(b) < 4096 {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, data string) {
		rows, err := readCSV("f.csv", strings.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rows {
			for _, x := range []float64{r.OutputTokensPerS, r.TTFTMs, r.MeanTPOTMs, r.MeanITLMs, r.MeanE2EMs, r.RequestRate} {
				if x != 0 && !(x >= MinMeasured && x <= MaxMeasured) || math.IsNaN(x) {
					t.Fatalf("row %+v: a measurement out of range, from %q", r, data)
				}
			}
			if r.NumRequests < 1 || r.NumRequests > MaxNumRequests || r.TP < 1 || r.ISL < 1 || r.OSL < 1 {
				t.Fatalf("row %+v out of range, from %q", r, data)
			}
		}
	})
}
