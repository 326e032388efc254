package scenario

import (
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"math"
	"strconv"
	"strings"
)

// Axis is one dimension of a sweep: a scenario key and its values (as TOML
// value text).
type Axis struct {
	Key    string
	Values []string
}

// MaxSweepPoints bounds a grid, so a typo in a step cannot start a
// million runs.
const MaxSweepPoints = 10000

// ParseAxis parses "KEY=LO..HI:STEP" (inclusive; STEP defaults to 1) or
// "KEY=V1,V2,...".
func ParseAxis(spec string) (Axis, error) {
	key, vals, ok := strings.Cut(spec, "=")
	key, vals = strings.TrimSpace(key), strings.TrimSpace(vals)
	if !ok || key == "" || vals == "" {
		//lint:ignore ST1005 the message ends with the syntax it names
		return Axis{}, fmt.Errorf("sweep parameter %q: expected KEY=LO..HI:STEP or KEY=V1,V2,...", spec)
	}
	ax := Axis{Key: key}
	if lo, rest, isRange := strings.Cut(vals, ".."); isRange {
		hi, stepS, hasStep := strings.Cut(rest, ":")
		if !hasStep {
			stepS = "1"
		}
		a, e1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, e2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		st, e3 := strconv.ParseFloat(strings.TrimSpace(stepS), 64)
		if e1 != nil || e2 != nil || e3 != nil || math.IsNaN(a+b+st) || math.IsInf(a+b+st, 0) {
			return Axis{}, fmt.Errorf("sweep parameter %q: range bounds and step must be numbers", spec)
		}
		if st <= 0 || b < a {
			return Axis{}, fmt.Errorf("sweep parameter %q: need LO <= HI and STEP > 0", spec)
		}
		if (b-a)/st+1 > MaxSweepPoints {
			return Axis{}, fmt.Errorf("sweep parameter %q: more than %d points", spec, MaxSweepPoints)
		}
		if isInt(lo) && isInt(hi) && isInt(stepS) {
			// In integers: a float64 holds no int64 past 2^53 exactly, and
			// 9223372036854775807 rounded up overflowed to -2^63.
			ia, _ := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
			ib, _ := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
			is, _ := strconv.ParseInt(strings.TrimSpace(stepS), 10, 64)
			for v := ia; v <= ib; v += is {
				ax.Values = append(ax.Values, strconv.FormatInt(v, 10))
				if v > math.MaxInt64-is {
					break // the next value would overflow: past HI anyway
				}
			}
			return ax, nil
		}
		for i := 0; ; i++ {
			v := a + float64(i)*st
			if v > b+st*1e-9 {
				break
			}
			ax.Values = append(ax.Values, strconv.FormatFloat(results.Round6(v), 'g', -1, 64))
		}
		return ax, nil
	}
	for _, v := range strings.Split(vals, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return Axis{}, fmt.Errorf("sweep parameter %q: empty value", spec)
		}
		ax.Values = append(ax.Values, TOMLValue(v))
	}
	return ax, nil
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return err == nil
}

// TOMLValue writes v as a TOML value: numbers and booleans as they are,
// anything else as a string.
func TOMLValue(v string) string {
	if v == "true" || v == "false" {
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	if strings.HasPrefix(v, "\"") || strings.HasPrefix(v, "[") {
		return v
	}
	return strconv.Quote(v)
}
