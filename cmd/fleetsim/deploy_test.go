package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The Kubernetes manifests in deploy/k8s decode, and carry the fields the
// sharded flow depends on: an Indexed Job whose completions and parallelism
// match the shard count in its command, JOB_COMPLETION_INDEX + 1 as the
// shard, the scenario from the ConfigMap, parts on the shared volume, and a
// merge Job over the same part files. The scenario in the ConfigMap is valid.
func TestDeployKubernetes(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "k8s")
	load := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(b, &m), name)
		return m
	}
	get := func(m any, path ...string) any {
		for _, p := range path {
			mm, ok := m.(map[string]any)
			require.True(t, ok, "%v at %s", path, p)
			m = mm[p]
		}
		return m
	}
	job := load("sweep-job.yaml")
	require.Equal(t, "Job", job["kind"])
	spec := get(job, "spec")
	require.Equal(t, "Indexed", get(spec, "completionMode"))
	n := get(spec, "completions").(int)
	require.Equal(t, n, get(spec, "parallelism").(int))
	ctr := get(spec, "template", "spec", "containers").([]any)[0]
	args := strings.Join(toStrings(get(ctr, "args")), " ")
	require.Contains(t, get(ctr, "command").([]any), "sh")
	m := regexp.MustCompile(`--shard \$\(\(JOB_COMPLETION_INDEX \+ 1\)\)/(\d+)`).FindStringSubmatch(args)
	require.NotNil(t, m, "the shard comes from JOB_COMPLETION_INDEX + 1: %s", args)
	require.Equal(t, m[1], itoa(n), "shards = completions")
	require.Contains(t, args, "--out /results/study")
	require.Contains(t, args, "/cfg/study.toml")
	mounts := get(ctr, "volumeMounts").([]any)
	require.Len(t, mounts, 2)

	merge := load("merge-job.yaml")
	margs := strings.Join(toStrings(get(merge, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["args"]), " ")
	require.Contains(t, margs, "fleetsim merge /results/study/part-*-of-"+itoa(n)+".json")

	cm := load("configmap.yaml")
	study := get(cm, "data", "study.toml").(string)
	p := filepath.Join(t.TempDir(), "study.toml")
	require.NoError(t, os.WriteFile(p, []byte(study), 0o644))
	_, stderr, code := fleetsim(t, nil, "validate", p)
	require.Zero(t, code, stderr)
	pvc := load("pvc.yaml")
	require.Contains(t, get(pvc, "spec", "accessModes").([]any), "ReadWriteMany")
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
