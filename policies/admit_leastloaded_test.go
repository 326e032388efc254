package policies

import (
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/stretchr/testify/require"
)

func TestLeastLoadedTokensAdmitter(t *testing.T) {
	c := DefaultResilienceConfig()
	c.Admission.Name, c.Admission.Limit = AdmitLeastLoadedTokens, 1000
	var ps config.Problems
	c.Validate("policies", &ps)
	require.NoError(t, ps.Err(), "the registered name validates")
	pol, err := BuildResilience(c, 3, nil)
	require.NoError(t, err)
	a := pol.Admit
	require.IsType(t, &LeastLoadedTokensAdmitter{}, a)
	// One replica with room admits, however loaded the others are (the
	// mean here, 1,400, would shed under "tokens").
	rs := []engine.ReplicaState{{Available: true, OutstandingTokens: 2000}, {Available: true, OutstandingTokens: 999},
		{Available: true, OutstandingTokens: 1200}}
	require.True(t, a.Admit(nil, rs, 0))
	rs[1].OutstandingTokens = 1000
	require.False(t, a.Admit(nil, rs, 0), "every replica at the limit")
	rs[1].OutstandingTokens, rs[1].Available = 0, false
	require.False(t, a.Admit(nil, rs, 0), "an unavailable replica's room does not count")
}
