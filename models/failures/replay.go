package failures

import (
	"errors"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/workloads"
)

// FaultReader yields a fault log's faults in start order (io.EOF at the
// end); *workloads.FaultLogReader is one.
type FaultReader interface {
	Next() (workloads.Fault, error)
}

// Replay is a Source that replays a fault log on a topology: each fault
// takes one host (server or tray) out of service for the log's repair time.
// Node ids are mapped onto hosts 0, 1, 2, … in order of their first fault,
// so the mapping is deterministic and needs no random stream; a log with
// more distinct nodes than the topology has hosts is an error. Event times
// are the log's times (days from its origin), Category is "Level/Class",
// Label is Desc, and component, mode, Xid and action come from Classify.
type Replay struct {
	r     FaultReader
	topo  Topology
	hosts map[string]int
	err   error
}

// NewReplay replays r's faults on topo.
func NewReplay(r FaultReader, topo Topology) (*Replay, error) {
	if err := topo.Check(); err != nil {
		return nil, err
	}
	return &Replay{r: r, topo: topo, hosts: map[string]int{}}, nil
}

// Next returns the next fault as an event.
func (p *Replay) Next() (Event, bool) {
	if p.err != nil {
		return Event{}, false
	}
	f, err := p.r.Next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			p.err = err
		}
		return Event{}, false
	}
	host, ok := p.hosts[f.NodeID]
	if !ok {
		host = len(p.hosts)
		if host >= p.topo.Hosts() {
			p.err = fmt.Errorf("failures: fault log line %d: node %q is the log's node number %d, but the topology has %d hosts",
				f.StartLine, f.NodeID, host+1, p.topo.Hosts())
			return Event{}, false
		}
		p.hosts[f.NodeID] = host
	}
	cl := Classify(f.Class, f.Desc)
	first, n := p.topo.UnitGPUs(ScopeHost, host)
	ev := Event{
		Time: f.Start(), Category: f.Level + "/" + f.Class, Label: f.Desc,
		Component: cl.Component, Mode: cl.Mode, Scope: ScopeHost, Unit: host, FirstGPU: first, GPUs: n,
		DownFirstGPU: first, DownGPUs: n,
		Xid: cl.Xid, Action: cl.Action, Repair: f.Repair(), SpeedFraction: 1, Precursor: NoPrecursor,
	}
	if ev.Mode == ModeFailSlow {
		ev.SpeedFraction = defaultSpeedFraction
	}
	return ev, true
}

// Err is the reader's error, if it failed.
func (p *Replay) Err() error { return p.err }

// Nodes is the number of distinct nodes seen so far.
func (p *Replay) Nodes() int { return len(p.hosts) }

// HostOf returns the host a node id was mapped to.
func (p *Replay) HostOf(nodeID string) (int, bool) {
	h, ok := p.hosts[nodeID]
	return h, ok
}
