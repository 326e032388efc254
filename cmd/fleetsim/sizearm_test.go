package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSizeArm: size --arm sizes one [[arms]] table's fleet (the arm's
// overrides applied, the directory named after it); an unknown arm, or a
// scenario without arms, is refused with exit status 2 naming the arms.
func TestSizeArm(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"size", "splitwise", "--arm", "nope"}, `--arm "nope": splitwise has no such arm; its arms are splitwise-h100-h200, disagg-h100, colocated-h100`},
		{[]string{"size", "default", "--arm", "x", "--slo", "ttft_p99=1s"}, `--arm "x": default has no [[arms]]`},
	} {
		out := filepath.Join(dir, "out")
		stdout, stderr, code := fleetsim(t, nil, append(tc.args, "--out", out)...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Empty(t, stdout)
		require.Contains(t, stderr, tc.want)
		require.NoDirExists(t, out, "nothing written")
	}
	// pd-disaggregation's co-located arm: one pool, so size's N.
	stdout, stderr, code := fleetsim(t, nil, "size", "pd-disaggregation", "--arm", "colocated", "--slo", "ttft_p99=1000ms",
		"--replications", "2", "--json", "--out", filepath.Join(dir, "pdc"))
	require.Equal(t, 0, code, stderr)
	var out struct {
		Scenario string `json:"scenario"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	require.Equal(t, "pd-disaggregation--colocated", out.Scenario)
	require.FileExists(t, filepath.Join(dir, "pdc", "size.csv"))
}
