package hw

import (
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
)

// FuzzParseProfile checks that no engine profile file crashes the parser
// and that a profile it accepts passes its own validation again (issue 33
// item 8). `go test` runs the seeds only.
func FuzzParseProfile(f *testing.F) {
	if b, err := profileFS.ReadFile("profiles/trtllm-0.16.toml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("name = \"x\"\n"))
	f.Add([]byte("name = \"x\"\nmfu_prefill = 1e308\n[a.b.c]\nd = [[[[1]]]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pp, err := ParseProfile("f.toml", data)
		if err != nil {
			return
		}
		var ps config.Problems
		pp.Validate("", &ps)
		if err := ps.Err(); err != nil {
			t.Fatalf("accepted a profile that does not validate: %v", err)
		}
	})
}
