package results

import (
	"math"
	"strconv"
)

// Round6 keeps six decimals of x, so that the JSON and CSV files are stable
// and readable; NaN and infinities become 0.
func Round6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1e6) / 1e6
}

// FormatFloat writes x as a CSV cell: the shortest decimal that reads back
// as x.
func FormatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
