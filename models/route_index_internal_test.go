package models

import "testing"

// TestIndexRoutesKnownKeysOnly: the pool indexes only the RouteKeys it
// knows (a router declaring another keeps its scan), and once it keeps an
// index by one key it refuses another.
func TestIndexRoutesKnownKeysOnly(t *testing.T) {
	for _, k := range []RouteKey{0, KeyWeightedOutstanding + 1, 255} {
		if newPool(nil, 0).indexRoutes(k) {
			t.Errorf("pool indexed by unknown key %v", k)
		}
	}
	for _, k := range []RouteKey{KeyOutstanding, KeyKVUtilization, KeyWeightedOutstanding} {
		p := newPool(nil, 0)
		if !p.indexRoutes(k) || !p.indexRoutes(k) {
			t.Errorf("pool refused key %v", k)
		}
		if p.indexRoutes(k%3 + 1) {
			t.Errorf("pool indexed by %v also took %v", k, k%3+1)
		}
	}
}
