package failures

import (
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
)

// Topology is the physical layout failures fall on. GPUs are numbered
// rack-major: GPU g is in host g/HostGPUs, NVLink domain g/DomainGPUs and
// rack (g/DomainGPUs)/DomainsPerRack, so every unit's GPUs are one
// contiguous range. The last rack may be partial.
type Topology struct {
	// Kind is "hgx" or "nvl72", for display.
	Kind string
	// HostGPUs is the number of GPUs behind one host: 8 in an HGX server,
	// 4 in an NVL72 compute tray.
	HostGPUs int
	// DomainGPUs is the NVLink domain size: 8 (HGX server) or 72 (NVL72
	// rack of 18 trays of 4).
	DomainGPUs int
	// Domains is the number of NVLink domains.
	Domains int
	// DomainsPerRack is the number of domains behind one ToR switch.
	DomainsPerRack int
	// RacksPerRow is the number of racks in a row (scope row); 0 means
	// DefaultRacksPerRow.
	RacksPerRow int
	// SwitchUnits is the number of NVLink switch units a domain's bandwidth
	// is spread over: 9 switch trays in an NVL72 rack, 4 NVSwitch chips on
	// an HGX H100 baseboard. Losing one leaves 1 − 1/SwitchUnits of the
	// bandwidth (a row's nvlink_bandwidth_fraction overrides it).
	SwitchUnits int
}

// Topology kinds.
const (
	KindHGX   = "hgx"
	KindNVL72 = "nvl72"
)

// Shapes of the two platforms (DESIGN.md, world model; CALIBRATION.md §3:
// GB200 "NVL72 rack of 72"; issue 3: 18 compute trays of 4).
const (
	hgxServerGPUs  = 8
	nvl72RackGPUs  = 72
	nvl72TrayGPUs  = 4
	defaultHGXRack = 4 // servers per rack; assumption (~40 kW air-cooled racks), no CALIBRATION.md row
	// NVIDIA GB200 NVL72 product page / DGX GB200 user guide: 9 NVLink
	// switch trays (2 NVLink Switch chips each) join the 72 GPUs; every GPU
	// has one link to each of the 18 chips, so one tray out removes 1/9 of
	// every GPU's NVLink bandwidth.
	nvl72SwitchTrays = 9
	// NVIDIA HGX H100 8-GPU baseboard: 4 third-generation NVSwitch chips.
	// The GPUs' 18 links are split 5/4/4/5 over them; 1/4 is the even share.
	hgxNVSwitches = 4
)

// DefaultRacksPerRow is the racks of one row (scope row). Assumption: no
// public figure; 8 racks to a row PDU or row switch, a parameter
// (failures.racks_per_row).
const DefaultRacksPerRow = 8

// HGX returns servers 8-GPU servers, serversPerRack of them behind each
// ToR switch.
func HGX(servers, serversPerRack int) Topology {
	return Topology{Kind: KindHGX, HostGPUs: hgxServerGPUs, DomainGPUs: hgxServerGPUs, Domains: servers, DomainsPerRack: serversPerRack,
		RacksPerRow: DefaultRacksPerRow, SwitchUnits: hgxNVSwitches}
}

// NVL72 returns racks GB200 NVL72 racks (72 GPUs in 18 trays of 4), one
// ToR switch each.
func NVL72(racks int) Topology {
	return Topology{Kind: KindNVL72, HostGPUs: nvl72TrayGPUs, DomainGPUs: nvl72RackGPUs, Domains: racks, DomainsPerRack: 1,
		RacksPerRow: DefaultRacksPerRow, SwitchUnits: nvl72SwitchTrays}
}

// Check reports an impossible topology.
func (t Topology) Check() error {
	switch {
	case t.HostGPUs < 1 || t.DomainGPUs < 1 || t.Domains < 1 || t.DomainsPerRack < 1 || t.RacksPerRow < 0 || t.SwitchUnits < 0:
		return fmt.Errorf("failures: topology needs hosts, domains and racks of at least 1, found %+v", t)
	case t.DomainGPUs%t.HostGPUs != 0:
		return fmt.Errorf("failures: topology: %d GPUs per host do not divide an NVLink domain of %d", t.HostGPUs, t.DomainGPUs)
	case int64(t.DomainGPUs)*int64(t.Domains) > 1<<31-1:
		return fmt.Errorf("failures: topology of %d×%d GPUs is too large", t.Domains, t.DomainGPUs)
	}
	return nil
}

// GPUs is the number of GPUs.
func (t Topology) GPUs() int { return t.DomainGPUs * t.Domains }

// Hosts is the number of hosts (HGX servers or NVL72 trays).
func (t Topology) Hosts() int { return t.GPUs() / t.HostGPUs }

// Racks is the number of racks (ToR switches).
func (t Topology) Racks() int { return (t.Domains + t.DomainsPerRack - 1) / t.DomainsPerRack }

// rows is RacksPerRow, defaulted.
func (t Topology) rows() int {
	if t.RacksPerRow > 0 {
		return t.RacksPerRow
	}
	return DefaultRacksPerRow
}

// DegradedNVLinkFraction is the NVLink bandwidth a domain keeps with one
// switch unit out: 1 − 1/SwitchUnits (8/9 on NVL72, 3/4 on HGX); 1/2 when
// the topology does not say.
func (t Topology) DegradedNVLinkFraction() float64 {
	if t.SwitchUnits < 2 {
		return 0.5
	}
	return 1 - 1/float64(t.SwitchUnits)
}

// unitGPUsNominal is the size of a full unit of scope s.
func (t Topology) unitGPUsNominal(s Scope) int {
	switch s {
	case ScopeHost:
		return t.HostGPUs
	case ScopeDomain, ScopeDomainDegraded:
		return t.DomainGPUs
	case ScopeRack:
		return t.DomainGPUs * t.DomainsPerRack
	case ScopeRow:
		return t.DomainGPUs * t.DomainsPerRack * t.rows()
	}
	return 1
}

// Units is the number of units of scope s.
func (t Topology) Units(s Scope) int {
	n := t.unitGPUsNominal(s)
	return (t.GPUs() + n - 1) / n
}

// UnitOf is the index of the unit of scope s that holds GPU gpu.
func (t Topology) UnitOf(s Scope, gpu int) int { return gpu / t.unitGPUsNominal(s) }

// UnitGPUs returns the GPUs of unit u of scope s: [first, first+n).
func (t Topology) UnitGPUs(s Scope, u int) (first, n int) {
	size := t.unitGPUsNominal(s)
	first = u * size
	return first, min(size, t.GPUs()-first)
}

// TopologyConfig describes a topology in a scenario.
type TopologyConfig struct {
	// Kind is "hgx" (8-GPU servers) or "nvl72" (GB200 racks of 72). Default
	// "hgx".
	Kind string `toml:"kind"`
	// Servers is the number of HGX servers (kind hgx). Default 2,048, the
	// Llama 3 run (CALIBRATION.md §1: 16,384 H100, 8 per server).
	Servers int `toml:"servers"`
	// ServersPerRack is the number of HGX servers behind one ToR (kind hgx).
	// Default 4 (assumption, no CALIBRATION.md row).
	ServersPerRack int `toml:"servers_per_rack"`
	// Racks is the number of NVL72 racks (kind nvl72). Default 0.
	Racks int `toml:"racks"`
	// RacksPerRow is the number of racks in a row (scope row). Default 0:
	// 8 (assumption, DefaultRacksPerRow).
	RacksPerRow int `toml:"racks_per_row"`
}

// DefaultTopologyConfig is the Llama 3 cluster: 2,048 HGX servers.
func DefaultTopologyConfig() TopologyConfig {
	return TopologyConfig{Kind: KindHGX, Servers: 2048, ServersPerRack: defaultHGXRack}
}

// Validate records every problem of c under prefix.
func (c *TopologyConfig) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(config.Key(prefix, "kind"), c.Kind, []string{KindHGX, KindNVL72})
	switch c.Kind {
	case KindHGX:
		ps.PositiveInt(config.Key(prefix, "servers"), c.Servers)
		ps.PositiveInt(config.Key(prefix, "servers_per_rack"), c.ServersPerRack)
	case KindNVL72:
		ps.PositiveInt(config.Key(prefix, "racks"), c.Racks)
	}
	if c.RacksPerRow < 0 || c.RacksPerRow > 1<<20 {
		ps.Add(config.Key(prefix, "racks_per_row"), "must be between 0 (default %d) and %d, found %d", DefaultRacksPerRow, 1<<20, c.RacksPerRow)
	}
	if c.Servers > 1<<27 {
		ps.Add(config.Key(prefix, "servers"), "must be at most %d, found %d", 1<<27, c.Servers)
	}
	if c.Racks > 1<<24 {
		ps.Add(config.Key(prefix, "racks"), "must be at most %d, found %d", 1<<24, c.Racks)
	}
}

// Topology builds the topology c describes; c must be valid.
func (c *TopologyConfig) Topology() Topology {
	t := HGX(c.Servers, c.ServersPerRack)
	if c.Kind == KindNVL72 {
		t = NVL72(c.Racks)
	}
	if c.RacksPerRow > 0 {
		t.RacksPerRow = c.RacksPerRow
	}
	return t
}
