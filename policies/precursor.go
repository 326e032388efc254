package policies

import "github.com/fleetsim/fleetsim/models/fleet"

// PrecursorDrain drains a replica as soon as a precursor of one of the
// listed components is seen (empty: any): the seeds' operator rule that
// single-bit ECC accumulation precedes double-bit failures and drives
// proactive drain (CALIBRATION.md §2), and the 85 °C warning before the
// 95 °C failure.
type PrecursorDrain struct {
	Components map[string]bool
}

var _ fleet.PrecursorPolicy = PrecursorDrain{}

// Drain implements fleet.PrecursorPolicy.
func (p PrecursorDrain) Drain(component string) bool {
	return len(p.Components) == 0 || p.Components[component]
}
