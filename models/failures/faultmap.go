package failures

import "strings"

// Classification is what the taxonomy makes of one fault-log entry.
type Classification struct {
	Component Component
	Mode      Mode
	// Xid is the code the entry implies, 0 for none.
	Xid int
	// Action is the recommended action for the Xid, or the component's
	// default when there is none.
	Action Action
}

// faultClass maps an InfiniteHBD (Class, Desc) pair to the taxonomy. Desc
// "" matches any Desc of the class; the first match wins. The table, with
// the reasons:
//
//	Class / Desc                               component      mode       Xid
//	GPU / GPU DBE(Double Bit ECC) > Threshold  hbm            fail-stop  48  double-bit ECC (§2)
//	GPU / GPU SBE(Single Bit ECC) > Threshold  hbm            fail-stop  92  excessive single-bit rate, drained
//	GPU / GPU Lost                             gpu            fail-stop  79  fallen off the bus
//	GPU / GPU device not found                 gpu            fail-stop  79  likewise
//	GPU / GPU xid Error                        gpu            fail-stop  -   Xid not recorded
//	GPU / GPU device unknow error              gpu            fail-stop  -
//	GPU / GPU PCI link width low               gpu            fail-slow  -   degraded PCIe link
//	GPU / nvidia-smi Timeout                   gpu            hang       -   driver unresponsive
//	GPU / GPU Temperature High                 thermal        fail-slow  -   thermal throttling
//	GPU / GPU P2P Bandwidth Low                nvlink-switch  fail-slow  -   degraded NVLink bandwidth
//	GPU / Silent Data Corruption               sdc            fail-stop  -
//	GPU / (other)                              gpu            fail-stop  -
//	Parameter Plane Cable / *                  network        fail-stop  -   scale-out link down
//	NIC / NIC Link Speed low                   nic            fail-slow  -
//	NIC / NIC PCI link Width low               nic            fail-slow  -
//	NIC / (other: NIC Lost, Rnic Gid Error)    nic            fail-stop  -
//	Power Supply / *                           psu            fail-stop  -
//	Fan / *                                    thermal        fail-stop  -   cooling
//	CPU / *                                    cpu            fail-stop  -
//	Motherboard, Motherboard Battery / *       chassis        fail-stop  -
//	Riser Card / *                             io-board       fail-stop  -
//	RAID Card, File System / *                 ssd            fail-stop  -   local storage
//	Operating System / *                       software       fail-stop  -   kernel panic
//	Software Tool / *                          dependency     fail-stop  -   kubelet data absent
//	Firmware / *                               host-maint.    fail-stop  -   firmware mismatch
//	Change / *                                 network        fail-stop  -   cables, optical modules
//	Test / *                                   host-maint.    fail-stop  -   taken offline
//	anything else                              unknown        fail-stop  -   incl. Unknown Error, Stress
//	                                                                         Test Failure, System Crash,
//	                                                                         Suspect Machine Offline
//
// In a replay every fault takes its whole node out of service (the log
// records nodes, not GPUs), whatever the component.
var faultClass = []struct {
	class, desc string
	c           Component
	mode        Mode
	xid         int
}{
	{"GPU", "GPU DBE(Double Bit ECC) > Threshold", ComponentHBM, ModeFailStop, 48},
	{"GPU", "GPU SBE(Single Bit ECC) > Threshold", ComponentHBM, ModeFailStop, 92},
	{"GPU", "GPU Lost", ComponentGPU, ModeFailStop, 79},
	{"GPU", "GPU device not found", ComponentGPU, ModeFailStop, 79},
	{"GPU", "GPU PCI link width low", ComponentGPU, ModeFailSlow, 0},
	{"GPU", "nvidia-smi Timeout", ComponentGPU, ModeHang, 0},
	{"GPU", "GPU Temperature High", ComponentThermal, ModeFailSlow, 0},
	{"GPU", "GPU P2P Bandwidth Low", ComponentNVLinkSwitch, ModeFailSlow, 0},
	{"GPU", "Silent Data Corruption", ComponentSDC, ModeFailStop, 0},
	{"GPU", "", ComponentGPU, ModeFailStop, 0},
	{"Parameter Plane Cable", "", ComponentNetwork, ModeFailStop, 0},
	{"NIC", "NIC Link Speed low", ComponentNIC, ModeFailSlow, 0},
	{"NIC", "NIC PCI link Width low", ComponentNIC, ModeFailSlow, 0},
	{"NIC", "", ComponentNIC, ModeFailStop, 0},
	{"Power Supply", "", ComponentPSU, ModeFailStop, 0},
	{"Fan", "", ComponentThermal, ModeFailStop, 0},
	{"CPU", "", ComponentCPU, ModeFailStop, 0},
	{"Motherboard", "", ComponentChassis, ModeFailStop, 0},
	{"Motherboard Battery", "", ComponentChassis, ModeFailStop, 0},
	{"Riser Card", "", ComponentIOBoard, ModeFailStop, 0},
	{"RAID Card", "", ComponentSSD, ModeFailStop, 0},
	{"File System", "", ComponentSSD, ModeFailStop, 0},
	{"Operating System", "", ComponentSoftware, ModeFailStop, 0},
	{"Software Tool", "", ComponentDependency, ModeFailStop, 0},
	{"Firmware", "", ComponentHostMaintenance, ModeFailStop, 0},
	{"Change", "", ComponentNetwork, ModeFailStop, 0},
	{"Test", "", ComponentHostMaintenance, ModeFailStop, 0},
}

// Classify maps a fault-log entry (InfiniteHBD Class and Desc; matching
// ignores case and surrounding space) to the taxonomy. Unknown entries are
// ComponentUnknown, fail-stop.
func Classify(class, desc string) Classification {
	class, desc = strings.TrimSpace(class), strings.TrimSpace(desc)
	for _, m := range faultClass {
		if strings.EqualFold(m.class, class) && (m.desc == "" || strings.EqualFold(m.desc, desc)) {
			return classification(m.c, m.mode, m.xid)
		}
	}
	return classification(ComponentUnknown, ModeFailStop, 0)
}

func classification(c Component, m Mode, xid int) Classification {
	cl := Classification{Component: c, Mode: m, Xid: xid, Action: mustSpec(c).Action}
	if x, ok := LookupXid(xid); ok {
		cl.Action = x.Action
	}
	return cl
}
