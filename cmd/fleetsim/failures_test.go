package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/stretchr/testify/require"
)

const faultTracePath = "../../../shared/data/traces/fault_trace.json"

func TestFailuresShow(t *testing.T) {
	stdout, stderr, code := fleetsim(t, nil, "failures", "show", "llama3")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "profile   llama3")
	assert.Contains(t, stdout, "16384 GPUs: 7.76 failures/day, MTBF 3.09 h")
	assert.Regexp(t, `(?m)^gpu\s+gpu\s+gpu\s+fail-stop\s+79\s+reboot-node\s+148\s+6.9701e-06\s+1.3383 P$`, stdout)
	assert.Regexp(t, `(?m)^total\s+419\s+1.9733e-05\s+3.7887 P$`, stdout)
	assert.NotContains(t, stdout, "UNCONFIRMED")

	again, _, _ := fleetsim(t, nil, "failures", "show", "llama3")
	assert.Equal(t, stdout, again, "deterministic stdout")

	// A job of 8,000 GPUs at Meta RSC-1's rate: 6.5 per 1,000 nodes a day.
	stdout, stderr, code = fleetsim(t, nil, "failures", "show", "meta-rsc", "--gpus", "8000")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "8000 GPUs: 6.50 failures/day, MTBF 3.69 h")
	assert.Regexp(t, `(?m)^total\s+-\s+3.3854e-05\s+6.5000 S$`, stdout)
}

func TestFailuresShowFlagsUnconfirmed(t *testing.T) {
	stdout, stderr, code := fleetsim(t, nil, "failures", "show", "byterobust")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, `U: "55,366 incidents" — the figure in the design brief; not found in the paper text reachable here.`)
	assert.Regexp(t, `(?m)^total\s+-\s+1.0454e-04\s+20.0713 U$`, stdout)
	assert.Contains(t, stdout, "UNCONFIRMED: 2 figure(s) above are marked U")
}

func TestFailuresShowJSON(t *testing.T) {
	stdout, stderr, code := fleetsim(t, nil, "failures", "show", "byterobust", "--json", "--gpus", "9600")
	require.Zero(t, code, stderr)
	var out showJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.Equal(t, "byterobust", out.Profile)
	assert.Equal(t, 9600, out.GPUs)
	assert.Equal(t, "U", out.RateConfidence)
	require.Len(t, out.Unconfirmed, 2) // the incident count and the requeue time
	assert.True(t, strings.HasPrefix(out.Unconfirmed[0], `U: "55,366 incidents"`))
	assert.InEpsilon(t, 1/(9600*out.PerGPUHour), out.MTBFHours, 1e-12)
	require.Len(t, out.Rows, 6) // manual restarts are not failures
	assert.Equal(t, "cuda-error", out.Rows[0].Category)
	assert.Equal(t, "lognormal median 20.4 h, mean 132 h", out.Repair["rma"])

	stdout, _, code = fleetsim(t, nil, "failures", "show", "llama3", "--json")
	require.Zero(t, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.InDelta(t, 3.09, out.MTBFHours, 0.005)
	assert.Empty(t, out.Unconfirmed)
	var hbm rowJSON
	for _, r := range out.Rows {
		if r.Category == "hbm" {
			hbm = r
		}
	}
	require.NotNil(t, hbm.Precursor)
	assert.Equal(t, 48, hbm.Xid)
	// Spare sizing: the M/G/∞ mean is rate × mean repair, summed.
	prof, err := failures.LookupProfile(failures.ProfileLlama3)
	require.NoError(t, err)
	var want float64
	for _, r := range out.Rows {
		a, _ := failures.ParseAction(r.Action)
		if r.Mode != "fail-slow" {
			want += r.PerGPUHour * 16384 * prof.Repair[a].MeanHours()
		}
	}
	assert.InEpsilon(t, want, out.MeanInRepair, 1e-9)
	assert.Less(t, out.Spares99, out.Spares999+1)
	assert.Greater(t, float64(out.Spares99), out.MeanInRepair, "99% coverage needs more than the mean")
}

func TestFailuresBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("[\n{\"node_id\": \"a\",\n \"event_time\": x}\n]"), 0o644))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"failures"}, "usage:"},
		{[]string{"failures", "explode"}, `unknown failures command "explode"`},
		{[]string{"failures", "show"}, "usage: fleetsim failures show PROFILE"},
		{[]string{"failures", "show", "llama4"}, `unknown profile "llama4"; valid profiles: byterobust, llama3, meta-rsc, meta-rsc-2, meta-rsc-job, none, rackscale`},
		{[]string{"failures", "show", "llama3", "--gpus", "0"}, "--gpus must be >= 1, found 0"},
		{[]string{"failures", "show", "llama3", "--gpus", "many"}, `invalid value "many" for flag -gpus`},
		{[]string{"failures", "replay", missing}, "nope.json"},
		{[]string{"failures", "replay", bad}, bad + ":3: malformed JSON: invalid character 'x'"},
		{[]string{"failures", "replay", bad, "--servers", "0"}, "--servers must be between 1"},
	}
	for _, tt := range tests {
		stdout, stderr, code := fleetsim(t, nil, tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
		assert.Empty(t, stdout, "%v", tt.args)
	}
}

func TestFailuresList(t *testing.T) {
	stdout, stderr, code := fleetsim(t, nil, "failures", "list")
	require.Zero(t, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, len(failures.ProfileNames()))
	assert.True(t, strings.HasPrefix(lines[0], "byterobust"))
}

func TestFailuresReplay(t *testing.T) {
	if _, err := os.Stat(faultTracePath); err != nil {
		t.Skipf("fault trace not available: %v", err)
	}
	stdout, stderr, code := fleetsim(t, nil, "failures", "replay", faultTracePath)
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "faults     584 on 231 nodes, replayed on 400 servers (3200 GPUs) over 349.0 days")
	assert.Contains(t, stdout, "repair     mean 5.54 d, p50 0.85 d, p90 13.01 d, p99 85.07 d, max 130.96 d")
	assert.Contains(t, stdout, "down       ≥1 server 98.9% of the time")
	assert.Regexp(t, `(?m)^Hardware Failure/GPU\s+158$`, stdout)

	stdout, stderr, code = fleetsim(t, nil, "failures", "replay", faultTracePath, "--json")
	require.Zero(t, code, stderr)
	var out replayJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.Equal(t, 584, out.Faults)
	assert.InDelta(t, 5.5, out.RepairDays.Mean, 0.05)
	assert.InDelta(t, 0.85, out.RepairDays.P50, 0.005)
	assert.InDelta(t, 85, out.RepairDays.P99, 0.1)
	assert.Equal(t, "Hardware Failure/GPU", out.ByClass[0].Name)
	assert.Equal(t, 158, out.ByClass[0].Incidents)

	_, stderr, code = fleetsim(t, nil, "failures", "replay", faultTracePath, "--servers", "200")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "the topology has 200 hosts")
}

// A scenario's [[failures.components]] tables change `failures show`: the
// "none" profile plus two tables is a custom profile; a bad table is
// refused with file:line and exit 2.
func TestFailuresShowScenarioComponents(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "custom.toml")
	require.NoError(t, os.WriteFile(good, []byte(`name = "custom"
[failures]
enabled = true
profile = "none"
[[failures.components]]
component = "coolant"
rate_per_gpu_hour = 2e-6
[[failures.components]]
category = "tray"
component = "switch-tray"
rate_per_gpu_hour = 1e-6
nvlink_bandwidth_fraction = 0.75
[failures.components.repair]
dist = "fixed"
hours = 8
`), 0o644))
	stdout, stderr, code := fleetsim(t, nil, "failures", "show", good, "--gpus", "576")
	require.Zero(t, code, stderr)
	assert.Regexp(t, `(?m)^coolant\s+coolant\s+rack\s+fail-stop\s+-\s+rma\s+-\s+2.0000e-06\s+0.3840 user$`, stdout)
	assert.Regexp(t, `(?m)^tray\s+switch-tray\s+domain\*\s+nvlink-degraded\s+74\s+rma\s+-\s+1.0000e-06\s+0.1920 user$`, stdout)
	assert.Regexp(t, `(?m)^total\s+-\s+3.0000e-06\s+0.5760 user$`, stdout)
	assert.Contains(t, stdout, "repair    tray       fixed 8 h (its own repair path)")
	assert.Contains(t, stdout, "repair    coolant    fixed 24 h (its own repair path)")

	// Scaling a built-in row shows in the total.
	scaled := filepath.Join(dir, "scaled.toml")
	require.NoError(t, os.WriteFile(scaled, []byte("name = \"s\"\n[failures]\nprofile = \"llama3\"\n[[failures.components]]\ncategory = \"gpu\"\nscale = 2\n"), 0o644))
	stdout, stderr, code = fleetsim(t, nil, "failures", "show", scaled)
	require.Zero(t, code, stderr)
	assert.Regexp(t, `(?m)^gpu\s+gpu\s+gpu\s+fail-stop\s+79\s+reboot-node\s+-\s+1.3940e-05\s+2.6765 user$`, stdout)

	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte(`name = "bad"
[failures]
profile = "none"
[[failures.components]]
component = "coolant"
rate_per_gpu_hour = -2e-6
scope = "galaxy"
[[failures.components]]
component = "switch-tray"
rate_per_gpu_hour = 1e-6
rate = 3
`), 0o644))
	for _, cmd := range [][]string{{"failures", "show", bad}, {"run", bad, "--out", filepath.Join(dir, "out")}} {
		_, stderr, code = fleetsim(t, nil, cmd...)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "bad.toml:6: failures.components.0.rate_per_gpu_hour: must be a finite number >= 0, found -2e-06")
		assert.Contains(t, stderr, `bad.toml:7: failures.components.0.scope: unknown scope "galaxy"`)
		assert.Contains(t, stderr, `bad.toml:11: failures.components.1.rate: unknown key`)
	}
	_, err := os.Stat(filepath.Join(dir, "out"))
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// `failures show meta-rsc --job`: job MTTF from 8 to 16,384 GPUs (and the
// published 131,072) beside the published job-level figures, with the
// supported range and a mark on sizes outside it; the node-only
// projection is unchanged.
func TestFailuresShowJob(t *testing.T) {
	stdout, stderr, code := fleetsim(t, nil, "failures", "show", "meta-rsc", "--job", "--gpus", "2000")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "job-level profile meta-rsc-job")
	assert.Regexp(t, `(?m)^\s+8\s+1075.93 h \(44.8 days\)\s+3692.31 h \(153.8 days\)\s+1144.80 h \(47.7 days\) \[S\] Kokolis`, stdout)
	assert.Regexp(t, `(?m)^\s+1024\s+8.41 h\s+28.85 h\s+7.90 h \[S\]`, stdout)
	assert.Regexp(t, `(?m)^\s+2000\s+`, stdout, "--gpus adds its size")
	assert.Regexp(t, `(?m)^\s+4096\s+4.48 h\s+7.21 h`, stdout)
	assert.Regexp(t, `(?m)^\s+16384\s+1.57 h\s+1.80 h\s+1.80 h \[S\].*projected`, stdout)
	assert.Regexp(t, `(?m)^\s+131072!\s+13.3 min\s+13.5 min\s+13.8 min`, stdout, "outside the range, marked")
	assert.Contains(t, stdout, "supported 8 to 16384 GPUs")
	assert.NotContains(t, stdout, "warning")
	stdout, _, _ = fleetsim(t, nil, "failures", "show", "meta-rsc", "--job", "--gpus", "32768")
	assert.Contains(t, stdout, "warning   32768 GPUs is outside the supported range")
	stdout, _, _ = fleetsim(t, nil, "failures", "show", "meta-rsc-2", "--job")
	assert.Contains(t, stdout, "warning   no job-level figure is behind this profile")
	// The plain view is unchanged.
	plain, _, _ := fleetsim(t, nil, "failures", "show", "meta-rsc", "--gpus", "8000")
	assert.Contains(t, plain, "8000 GPUs: 6.50 failures/day, MTBF 3.69 h")

	stdout, stderr, code = fleetsim(t, nil, "failures", "show", "llama3", "--job", "--json")
	require.Zero(t, code, stderr)
	var out jobJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	last := out.Sizes[len(out.Sizes)-1]
	assert.Equal(t, 16384, last.GPUs)
	assert.False(t, last.Outside)
	assert.True(t, out.Sizes[0].Outside, "8 GPUs: below llama3's supported range")
	require.NotNil(t, out.Supported)
	assert.Equal(t, 1024, out.Supported.MinGPUs)
	assert.InDelta(t, 54*24/419.0, last.MTTFHours, 1e-9)
	assert.InDelta(t, 54.0/419, last.Shares["software"], 1e-9)
	require.Len(t, out.Published, 1)
}

// --topology sizes the spare pool in the topology's hosts: the same GPUs
// as NVL72 trays need more spare GPUs at 99.9% than as HGX servers, since
// a rack fault takes 18 trays at once.
func TestFailuresShowTopologySpares(t *testing.T) {
	gpus := map[string]int{}
	for _, k := range []string{"hgx", "nvl72"} {
		stdout, stderr, code := fleetsim(t, nil, "failures", "show", "rackscale", "--gpus", "16416", "--topology", k, "--json")
		require.Zero(t, code, stderr)
		var out showJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &out))
		require.NotNil(t, out.Topology)
		assert.Equal(t, 16416, out.Topology.GPUs)
		assert.GreaterOrEqual(t, out.Topology.Hosts999, out.Topology.Hosts99)
		gpus[k] = out.Topology.Hosts999 * out.Topology.HostGPUs
	}
	assert.Greater(t, gpus["nvl72"], gpus["hgx"])
	_, stderr, code := fleetsim(t, nil, "failures", "show", "rackscale", "--topology", "dgx")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--topology must be hgx or nvl72")
}
