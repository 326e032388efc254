package workloads

import (
	"math"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzAzureReader checks that no input crashes the Azure (CSV) trace
// reader and that what it accepts satisfies the Request contract (issue 33
// item 8). `go test` runs the seeds only.
func FuzzAzureReader(f *testing.F) {
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.0000000,100,20\n")
	f.Add("\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,0,0\n")
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n9999-12-31 23:59:59.9999999,2147483647,1\n0001-01-01 00:00:00,1,1\n")
	f.Add("TIMESTAMP\n\"a\nb\",1\n")
	f.Fuzz(func(t *testing.T, data string) {
		r := NewAzureReader(strings.NewReader(data), "f.csv", TraceOptions{RateMultiplier: 0.5})
		for i := 0; i < 10000; i++ {
			q, err := r.Next()
			if err != nil {
				return
			}
			if q.InputTokens < 1 || q.OutputTokens < 1 || q.PrefixTokens() > q.InputTokens || q.Arrival < 0 {
				t.Fatalf("bad request %+v from %q", q, data)
			}
		}
	})
}

// FuzzRateProfile checks that no rate-profile CSV crashes the reader, and
// that a profile it accepts builds a process (NewPiecewise) whose expected
// requests (Config.ExpectedRequests) are a number, never NaN.
func FuzzRateProfile(f *testing.F) {
	f.Add("t_s,rate_per_s\n0,10\n60,20\n")
	f.Add("\ufefft_s,rate_per_s\n0,1e308\n1e308,0\n")
	f.Add("t_s,rate_per_s\n0,0\n5e-324,5e-324\n")
	f.Add("t_s,rate_per_s\n1,1\n")
	f.Fuzz(func(t *testing.T, data string) {
		fsys := fstest.MapFS{"r.csv": {Data: []byte(data)}}
		pts, err := ReadRateProfile(fsys, "r.csv")
		if err != nil {
			return
		}
		if len(pts) == 0 || pts[0].TimeS != 0 {
			t.Fatalf("accepted %q as %v", data, pts)
		}
		c := DefaultConfig()
		c.Arrival.Process, c.Arrival.ProfileFile, c.Arrival.FS = ProcessPiecewise, "r.csv", fsys
		if err := c.Arrival.CheckProfile(); err != nil {
			return
		}
		if n, ok := c.ExpectedRequests(600); ok && math.IsNaN(n) {
			t.Fatalf("NaN expected requests from %q", data)
		}
	})
}

// TestRateProfileBadQuote: a row the CSV reader cannot split (a quote in
// a bare field) is refused with its file and line; it used to panic
// (FieldPos of a record with no fields; found by FuzzRateProfile).
func TestRateProfileBadQuote(t *testing.T) {
	fsys := fstest.MapFS{"r.csv": {Data: []byte("t_s,rate_per_s\n0\"000000")}}
	_, err := ReadRateProfile(fsys, "r.csv")
	if err == nil || !strings.HasPrefix(err.Error(), "r.csv:2: ") {
		t.Fatalf("got %v, want r.csv:2: …", err)
	}
}
