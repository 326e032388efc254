package experiments

import (
	"testing"

	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// FuzzParse: scenario parsing and validation never panic, whatever the
// bytes; they return a scenario or an error. Run it with
//
//	go test ./experiments -run '^$' -fuzz FuzzParse -fuzztime 30s
func FuzzParse(f *testing.F) {
	for _, name := range BuiltinNames() {
		data, err := BuiltinTOML(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("[cluster]\ntp = 16\n[[arms]]\nname = 1\n"))
	f.Add([]byte("[rollout]\nenabled = true\nsteps = [\"50:50\", \"x\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse("fuzz.toml", data)
		if err == nil && sc == nil {
			t.Fatal("no scenario and no error")
		}
		if err == nil && len(sc.Arms) > 0 {
			_, _ = ArmsFromScenario(sc)
		}
	})
}
