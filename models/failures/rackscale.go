package failures

import "fmt"

// Rack-scale failure domains: the components a GB200 NVL72 rack adds to the
// per-GPU failures of Llama 3 Table 5, with their blast scope and repair
// path. An NVL72 rack is 18 compute trays (4 Blackwell GPUs, 2 Grace CPUs
// each), 9 NVLink switch trays, power shelves and a liquid-cooling loop
// (NVIDIA GB200 NVL72 product page; DGX GB200 user guide). The same rows on
// HGX servers keep their per-GPU rates; only the units they hit differ, so
// a comparison of the two topologies follows from this table.
//
// No public source gives failure rates for these parts: every rate below is
// an ASSUMPTION, stated as an annual failure rate (AFR) per unit, converted
// to a per-GPU-hour rate on the NVL72 rack's 72 GPUs, and each is a
// parameter — override or scale it in a scenario:
//
//	[[failures.components]]
//	category = "coolant"
//	scale = 3
//
// CALIBRATION.md has no row for them; `fleetsim failures show rackscale`
// marks them "U".
const (
	// switchTrayAFR: one NVLink switch tray failing in a year. Assumption:
	// 2% per tray, the order of data-centre switch annual failure rates;
	// 9 trays per rack.
	switchTrayAFR = 0.02
	// powerShelfRackAFR: power-shelf faults that take a rack dark (beyond
	// the shelves' redundancy), per rack-year. Assumption: 0.1.
	powerShelfRackAFR = 0.1
	// coolantRackAFR: liquid-cooling faults (CDU, manifold leak) that shut
	// a rack down, per rack-year. Assumption: 0.1.
	coolantRackAFR = 0.1
	// rackGPUHoursPerYear is one NVL72 rack's GPU-hours in a year.
	rackGPUHoursPerYear = nvl72RackGPUs * 8760
)

// degradedTrainingSpeed is a training job's speed while one switch tray of
// its NVLink domain is out: 1/(1 + c·(1/f − 1)) with f = 8/9 of the
// bandwidth left and c = 0.25, the share of a step spent in exposed
// tensor-parallel communication (assumption; serving replicas use the step
// model's own all-reduce term instead, models/hw/perf.go). = 0.970.
const degradedTrainingSpeed = 1 / (1 + 0.25*(9.0/8-1))

// Repair paths of the rack-scale parts. Assumptions (no public figures):
// a switch tray is swapped in 4 h (the domain runs degraded until then);
// a power shelf in 4 h; a cooling fault is drained, fixed, refilled and
// leak-tested in 24 h.
// componentRepair holds them: a row of one of these components (built in or
// from a [[failures.components]] table) repairs on this path, not its
// action's.
var componentRepair = map[Component]RepairDist{
	ComponentSwitchTray: FixedRepair(4),
	ComponentPowerShelf: FixedRepair(4),
	ComponentCoolant:    FixedRepair(24),
}

// ProfileRackScale is Llama 3's per-GPU rates plus the rack-scale rows.
const ProfileRackScale = "rackscale"

// rackScaleRows are the rack-scale components' rows (rates: see above).
func rackScaleRows() []Row {
	row := func(category, label string, c Component, perRackYear float64) Row {
		return newRow(category, label, c, perRackYear/rackGPUHoursPerYear, 0, "U")
	}
	return []Row{
		row("switch-tray", "NVLink switch tray (1 of 9; HGX: 1 of 4 NVSwitch chips)", ComponentSwitchTray, switchTrayAFR*nvl72SwitchTrays),
		row("power-shelf", "power shelf: rack dark", ComponentPowerShelf, powerShelfRackAFR),
		row("coolant", "liquid cooling (CDU, manifold leak): rack down", ComponentCoolant, coolantRackAFR),
	}
}

// rackScaleProfile: Llama 3 Table 5's rows (per GPU, as measured on HGX
// H100) plus the rack-scale rows.
func rackScaleProfile() *Profile {
	p := llama3Profile()
	p.Name = ProfileRackScale
	p.Description = "Llama 3 per-GPU rates plus rack-scale parts (NVLink switch trays, power shelves, liquid cooling)"
	p.Source = p.Source + "; rack-scale rows: assumptions (models/failures/rackscale.go)"
	p.RateConfidence = "U"
	p.Rows = append(p.Rows, rackScaleRows()...)
	p.Notes = append(p.Notes,
		fmt.Sprintf("U: rack-scale rates are assumptions, no public figure: switch tray %.0f%%/tray-year (9 per rack), "+
			"power shelf %.2g and coolant %.2g rack-downs per rack-year; override them with [[failures.components]]",
			switchTrayAFR*100, powerShelfRackAFR, coolantRackAFR),
		"switch-tray: the NVLink domain keeps 1 − 1/(switch units) of its bandwidth (8/9 on NVL72, 3/4 on HGX) until the tray is swapped (4 h, assumption)",
		"power-shelf and coolant take the whole rack: 72 GPUs on NVL72, one ToR's servers on HGX; repairs 4 h and 24 h (assumptions)")
	return p
}
