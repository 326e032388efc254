package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/internal/tomlx"
	"github.com/stretchr/testify/require"
)

// TestRulesFromTestdata reads every scenario of testdata/rules/: its
// leading "# want: KEY: REASON" lines are exactly the problems it must
// have ("# want: ok": none). Every row of Rules has its file (named for
// the rule), and every file names a rule, so the table and the files
// cannot drift apart.
func TestRulesFromTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/rules/*.toml")
	require.NoError(t, err)
	byName := map[string]bool{}
	for _, f := range files {
		byName[strings.TrimSuffix(filepath.Base(f), ".toml")] = true
	}
	for _, r := range Rules {
		require.True(t, byName[r.Name], "rule %s has no testdata/rules/%s.toml", r.Name, r.Name)
		delete(byName, r.Name)
	}
	require.Empty(t, byName, "testdata/rules files that name no rule")

	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				w, ok := strings.CutPrefix(line, "# want: ")
				if !ok {
					break
				}
				if w != "ok" {
					want = append(want, w)
				}
			}
			_, err = Parse(filepath.Base(f), data)
			if len(want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			terr, ok := err.(*tomlx.Error)
			require.True(t, ok, "%T: %v", err, err)
			var got []string
			for _, it := range terr.Items {
				got = append(got, it.Key+": "+it.Msg)
			}
			require.ElementsMatch(t, want, got)
		})
	}
}
