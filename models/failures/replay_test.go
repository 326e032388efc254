package failures

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

const faultTrace = "../../../shared/data/traces/fault_trace.json"

func openTrace(t *testing.T) *workloads.FaultLogReader {
	t.Helper()
	if _, err := os.Stat(faultTrace); err != nil {
		t.Skipf("fault trace not available: %v", err)
	}
	fr, err := workloads.OpenFaultLog(faultTrace)
	require.NoError(t, err)
	t.Cleanup(func() { fr.Close() })
	return fr
}

// referenceFaults parses the trace independently (encoding/json, the whole
// file) and pairs each end with the earliest open start of the same node and
// fault type.
func referenceFaults(t *testing.T) []struct {
	node            string
	class           string
	start, repairNs sim.Time
} {
	b, err := os.ReadFile(faultTrace)
	require.NoError(t, err)
	var raw []struct {
		Node string                              `json:"node_id"`
		Days float64                             `json:"event_time"`
		Type string                              `json:"event_type"`
		FT   struct{ Level, Class, Desc string } `json:"fault_type"`
	}
	require.NoError(t, json.Unmarshal(b, &raw))
	type key struct{ node, level, class, desc string }
	open := map[key][]int{}
	var out []struct {
		node            string
		class           string
		start, repairNs sim.Time
	}
	for _, e := range raw {
		k := key{e.Node, e.FT.Level, e.FT.Class, e.FT.Desc}
		if e.Type == "fault_start" {
			open[k] = append(open[k], len(out))
			out = append(out, struct {
				node            string
				class           string
				start, repairNs sim.Time
			}{e.Node, e.FT.Level + "/" + e.FT.Class, sim.FromSeconds(e.Days * 86400), 0})
			continue
		}
		i := open[k][0]
		open[k] = open[k][1:]
		out[i].repairNs = sim.FromSeconds(e.Days*86400) - out[i].start
	}
	return out
}

// TestReplayFaultTrace: replaying fault_trace.json on 400 servers emits
// exactly its 584 faults with their repair durations, and reproduces the
// CALIBRATION.md statistics (repair mean 5.5 d, p50 0.85 d, p99 85 d; GPU
// class 158).
func TestReplayFaultTrace(t *testing.T) {
	fr := openTrace(t)
	topo := HGX(400, 4)
	rp, err := NewReplay(fr, topo)
	require.NoError(t, err)
	evs := collect(t, rp, sim.Forever)
	require.NoError(t, rp.Err())
	want := referenceFaults(t)
	require.Len(t, evs, 584)
	require.Len(t, want, 584)
	hostOf := map[string]int{}
	tally := NewTally(topo.GPUs())
	var end sim.Time
	for i, ev := range evs {
		w := want[i]
		require.Equal(t, w.start, ev.Time, "fault %d", i)
		require.Equal(t, w.repairNs, ev.Repair, "fault %d", i)
		require.Equal(t, w.class, ev.Category, "fault %d", i)
		h, ok := hostOf[w.node]
		if !ok {
			h = len(hostOf)
			hostOf[w.node] = h
		}
		require.Equal(t, h, ev.Unit, "node ids map onto hosts in order of first fault")
		require.Equal(t, 8, ev.DownGPUs)
		require.Equal(t, 8*h, ev.FirstGPU)
		tally.Add(ev)
		end = max(end, ev.End())
	}
	assert.Equal(t, 231, rp.Nodes(), "231 of the 400 servers ever fail")
	r := tally.Report(end, nil)
	day := func(h float64) float64 { return h / 24 }
	t.Logf("repair mean %.3f d, p50 %.3f d, p99 %.3f d; ≥1 server down %.1f%% of %.1f days",
		day(r.RepairHours.Mean), day(r.RepairHours.P50), day(r.RepairHours.P99), 100*r.AnyDown, day(r.HorizonHours))
	assert.InDelta(t, 5.5, day(r.RepairHours.Mean), 0.05)
	assert.InDelta(t, 0.85, day(r.RepairHours.P50), 0.005)
	assert.InDelta(t, 85, day(r.RepairHours.P99), 0.5)
	cats := map[string]int{}
	for _, c := range r.ByCategory {
		cats[c.Name] = c.Incidents
	}
	assert.Equal(t, 158, cats["Hardware Failure/GPU"])
	assert.Equal(t, 144, cats["Other Failure/Unknown Error"])
	xid := map[string]int{}
	for _, c := range r.ByXid {
		xid[c.Name] = c.Incidents
	}
	assert.Equal(t, 60, xid["48"], "GPU DBE → Xid 48")
	assert.Equal(t, 6, xid["79"], "GPU lost / not found → Xid 79")
	// The per-server rate: 584 / (400 · 345 d) = 0.00423 per day (SOURCES.md).
	assert.InDelta(t, 0.00423, 584.0/(400*345), 0.00001)
}

func TestReplayTooFewHosts(t *testing.T) {
	rp, err := NewReplay(openTrace(t), HGX(100, 4))
	require.NoError(t, err)
	n := 0
	for {
		if _, ok := rp.Next(); !ok {
			break
		}
		n++
	}
	require.Error(t, rp.Err())
	assert.Contains(t, rp.Err().Error(), "the topology has 100 hosts")
	assert.Equal(t, 100, rp.Nodes())
}

func TestReplayErrorsPassThrough(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(path, []byte("[\n{\"node_id\": \"a\", \"event_time\": 1, \"event_type\": \"fault_end\",\n \"fault_type\": {}}\n]\n"), 0o644))
	fr, err := workloads.OpenFaultLog(path)
	require.NoError(t, err)
	defer fr.Close()
	rp, err := NewReplay(fr, HGX(4, 4))
	require.NoError(t, err)
	_, ok := rp.Next()
	assert.False(t, ok)
	require.Error(t, rp.Err())
	assert.True(t, strings.HasPrefix(rp.Err().Error(), path+":2: "), rp.Err().Error())
}

func TestClassify(t *testing.T) {
	tests := []struct {
		class, desc string
		want        Classification
	}{
		{"GPU", "GPU DBE(Double Bit ECC) > Threshold", Classification{ComponentHBM, ModeFailStop, 48, ActionResetGPU}},
		{"GPU", "GPU Lost", Classification{ComponentGPU, ModeFailStop, 79, ActionRebootNode}},
		{"GPU", "GPU PCI link width low", Classification{ComponentGPU, ModeFailSlow, 0, ActionRebootNode}},
		{"GPU", "nvidia-smi Timeout", Classification{ComponentGPU, ModeHang, 0, ActionRebootNode}},
		{"gpu", " gpu lost ", Classification{ComponentGPU, ModeFailStop, 79, ActionRebootNode}},
		{"GPU", "something new", Classification{ComponentGPU, ModeFailStop, 0, ActionRebootNode}},
		{"NIC", "NIC Lost", Classification{ComponentNIC, ModeFailStop, 0, ActionRMA}},
		{"NIC", "NIC Link Speed low", Classification{ComponentNIC, ModeFailSlow, 0, ActionRMA}},
		{"Parameter Plane Cable", "Link Down", Classification{ComponentNetwork, ModeFailStop, 0, ActionRMA}},
		{"Power Supply", "Redundancy Lost", Classification{ComponentPSU, ModeFailStop, 0, ActionRMA}},
		{"Stress Test Failure", "Unknown Error", Classification{ComponentUnknown, ModeFailStop, 0, ActionRebootNode}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Classify(tt.class, tt.desc), "%s / %s", tt.class, tt.desc)
	}
}
