package failures

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/sim"
)

// Component is the part of the fleet that fails, named as scenarios write it.
type Component string

// The components of the taxonomy. Their defaults (scope, mode, Xid, action,
// precursor) are in componentSpecs below.
const (
	ComponentGPU             Component = "gpu"              // faulty GPU (e.g. fallen off the bus)
	ComponentHBM             Component = "hbm"              // HBM double-bit ECC error
	ComponentSRAM            Component = "sram"             // on-chip SRAM (uncontained memory error)
	ComponentGSP             Component = "gsp"              // GPU system processor
	ComponentThermal         Component = "thermal"          // thermal interface, sensor, cooling
	ComponentSDC             Component = "sdc"              // silent data corruption
	ComponentNVLinkSwitch    Component = "nvlink-switch"    // NVSwitch (HGX baseboard) or NVL72 switch tray
	ComponentNIC             Component = "nic"              // scale-out NIC
	ComponentPSU             Component = "psu"              // power supply
	ComponentSSD             Component = "ssd"              // local storage
	ComponentCPU             Component = "cpu"              // host CPU
	ComponentHostMemory      Component = "host-memory"      // host DIMMs
	ComponentChassis         Component = "chassis"          // server chassis, motherboard, fans
	ComponentIOBoard         Component = "io-board"         // IO expansion board, riser
	ComponentNetwork         Component = "network"          // scale-out cable or switch port of one host
	ComponentToR             Component = "tor"              // top-of-rack switch: the whole rack
	ComponentSoftware        Component = "software"         // bug in the job or replica
	ComponentDependency      Component = "dependency"       // external dependency (storage, scheduler)
	ComponentHostMaintenance Component = "host-maintenance" // unplanned host maintenance
	ComponentNCCLWatchdog    Component = "nccl-watchdog"    // collective timeout, cause unknown
	ComponentOOM             Component = "oom"              // out-of-memory crash of the worker
	ComponentUnknown         Component = "unknown"          // unattributed host failure

	// Rack-scale components of a GB200 NVL72 rack (and their HGX
	// counterparts on the same per-GPU rate: see rackscale.go).
	ComponentSwitchTray  Component = "switch-tray"  // NVLink switch tray (NVL72) / one NVSwitch chip (HGX): the domain runs on fewer switches
	ComponentPowerShelf  Component = "power-shelf"  // rack power shelf fault past its redundancy: the rack goes dark
	ComponentCoolant     Component = "coolant"      // liquid-cooling loop (CDU, manifold leak): the rack is shut down
	ComponentComputeTray Component = "compute-tray" // NVL72 compute tray (2 Grace + 4 Blackwell) or HGX server board
	ComponentRowPower    Component = "row-power"    // row PDU / busway or row switch: every rack of a row
)

// Scope is the failure unit: what falls with one failure of a component.
type Scope uint8

const (
	// ScopeProcess: the job or replica process on one GPU. No hardware is
	// lost; the consumer extends it to the job or replica that owns the GPU.
	ScopeProcess Scope = iota
	// ScopeGPU: one GPU. Its TP group or job stops.
	ScopeGPU
	// ScopeHost: one host, every GPU in it: an HGX server (8 GPUs) or an
	// NVL72 compute tray (4 GPUs).
	ScopeHost
	// ScopeDomain: one NVLink domain: an HGX server (8) or an NVL72 rack
	// (72).
	ScopeDomain
	// ScopeRack: every host behind one ToR switch.
	ScopeRack
	// ScopeDomainDegraded: one NVLink domain keeps running on less NVLink
	// bandwidth (a switch tray of an NVL72 rack is out): nothing is down,
	// but every TP group in the domain slows through its communication
	// term until the part is replaced.
	ScopeDomainDegraded
	// ScopeRow: every rack of one row (Topology.RacksPerRow racks).
	ScopeRow
	numScopes
)

// scopeNames are the scopes' names; appended scopes keep the older ones'
// numbers (and so every existing profile's behaviour).
var scopeNames = [numScopes]string{"process", "gpu", "host", "domain", "rack", "nvlink-domain-degraded", "row"}

// scopeAliases are other names scenarios may use: a "tray" (NVL72 compute
// tray of 4 GPUs) and a "server" (HGX server of 8) are both the topology's
// host.
var scopeAliases = map[string]Scope{"tray": ScopeHost, "server": ScopeHost}

// ScopeInputNames are the names ParseScope accepts, in order of blast
// radius.
func ScopeInputNames() []string {
	return []string{"process", "gpu", "tray", "server", "host", "nvlink-domain-degraded", "domain", "rack", "row"}
}

func (s Scope) String() string {
	if s < numScopes {
		return scopeNames[s]
	}
	return fmt.Sprintf("scope(%d)", uint8(s))
}

// ScopeNames returns the scope names in order of blast radius.
func ScopeNames() []string { return slices.Clone(scopeNames[:]) }

// ParseScope returns the scope named s (a name or an alias).
func ParseScope(s string) (Scope, error) {
	for i, n := range scopeNames {
		if n == s {
			return Scope(i), nil
		}
	}
	if sc, ok := scopeAliases[s]; ok {
		return sc, nil
	}
	return 0, fmt.Errorf("failures: unknown scope %q; valid scopes: %s", s, strings.Join(ScopeInputNames(), ", "))
}

// Mode is how a failed unit behaves.
type Mode uint8

const (
	// ModeFailStop: the unit stops and everyone notices (the process exits,
	// the GPU disappears).
	ModeFailStop Mode = iota
	// ModeHang: a zombie. Collectives never complete but the process is
	// alive and answers a liveness ping.
	ModeHang
	// ModeFailSlow: a straggler. The unit runs at Event.SpeedFraction of its
	// normal speed until repaired; a synchronous job runs at the pace of its
	// slowest member.
	ModeFailSlow
	// ModeLinkFlap: intermittent link errors and timeouts until repaired.
	ModeLinkFlap
	// ModeOOM: the worker crashes out of memory.
	ModeOOM
	// ModeNVLinkDegraded: the NVLink domain runs at Event.NVLinkFraction of
	// its bandwidth until repaired (scope nvlink-domain-degraded).
	ModeNVLinkDegraded
	numModes
)

var modeNames = [numModes]string{"fail-stop", "hang", "fail-slow", "link-flap", "oom", "nvlink-degraded"}

func (m Mode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ModeNames returns the mode names.
func ModeNames() []string { return slices.Clone(modeNames[:]) }

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("failures: unknown mode %q; valid modes: %s", s, strings.Join(modeNames[:], ", "))
}

// Action is the recommended repair action (NVIDIA's Xid catalog vocabulary,
// CALIBRATION.md §2). Each action has a repair-time distribution in a
// profile.
type Action uint8

const (
	// ActionRestartApp: restart the job or replica; no hardware is out of
	// service (repair time 0 by default).
	ActionRestartApp Action = iota
	// ActionResetGPU: reset the GPU.
	ActionResetGPU
	// ActionRebootNode: reboot the host.
	ActionRebootNode
	// ActionRMA: take the part out, replace it from spares and RMA it.
	ActionRMA
	numActions
)

var actionNames = [numActions]string{"restart-app", "reset-gpu", "reboot-node", "rma"}

func (a Action) String() string {
	if a < numActions {
		return actionNames[a]
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// ActionNames returns the action names.
func ActionNames() []string { return slices.Clone(actionNames[:]) }

// ParseAction returns the action named s.
func ParseAction(s string) (Action, error) {
	for i, n := range actionNames {
		if n == s {
			return Action(i), nil
		}
	}
	return 0, fmt.Errorf("failures: unknown action %q; valid actions: %s", s, strings.Join(actionNames[:], ", "))
}

// Xid is one NVIDIA Xid code with its meaning and immediate action
// (CALIBRATION.md §2, NVIDIA Xid catalog, P).
type Xid struct {
	Code    int
	Meaning string
	// Action is the closest repair action; Advice is NVIDIA's wording.
	Action Action
	Advice string
}

// xids is the CALIBRATION.md §2 table.
var xids = []Xid{
	{13, "graphics engine exception (usually app bug)", ActionRestartApp, "restart app"},
	{31, "GPU memory page fault (usually app bug)", ActionRestartApp, "restart app"},
	{43, "GPU stopped processing (app fault)", ActionRestartApp, "ignore"},
	{45, "preemptive cleanup after earlier errors", ActionRestartApp, "follow the other Xid"},
	{48, "double-bit ECC error", ActionResetGPU, "reset GPU / reboot; past threshold RMA"},
	{63, "row-remap event", ActionRestartApp, "ignore (takes effect at next reset)"},
	{64, "row-remap failure", ActionResetGPU, "reset GPU; repeated → RMA"},
	{74, "NVLink error", ActionRebootNode, "reset / reboot; may be the peer"},
	{79, "GPU fallen off the bus", ActionRebootNode, "reboot node"},
	{92, "excessive single-bit ECC rate (precursor)", ActionRestartApp, "ignore now; investigate"},
	{94, "contained memory error", ActionRestartApp, "restart app"},
	{95, "uncontained memory error", ActionResetGPU, "reset GPU"},
	{119, "GSP RPC timeout", ActionResetGPU, "reset GPU; persists → power cycle"},
	{120, "GSP error", ActionResetGPU, "reset GPU; persists → power cycle"},
	{140, "unrecoverable ECC error escape", ActionResetGPU, "reset GPU"},
}

// Xids returns the Xid table, by code.
func Xids() []Xid { return slices.Clone(xids) }

// LookupXid returns the Xid with the given code.
func LookupXid(code int) (Xid, bool) {
	for _, x := range xids {
		if x.Code == code {
			return x, true
		}
	}
	return Xid{}, false
}

// Precursor is a signal some failures emit before they happen.
type Precursor struct {
	// Signal says what is seen, e.g. "correctable ECC rising (Xid 92)".
	Signal string
	// Lead is how long before the failure the signal appears (>= 0).
	Lead sim.Time
	// DetectProbability is the chance the signal is seen at all (0..1).
	DetectProbability float64
}

// Spec is what the taxonomy says about a component: its failure unit and
// default mode, Xid, action and precursor. Profiles copy these and may
// override them.
type Spec struct {
	Component   Component
	Description string
	Scope       Scope
	Mode        Mode
	// Xid is the code the failure reports, 0 for none.
	Xid    int
	Action Action
	// SpeedFraction is, for ModeFailSlow, the fraction of normal speed the
	// unit runs at (0 < f < 1); 1 otherwise.
	SpeedFraction float64
	// Precursor, when DetectProbability > 0, is emitted before failures.
	Precursor Precursor
}

// defaultSpeedFraction is a straggler's speed: the seed's "one bad GPU at
// 10% throughput loss" (CALIBRATION.md §6).
const defaultSpeedFraction = 0.9

// Precursor defaults. Assumption: CALIBRATION.md §2 gives the signals (the
// 85 °C warning before a 95 °C failure; single-bit ECC accumulation before a
// double-bit error) but no lead times or detection rates, so these are
// placeholders to override: 6 h and 50% for HBM, 10 min and 80% for thermal.
var (
	hbmPrecursor = Precursor{Signal: "correctable ECC rising (Xid 92)", Lead: 6 * sim.Hour, DetectProbability: 0.5}
	// The 85 °C / 95 °C thresholds: CALIBRATION.md §2, operator rules (VESSL).
	thermalPrecursor = Precursor{Signal: "temperature 85 °C warning (failure at 95 °C)", Lead: 10 * sim.Minute, DetectProbability: 0.8}
)

// componentSpecs is the taxonomy. Xids and actions follow CALIBRATION.md §2;
// hardware with no Xid that needs a part is RMA; software is a process
// restart.
var componentSpecs = []Spec{
	{ComponentGPU, "faulty GPU (fallen off the bus)", ScopeGPU, ModeFailStop, 79, ActionRebootNode, 1, Precursor{}},
	{ComponentHBM, "HBM double-bit ECC error", ScopeGPU, ModeFailStop, 48, ActionResetGPU, 1, hbmPrecursor},
	{ComponentSRAM, "GPU SRAM uncontained memory error", ScopeGPU, ModeFailStop, 95, ActionResetGPU, 1, Precursor{}},
	{ComponentGSP, "GPU system processor (GSP) timeout", ScopeGPU, ModeFailStop, 119, ActionResetGPU, 1, Precursor{}},
	{ComponentThermal, "GPU thermal interface or sensor", ScopeGPU, ModeFailStop, 0, ActionRMA, 1, thermalPrecursor},
	{ComponentSDC, "silent data corruption", ScopeGPU, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentNVLinkSwitch, "NVLink switch (whole NVLink domain)", ScopeDomain, ModeFailStop, 74, ActionRebootNode, 1, Precursor{}},
	{ComponentNIC, "scale-out NIC", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentPSU, "power supply", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentSSD, "SSD", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentCPU, "host CPU", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentHostMemory, "host memory", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentChassis, "server chassis", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentIOBoard, "IO expansion board", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentNetwork, "network cable or switch port (one host)", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentToR, "top-of-rack switch (every host in the rack)", ScopeRack, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentSoftware, "software bug", ScopeProcess, ModeFailStop, 0, ActionRestartApp, 1, Precursor{}},
	{ComponentDependency, "external dependency", ScopeProcess, ModeFailStop, 0, ActionRestartApp, 1, Precursor{}},
	{ComponentHostMaintenance, "unplanned host maintenance", ScopeHost, ModeFailStop, 0, ActionRebootNode, 1, Precursor{}},
	{ComponentNCCLWatchdog, "NCCL watchdog timeout (hang)", ScopeProcess, ModeHang, 0, ActionRestartApp, 1, Precursor{}},
	{ComponentOOM, "out-of-memory crash", ScopeProcess, ModeOOM, 0, ActionRestartApp, 1, Precursor{}},
	{ComponentUnknown, "unattributed host failure", ScopeHost, ModeFailStop, 0, ActionRebootNode, 1, Precursor{}},
	// Rack-scale components (rackscale.go has their rates and sources).
	// A switch tray degrades its domain (Xid 74: NVLink error) and is
	// replaced (RMA); the power shelf and the coolant loop take the rack.
	{ComponentSwitchTray, "NVLink switch tray: the domain runs on less NVLink bandwidth", ScopeDomainDegraded, ModeNVLinkDegraded, 74, ActionRMA, degradedTrainingSpeed, Precursor{}},
	{ComponentPowerShelf, "power shelf past its redundancy: the rack goes dark", ScopeRack, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentCoolant, "liquid-cooling loop (CDU, manifold leak): the rack is shut down", ScopeRack, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentComputeTray, "compute tray (NVL72) or server board (HGX)", ScopeHost, ModeFailStop, 0, ActionRMA, 1, Precursor{}},
	{ComponentRowPower, "row power (PDU, busway) or row switch: every rack of a row", ScopeRow, ModeFailStop, 0, ActionRebootNode, 1, Precursor{}},
}

// Components returns the taxonomy's components in table order.
func Components() []Component {
	out := make([]Component, len(componentSpecs))
	for i, s := range componentSpecs {
		out[i] = s.Component
	}
	return out
}

func componentNames() []string {
	out := make([]string, len(componentSpecs))
	for i, s := range componentSpecs {
		out[i] = string(s.Component)
	}
	return out
}

// SpecOf returns the taxonomy's defaults for c.
func SpecOf(c Component) (Spec, error) {
	for _, s := range componentSpecs {
		if s.Component == c {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("failures: unknown component %q; valid components: %s", c, strings.Join(componentNames(), ", "))
}

// mustSpec is SpecOf for the package's own tables.
func mustSpec(c Component) Spec {
	s, err := SpecOf(c)
	if err != nil {
		panic(err)
	}
	return s
}
