package calibrate

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/stretchr/testify/require"
)

// TestCSVFollowsSchema: calibration.csv's header is results.CalibrationFile.
func TestCSVFollowsSchema(t *testing.T) {
	h, err := csv.NewReader(bytes.NewReader(CSV(nil))).Read()
	require.NoError(t, err)
	require.Equal(t, results.CalibrationFile.Names(), h)
}
