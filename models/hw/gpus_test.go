package hw

import (
	"math"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/stretchr/testify/require"
)

// The GPUs of issue 35 with the datasheet figures their catalog rows cite
// (catalog.go): dense peak FLOP/s per precision (0: the GPU lacks it), HBM
// and its bandwidth. A row edited away from its source fails here.
var citedGPUs = []struct {
	name             string
	bf16, fp8, fp4   float64
	hbm, hbmBW       float64
	domain           int
	vendor, fabric   string
	linkBytesPerS    float64
	tdpWatts         float64
	pricePerGPUHour  float64
	fp8KVReadsAsBF16 bool
}{
	{"A100-40GB", 312e12, 0, 0, 40e9, 1.555e12, 8, "", "", 600e9, 400, 4.10, true},
	{"A100-80GB", 312e12, 0, 0, 80e9, 2.039e12, 8, "", "", 600e9, 400, 5.12, true},
	{"L40S", 362.05e12, 733e12, 0, 48e9, 864e9, 8, "", FabricPCIe, 64e9, 350, 3.77, false},
	{"H20", 148e12, 296e12, 0, 96e9, 4.0e12, 8, "", "", 900e9, 400, 2.00, false},
	{"B300", 2250e12, 4500e12, 13500e12, 288e9, 8e12, 8, "", "", 1.8e12, 1100, 11.00, false},
	{"GB300", 2500e12, 5000e12, 15000e12, 279e9, 8e12, 72, "", "", 1.8e12, 1400, 12.50, false},
	{"MI300X", 1307.4e12, 2614.9e12, 0, 192e9, 5.3e12, 8, VendorAMD, FabricMesh, 896e9, 750, 6.00, false},
	{"MI325X", 1307.4e12, 2614.9e12, 0, 256e9, 6.0e12, 8, VendorAMD, FabricMesh, 896e9, 1000, 7.00, false},
	{"MI355X", 2516.6e12, 5033.2e12, 10066.3e12, 288e9, 8.0e12, 8, VendorAMD, FabricMesh, 1075.2e9, 1400, 9.00, false},
}

// idealProfile runs every kernel at the hardware's peak with no fixed
// costs: the step model is then the roofline.
func idealProfile() PerfProfile {
	return PerfProfile{Name: "ideal", GEMMEfficiencyBF16: 1, GEMMEfficiencyFP8: 1, GEMMEfficiencyFP4: 1,
		GEMMHalfTokens: 1e-9, WeightBandwidthEfficiency: 1, AttentionEfficiency: 1, KVBandwidthEfficiency: 1,
		NVLinkEfficiency: 1}
}

// Each new GPU's row is its datasheet's, validates, and the step model
// reaches (never passes) its cited peak at each precision it has, refuses
// compute in one it lacks, and streams weights at its cited bandwidth.
func TestNewGPUsRoofline(t *testing.T) {
	cat := NewCatalog()
	llm := cat.LLMs["llama-3-8b"]
	pp := idealProfile()
	for _, c := range citedGPUs {
		t.Run(c.name, func(t *testing.T) {
			g, ok := cat.GPUs[c.name]
			require.True(t, ok, "not in the catalog")
			var ps config.Problems
			g.Validate("gpus.0", &ps)
			require.Empty(t, ps.List)
			require.Equal(t, c.bf16, g.BF16FLOPS)
			require.Equal(t, c.fp8, g.FP8FLOPS)
			require.Equal(t, c.fp4, g.FP4FLOPS)
			require.Equal(t, c.hbm, g.HBMBytes)
			require.Equal(t, c.hbmBW, g.HBMBytesPerS)
			require.Equal(t, c.domain, g.DomainGPUs)
			require.Equal(t, c.vendor, g.Vendor)
			require.Equal(t, c.fabric, g.Fabric)
			require.Equal(t, c.linkBytesPerS, g.NVLinkBytesPerS)
			require.Equal(t, c.tdpWatts, g.TDPWatts)
			require.Equal(t, c.pricePerGPUHour, g.PricePerGPUHour)
			require.Less(t, g.ReservedPricePerGPUHour, g.PricePerGPUHour)
			require.Positive(t, g.NICBytesPerS)
			for _, p := range []struct {
				prec Precision
				peak float64
			}{{BF16, c.bf16}, {FP8, c.fp8}, {FP4, c.fp4}} {
				m, err := newStepModel(g, llm, 1, p.prec, p.prec, BF16, pp)
				if p.peak == 0 {
					require.Error(t, err, "%s compute on a GPU without it", p.prec)
					require.Contains(t, err.Error(), c.name)
					// The weights still load, computing in BF16 (W8A16, W4A16).
					m, err = NewStepModel(g, llm, 1, p.prec, BF16, pp)
					require.NoError(t, err)
					require.Equal(t, BF16, m.Compute)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, p.prec, m.Compute)
				// A large prefill is compute-bound: each further token
				// costs 2·params FLOPs at the cited peak.
				const T = 1 << 20
				slope := (m.Step(StepShape{PrefillTokens: 2 * T, PrefillSeqs: 1}) - m.Step(StepShape{PrefillTokens: T, PrefillSeqs: 1})) / T
				require.InEpsilon(t, 2*llm.Params/p.peak, slope, 1e-6, "%s peak", p.prec)
				// One decoding sequence is bandwidth-bound: the weights
				// at the cited HBM bandwidth.
				d := m.Step(StepShape{DecodeSeqs: 1})
				require.InEpsilon(t, llm.Params*p.prec.Bytes()/c.hbmBW, d, 1e-6, "%s decode", p.prec)
				require.GreaterOrEqual(t, d, m.RooflineBound(g, StepShape{DecodeSeqs: 1}))
			}
			// An FP8 KV cache always loads; without FP8 tensor cores its
			// attention runs at the BF16 peak.
			m, err := NewStepModel(g, llm, 1, BF16, FP8, pp)
			require.NoError(t, err)
			want := c.fp8
			if c.fp8KVReadsAsBF16 {
				want = c.bf16
			}
			require.Equal(t, want, m.attnFLOPS)
			require.False(t, math.IsInf(m.Step(StepShape{PrefillTokens: 4096, PrefillPairs: 4096 * 4096 / 2, PrefillSeqs: 1}), 0))
		})
	}
}

// The all-reduce on each fabric: NVLS (one crossing each way) on
// NVSwitch, 2(tp−1)/tp of the data over a ring on PCIe, and over tp−1 of
// the 7 Infinity Fabric links on AMD's 8-GPU mesh.
func TestAllReduceFabrics(t *testing.T) {
	cat := NewCatalog()
	llm := cat.LLMs["llama-3-70b"]
	pp := idealProfile()
	perToken := func(g GPU, tp int) float64 {
		m, err := NewStepModel(g, llm, tp, BF16, BF16, pp)
		require.NoError(t, err)
		return m.commPerTokenS
	}
	nvls := func(g GPU) float64 {
		return 2 * float64(llm.Layers) * float64(llm.Hidden) * 2 / (g.NVLinkBytesPerS / 2)
	}
	for _, tp := range []int{2, 4, 8} {
		h := cat.GPUs["H100"]
		require.InEpsilon(t, nvls(h), perToken(h, tp), 1e-12)
		l := cat.GPUs["L40S"]
		require.InEpsilon(t, nvls(l)*2*float64(tp-1)/float64(tp), perToken(l, tp), 1e-12)
		a := cat.GPUs["MI300X"]
		require.InEpsilon(t, nvls(a)*2*7/float64(tp), perToken(a, tp), 1e-12)
	}
	require.Equal(t, 1.0, cat.GPUs["H100"].AllReduceFactor(8))
	require.Equal(t, 1.0, cat.GPUs["MI300X"].AllReduceFactor(1))
}

// A scenario's own GPU may leave out FP8 (0: none) but not name an
// unknown vendor or fabric.
func TestGPUValidateVendorFabric(t *testing.T) {
	g := NewCatalog().GPUs["A100-80GB"]
	var ps config.Problems
	g.Validate("gpus.0", &ps)
	require.Empty(t, ps.List)
	g.Vendor, g.Fabric = "intel", "torus"
	g.Validate("gpus.0", &ps)
	require.Len(t, ps.List, 2)
	require.True(t, strings.Contains(ps.List[0].Key, "vendor") && strings.Contains(ps.List[1].Key, "fabric"), "%v", ps.List)
}
