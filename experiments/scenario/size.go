package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Target is one SLO term of a sizing search.
type Target struct {
	Name  string  // as written: "ttft_p99", "success", ...
	Key   string  // summary key, or "success"
	Limit float64 // ms for latencies, a fraction for rates
	Upper bool    // true: the metric must stay at or below Limit
}

// ParseSLO parses "ttft_p99=800ms,success=99.9%". Latency terms are
// {ttft,tpot,itl,e2e,queue}_{p50,p90,p95,p99,p999} (or _mean) with a duration
// (ms, s; a bare number is ms); rate terms are success (completed /
// arrived) and slo_attainment, as a percentage or a fraction.
func ParseSLO(spec string) ([]Target, error) {
	var out []Target
	for _, term := range strings.Split(spec, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		name, val, ok := strings.Cut(term, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || val == "" {
			return nil, fmt.Errorf("--slo %q: expected NAME=VALUE terms such as ttft_p99=800ms,success=99.9%%", term)
		}
		switch name {
		case "success", "slo_attainment":
			f, err := parseFraction(val)
			if err != nil {
				return nil, fmt.Errorf("--slo %s: %w", name, err)
			}
			key := "success"
			if name == "slo_attainment" {
				key = "goodput.slo_attainment"
			}
			out = append(out, Target{Name: name, Key: key, Limit: f})
		default:
			metric, q, ok := strings.Cut(name, "_")
			valid := map[string]bool{"ttft": true, "tpot": true, "itl": true, "e2e": true, "queue": true}
			validQ := map[string]bool{"p50": true, "p90": true, "p95": true, "p99": true, "p999": true, "mean": true}
			if !ok || !valid[metric] || !validQ[q] {
				return nil, fmt.Errorf("--slo %q: unknown term; use {ttft,tpot,itl,e2e,queue}_{p50,p90,p95,p99,p999,mean}, success or slo_attainment", name)
			}
			ms, err := parseMs(val)
			if err != nil {
				return nil, fmt.Errorf("--slo %s: %w", name, err)
			}
			out = append(out, Target{Name: name, Key: "latency_ms." + metric + "." + q, Limit: ms, Upper: true})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--slo: no terms; e.g. --slo ttft_p99=800ms,success=99.9%%")
	}
	return out, nil
}

func parseMs(v string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v = strings.TrimSuffix(v, "ms")
	case strings.HasSuffix(v, "s"):
		v, mult = strings.TrimSuffix(v, "s"), 1000
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return 0, fmt.Errorf("expected a positive duration such as 800ms or 0.8s, found %q", v)
	}
	return f * mult, nil
}

func parseFraction(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("expected a percentage such as 99.9%% or a fraction such as 0.999, found %q", v)
	}
	if pct {
		f /= 100
	}
	if f <= 0 || f > 1 {
		return 0, fmt.Errorf("must be in (0, 100%%], found %q", v)
	}
	return f, nil
}
