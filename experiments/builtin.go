package experiments

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/tomlx"
)

//go:embed scenarios/*.toml
var builtinFS embed.FS

// DefaultBuiltin is the scenario `fleetsim run` runs with no argument.
const DefaultBuiltin = "default"

// BuiltinNames lists the built-in scenarios, sorted.
func BuiltinNames() []string {
	ents, _ := fs.ReadDir(builtinFS, "scenarios")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(out)
	return out
}

// BuiltinTOML returns a built-in scenario's file.
func BuiltinTOML(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile("scenarios/" + name + ".toml")
	if err != nil {
		if near, ok := tomlx.Suggest(name, BuiltinNames()); ok {
			return nil, fmt.Errorf("no built-in scenario %q; did you mean %q? (fleetsim scenarios lists them)", name, near)
		}
		return nil, fmt.Errorf("no built-in scenario %q; built-ins: %s", name, strings.Join(BuiltinNames(), ", "))
	}
	return data, nil
}

// LoadBuiltin parses a built-in scenario.
func LoadBuiltin(name string) (*scenario.Scenario, error) {
	data, err := BuiltinTOML(name)
	if err != nil {
		return nil, err
	}
	return scenario.Parse("builtin:"+name, data)
}
