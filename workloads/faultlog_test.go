package workloads

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

func readFaults(src string) ([]Fault, error) {
	r := NewFaultLogReader(strings.NewReader(src), "log.json")
	var out []Fault
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
}

const goodLog = `[
  {"node_id": "a", "event_time": 1.0, "event_type": "fault_start",
   "fault_type": {"Level": "Hardware Failure", "Class": "GPU", "Desc": "GPU Lost"}},
  {"node_id": "b", "event_time": 1.5, "event_type": "fault_start", "extra": [1, {"x": 2}],
   "fault_type": {"Level": "Hardware Failure", "Class": "NIC", "Desc": "NIC Lost"}},
  {"node_id": "a", "event_time": 2.0, "event_type": "fault_start",
   "fault_type": {"Level": "Other Failure", "Class": "Unknown Error", "Desc": "Unknown Error"}},
  {"node_id": "a", "event_time": 2.5, "event_type": "fault_end",
   "fault_type": {"Level": "Other Failure", "Class": "Unknown Error", "Desc": "Unknown Error"}},
  {"node_id": "b", "event_time": 3.0, "event_type": "fault_end",
   "fault_type": {"Level": "Hardware Failure", "Class": "NIC", "Desc": "NIC Lost"}},
  {"node_id": "a", "event_time": 4.0, "event_type": "fault_end",
   "fault_type": {"Level": "Hardware Failure", "Class": "GPU", "Desc": "GPU Lost"}}
]
`

// TestFaultLogPairs: ends pair with the open start of the same node and
// type (a's two faults overlap), and faults come out in start order.
func TestFaultLogPairs(t *testing.T) {
	fs, err := readFaults(goodLog)
	require.NoError(t, err)
	require.Len(t, fs, 3)
	assert.Equal(t, Fault{NodeID: "a", Level: "Hardware Failure", Class: "GPU", Desc: "GPU Lost",
		StartDays: 1, EndDays: 4, StartLine: 2, EndLine: 12}, fs[0])
	assert.Equal(t, "b", fs[1].NodeID)
	assert.Equal(t, 1.5, fs[1].RepairDays())
	assert.Equal(t, 4, fs[1].StartLine)
	assert.Equal(t, "Unknown Error", fs[2].Class)
	assert.Equal(t, 12*sim.Hour, fs[2].Repair())
	assert.Equal(t, 2*24*sim.Hour, fs[2].Start())
	assert.Equal(t, 3*24*sim.Hour, fs[0].Repair())
}

func TestFaultLogEmpty(t *testing.T) {
	fs, err := readFaults("  [ ]  \n")
	require.NoError(t, err)
	assert.Empty(t, fs)
}

func TestFaultLogErrors(t *testing.T) {
	ev := func(node string, days string, kind string) string {
		return `{"node_id": "` + node + `", "event_time": ` + days + `, "event_type": "` + kind +
			`", "fault_type": {"Level": "L", "Class": "C", "Desc": "D"}}`
	}
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", "log.json:1: empty file: expected a JSON array of fault events"},
		{"not an array", `{"a": 1}`, `log.json:1: expected a JSON array of fault events, found "{"`},
		{"syntax", "[\n" + ev("a", "1", "fault_start") + ",\n{\"node_id\": oops}\n]", "log.json:3: malformed JSON: invalid character 'o' looking for beginning of value"},
		{"truncated", "[\n" + ev("a", "1", "fault_start") + ",\n", "log.json:2: unexpected end of file (unterminated JSON array)"},
		{"element not an object", "[\n  42\n]", "log.json:2: expected a fault event object, found number 42"},
		{"missing key", "[\n{\"node_id\": \"a\", \"event_time\": 1,\n \"event_type\": \"fault_start\"}\n]", `log.json:2: fault event lacks "fault_type"`},
		{"bad type", "[\n" + ev("a", "1", "fault_begin") + "\n]", `log.json:2: event_type: expected "fault_start" or "fault_end", found "fault_begin"`},
		{"time string", "[\n{\"node_id\": \"a\",\n \"event_time\": \"1.0\"}\n]", `log.json:3: event_time: expected a number of days, found string "1.0"`},
		{"negative time", "[\n" + ev("a", "-1", "fault_start") + "\n]", "log.json:2: event_time: expected a number of days between 0 and 36500, found -1"},
		{"node not string", "[\n{\"node_id\": 7}\n]", "log.json:2: node_id: expected a string, found number 7"},
		{"out of order", "[\n" + ev("a", "2", "fault_start") + ",\n" + ev("b", "1", "fault_start") + "\n]",
			"log.json:3: event_time 1 is earlier than the previous event's 2 (events must be in time order)"},
		{"end without start", "[\n" + ev("a", "1", "fault_end") + "\n]", `log.json:2: fault_end on node "a" at day 1 has no open fault_start`},
		{"never ends", "[\n" + ev("a", "1", "fault_start") + ",\n" + ev("b", "2", "fault_start") + ",\n" + ev("b", "3", "fault_end") + "\n]",
			`log.json:2: fault_start on node "a" at day 1 never ends (no matching fault_end)`},
		{"trailing data", "[]\n[]", "log.json:2: unexpected data after the JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readFaults(tt.src)
			require.Error(t, err)
			var te *TraceError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestFaultLogUnreadable(t *testing.T) {
	_, err := ReadFaultLog(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.json")
	dir := t.TempDir()
	_, err = ReadFaultLog(dir) // a directory
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir)
}

// TestFaultLogTrace reads the InfiniteHBD trace: 584 faults, 1,168 events.
func TestFaultLogTrace(t *testing.T) {
	path := "../../shared/data/traces/fault_trace.json"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("fault trace not available: %v", err)
	}
	fs, err := ReadFaultLog(path)
	require.NoError(t, err)
	require.Len(t, fs, 584)
	gpu, sum := 0, 0.0
	for i, f := range fs {
		if i > 0 {
			require.GreaterOrEqual(t, f.StartDays, fs[i-1].StartDays)
		}
		require.GreaterOrEqual(t, f.EndDays, f.StartDays)
		require.Greater(t, f.EndLine, f.StartLine)
		if f.Class == "GPU" {
			gpu++
		}
		sum += f.RepairDays()
	}
	assert.Equal(t, 158, gpu)
	assert.InDelta(t, 5.535, sum/584, 0.001)
	assert.Equal(t, 2, fs[0].StartLine)
}

// FuzzFaultLog: the reader never panics and reports errors as TraceErrors.
func FuzzFaultLog(f *testing.F) {
	f.Add(goodLog)
	f.Add("[{}]")
	f.Add(`[{"node_id":"a","event_time":1e400}]`)
	f.Fuzz(func(t *testing.T, src string) {
		_, err := readFaults(src)
		if err != nil {
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("not a TraceError: %v", err)
			}
		}
	})
}

// TestFaultLogBOM: a fault log may start with a UTF-8 BOM, as a scenario
// and a trace may; lines are counted as without it.
func TestFaultLogBOM(t *testing.T) {
	fs, err := readFaults("\ufeff" + goodLog)
	require.NoError(t, err)
	want, err := readFaults(goodLog)
	require.NoError(t, err)
	assert.Equal(t, want, fs)
}
