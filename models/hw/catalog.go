package hw

import (
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
)

// GPU describes one accelerator. Figures are dense (non-sparse) peaks.
type GPU struct {
	Name string `toml:"name"`
	// HBMBytes is the device memory capacity in bytes.
	HBMBytes float64 `toml:"hbm_bytes"`
	// HBMBytesPerS is the peak HBM bandwidth in bytes/s.
	HBMBytesPerS float64 `toml:"hbm_bytes_per_s"`
	// BF16FLOPS and FP8FLOPS are dense peak tensor throughput in FLOP/s.
	BF16FLOPS float64 `toml:"bf16_flops"`
	FP8FLOPS  float64 `toml:"fp8_flops"`
	// FP4FLOPS is the dense FP4 peak in FLOP/s; 0 where the GPU has no FP4
	// tensor cores (before Blackwell).
	FP4FLOPS float64 `toml:"fp4_flops"`
	// NVLinkBytesPerS is the total (bidirectional) NVLink bandwidth per GPU
	// in bytes/s; one direction is half of it.
	NVLinkBytesPerS float64 `toml:"nvlink_bytes_per_s"`
	// NICBytesPerS is the scale-out (RDMA) NIC bandwidth per GPU in one
	// direction, bytes/s: what an expert-parallel all-to-all across NVLink
	// domains, and KV moving between servers in disaggregated serving, run
	// over. 0: unknown / no RDMA NIC (such layouts are refused).
	NICBytesPerS float64 `toml:"nic_bytes_per_s"`
	// TDPWatts is the board power in watts.
	TDPWatts float64 `toml:"tdp_watts"`
	// DomainGPUs is the size of the NVLink domain the GPU ships in: 8 for an
	// HGX server, 72 for a GB200 NVL72 rack.
	DomainGPUs int `toml:"domain_gpus"`
	// PricePerGPUHour is the default on-demand price in USD per GPU-hour.
	PricePerGPUHour float64 `toml:"price_per_gpu_hour"`
	// ReservedPricePerGPUHour is the reserved (committed-use) price in USD
	// per GPU-hour.
	ReservedPricePerGPUHour float64 `toml:"reserved_price_per_gpu_hour"`
	// Vendor is "nvidia" (also when empty) or "amd": the engine profiles
	// were all fitted on NVIDIA GPUs, so a replica on another vendor's is
	// warned about whatever profile it runs.
	Vendor string `toml:"vendor"`
	// Fabric is how the GPUs of a domain are joined, which sets what a
	// tensor-parallel all-reduce costs (perf.go): "nvswitch" (also when
	// empty: NVLink through NVSwitch, with NVLS in-switch reduction),
	// "mesh" (point-to-point links to each of the domain's other GPUs, AMD
	// Infinity Fabric: nvlink_bytes_per_s is then all the links together)
	// or "pcie" (no GPU-to-GPU links: a ring over each GPU's PCIe link,
	// nvlink_bytes_per_s being that link's bidirectional bandwidth).
	Fabric string `toml:"fabric"`
}

// Fabrics are the values of GPU.Fabric.
var Fabrics = []string{FabricNVSwitch, FabricMesh, FabricPCIe}

// The fabrics.
const (
	FabricNVSwitch = "nvswitch"
	FabricMesh     = "mesh"
	FabricPCIe     = "pcie"
)

// Vendors are the values of GPU.Vendor.
var Vendors = []string{VendorNVIDIA, VendorAMD}

// The vendors.
const (
	VendorNVIDIA = "nvidia"
	VendorAMD    = "amd"
)

// IsNVIDIA reports whether the GPU is NVIDIA's (Vendor "" or "nvidia").
func (g GPU) IsNVIDIA() bool { return g.Vendor == "" || g.Vendor == VendorNVIDIA }

// AllReduceFactor is the time of a tensor-parallel all-reduce over tp GPUs
// of g's domain relative to NVLS on an NVSwitch domain, where a GPU's
// activations cross its links once each way (perf.go). A ring (or the
// direct all-reduce RCCL runs on a full mesh) moves 2(tp−1)/tp of them
// through each GPU; on a mesh a GPU reaches its tp−1 peers over tp−1 of its
// domain−1 links, so only that share of nvlink_bytes_per_s carries them:
// 2(domain−1)/tp. Over PCIe the one link carries it all: 2(tp−1)/tp.
func (g GPU) AllReduceFactor(tp int) float64 {
	if tp <= 1 {
		return 1
	}
	t := float64(tp)
	switch g.Fabric {
	case FabricMesh:
		d := float64(max(g.DomainGPUs, tp))
		return 2 * (d - 1) / t
	case FabricPCIe:
		return 2 * (t - 1) / t
	}
	return 1
}

// Built-in GPUs. CALIBRATION.md §3 (hardware table, S; dense = half of
// NVIDIA's sparse figures). NICs: one 400 Gb/s ConnectX-7 per GPU = 50e9
// bytes/s each way (NVIDIA DGX H100/H200 and DGX B200 datasheets: "8x
// single-port ConnectX-7 VPI, 400 Gb/s"; GB200 NVL72 compute trays: one
// 400 Gb/s ConnectX-7 per GPU; no CALIBRATION.md row yet). Prices: CALIBRATION.md §3 "Price per GPU-hour"
// (S, 2026): on-demand at the top of each quoted range, reserved at its
// bottom (H100 $2.89–6.50, H200 $2.50–7.00); B200 and GB200 have no row and
// are assumptions scaled from H100. NIC: one 400 Gb/s ConnectX-7 (50 GB/s
// each way) per GPU, as in NVIDIA's DGX H100/H200/B200 and GB200 NVL72
// compute-tray reference designs (assumption for cloud instances, which
// match it on the main ones: 3.2 Tb/s per 8 GPUs).
var builtinGPUs = []GPU{
	// H100 SXM: 80 GB, 3.35 TB/s, 989 TF BF16, 1,979 TF FP8, 900 GB/s, 700 W.
	// Price: $6.50, the seed's figure and the top of the $2.89–6.50 range.
	{Name: "H100", HBMBytes: 80e9, HBMBytesPerS: 3.35e12, BF16FLOPS: 989e12, FP8FLOPS: 1979e12,
		NVLinkBytesPerS: 900e9, NICBytesPerS: 50e9, TDPWatts: 700, DomainGPUs: 8, PricePerGPUHour: 6.50, ReservedPricePerGPUHour: 2.89},
	// H200 SXM: 141 GB, 4.8 TB/s. Price: $7.00, top of the $2.50–7.00 range
	// (assumption: same tier choice as H100).
	{Name: "H200", HBMBytes: 141e9, HBMBytesPerS: 4.8e12, BF16FLOPS: 989e12, FP8FLOPS: 1979e12,
		NVLinkBytesPerS: 900e9, NICBytesPerS: 50e9, TDPWatts: 700, DomainGPUs: 8, PricePerGPUHour: 7.00, ReservedPricePerGPUHour: 2.50},
	// B200: 180 GB, 7.7 TB/s, 2,250 / 4,500 TF, 1.8 TB/s, 1,000 W. FP4 dense
	// 9,000 TF (assumption: twice FP8, as NVIDIA's Blackwell datasheets give
	// 18 PF sparse FP4 per B200).
	// Price: assumption, $9.00 (no CALIBRATION.md row; ~1.4x H100).
	{Name: "B200", HBMBytes: 180e9, HBMBytesPerS: 7.7e12, BF16FLOPS: 2250e12, FP8FLOPS: 4500e12, FP4FLOPS: 9000e12,
		NVLinkBytesPerS: 1.8e12, NICBytesPerS: 50e9, TDPWatts: 1000, DomainGPUs: 8, PricePerGPUHour: 9.00, ReservedPricePerGPUHour: 4.00},
	// GB200 per GPU in an NVL72 rack: 186 GB, 8 TB/s, 2,500 / 5,000 TF,
	// 1.8 TB/s, 1,200 W. FP4 dense 10,000 TF (assumption: twice FP8).
	// Price: assumption, $10.50 (no CALIBRATION.md row).
	{Name: "GB200", HBMBytes: 186e9, HBMBytesPerS: 8e12, BF16FLOPS: 2500e12, FP8FLOPS: 5000e12, FP4FLOPS: 10000e12,
		NVLinkBytesPerS: 1.8e12, NICBytesPerS: 50e9, TDPWatts: 1200, DomainGPUs: 72, PricePerGPUHour: 10.50, ReservedPricePerGPUHour: 4.67},
	// The rows from here to the AMD GPUs (A100, L40S, H20, B300, GB300,
	// MI300X, MI325X, MI355X) were entered in a session without access to
	// the datasheets they cite: the figures are as remembered and must be
	// checked against those documents before a study rests on them (the
	// GB300's HBM, the B300/GB300 power and the on-demand prices first).
	// Their tests check the step model against these rows, not the rows
	// against the datasheets.
	//
	// The rows below (issue 35) each cite the vendor's public datasheet;
	// FLOP/s are dense (half the sparse figure where only that is quoted).
	// Reserved prices are an assumption throughout: 45% of on-demand, the
	// ratio of the H100 row's $2.89 to its $6.50.
	//
	// A100 SXM4 40GB (NVIDIA A100 Tensor Core GPU datasheet, 2021): 40 GB
	// HBM2 at 1,555 GB/s; BF16 312 TF dense (624 sparse); no FP8 or FP4
	// tensor cores (FP8 weights run W8A16 and an FP8 KV cache is read as
	// BF16); NVLink 3 600 GB/s; 400 W; 8 per HGX A100 board. NIC: DGX A100
	// datasheet, 8x 200 Gb/s HDR ConnectX-6 = 25e9 B/s per GPU each way.
	// Price: AWS p4d.24xlarge on-demand (8x A100 40GB), $32.77/h / 8 =
	// $4.10 (aws.amazon.com/ec2/instance-types/p4, us-east-1 list price).
	{Name: "A100-40GB", HBMBytes: 40e9, HBMBytesPerS: 1.555e12, BF16FLOPS: 312e12,
		NVLinkBytesPerS: 600e9, NICBytesPerS: 25e9, TDPWatts: 400, DomainGPUs: 8, PricePerGPUHour: 4.10, ReservedPricePerGPUHour: 1.84},
	// A100 SXM4 80GB (same datasheet): 80 GB HBM2e at 2,039 GB/s, else as
	// the 40 GB. Price: AWS p4de.24xlarge on-demand (8x A100 80GB),
	// $40.97/h / 8 = $5.12.
	{Name: "A100-80GB", HBMBytes: 80e9, HBMBytesPerS: 2.039e12, BF16FLOPS: 312e12,
		NVLinkBytesPerS: 600e9, NICBytesPerS: 25e9, TDPWatts: 400, DomainGPUs: 8, PricePerGPUHour: 5.12, ReservedPricePerGPUHour: 2.30},
	// L40S (NVIDIA L40S datasheet, 2023): 48 GB GDDR6 at 864 GB/s; BF16
	// 362.05 TF dense (733 sparse), FP8 733 TF dense (1,466 sparse); no FP4;
	// no NVLink: PCIe Gen4 x16, 64 GB/s bidirectional, is what a TP
	// all-reduce runs over (fabric "pcie"); 350 W. Domain: 8 per server
	// (assumption: the common 8-GPU PCIe server, e.g. AWS g6e.48xlarge).
	// NIC: g6e.48xlarge's 400 Gb/s for 8 GPUs = 6.25e9 B/s per GPU. Price:
	// g6e.48xlarge on-demand $30.13/h / 8 = $3.77 (aws.amazon.com/ec2/instance-types/g6e).
	{Name: "L40S", HBMBytes: 48e9, HBMBytesPerS: 864e9, BF16FLOPS: 362.05e12, FP8FLOPS: 733e12,
		NVLinkBytesPerS: 64e9, NICBytesPerS: 6.25e9, TDPWatts: 350, DomainGPUs: 8, PricePerGPUHour: 3.77, ReservedPricePerGPUHour: 1.70,
		Fabric: FabricPCIe},
	// H20 (NVIDIA HGX H20 product brief, 2024): 96 GB HBM3 at 4.0 TB/s;
	// BF16 148 TF dense, FP8 296 TF dense; NVLink 900 GB/s; 400 W; 8 per HGX
	// board. NIC: as the H100's (assumption: the same HGX reference
	// design). Price: assumption, $2.00 (no public on-demand list price;
	// the card sells for roughly a third of an H100's).
	{Name: "H20", HBMBytes: 96e9, HBMBytesPerS: 4.0e12, BF16FLOPS: 148e12, FP8FLOPS: 296e12,
		NVLinkBytesPerS: 900e9, NICBytesPerS: 50e9, TDPWatts: 400, DomainGPUs: 8, PricePerGPUHour: 2.00, ReservedPricePerGPUHour: 0.90},
	// B300 in an HGX B300 board (NVIDIA HGX B300 datasheet, 2025: 8 GPUs,
	// 2.3 TB HBM3e, FP4 144 PF sparse / 108 PF dense, FP8 72 PF sparse,
	// BF16 36 PF sparse, NVLink 5 14.4 TB/s): per GPU 288 GB at 8 TB/s,
	// BF16 2,250 TF dense, FP8 4,500 TF dense, FP4 13,500 TF dense,
	// 1.8 TB/s NVLink; 1,100 W (assumption: NVIDIA's DGX B300 figure of
	// ~14 kW for 8 GPUs with the host, the GPU's board power as reported
	// by OEMs). NIC: one 800 Gb/s ConnectX-8 SuperNIC per GPU = 100e9 B/s.
	// Price: assumption, $11.00 (no list price; ~1.2x the B200 row).
	{Name: "B300", HBMBytes: 288e9, HBMBytesPerS: 8e12, BF16FLOPS: 2250e12, FP8FLOPS: 4500e12, FP4FLOPS: 13500e12,
		NVLinkBytesPerS: 1.8e12, NICBytesPerS: 100e9, TDPWatts: 1100, DomainGPUs: 8, PricePerGPUHour: 11.00, ReservedPricePerGPUHour: 4.95},
	// GB300 per GPU in an NVL72 rack (NVIDIA GB300 NVL72 datasheet, 2025:
	// 72 GPUs, up to 20 TB HBM3e at up to 576 TB/s, FP4 1,440 PF sparse /
	// 1,080 PF dense, FP8 720 PF sparse, BF16 360 PF sparse, NVLink 130
	// TB/s): 279 GB (20.1 TB / 72) at 8 TB/s, BF16 2,500 TF, FP8 5,000 TF,
	// FP4 15,000 TF dense; 1.8 TB/s NVLink; 1,400 W (assumption: the
	// per-GPU board power OEMs quote for GB300). NIC: ConnectX-8, 800 Gb/s
	// per GPU = 100e9 B/s. Price: assumption, $12.50 (~1.2x the GB200 row).
	{Name: "GB300", HBMBytes: 279e9, HBMBytesPerS: 8e12, BF16FLOPS: 2500e12, FP8FLOPS: 5000e12, FP4FLOPS: 15000e12,
		NVLinkBytesPerS: 1.8e12, NICBytesPerS: 100e9, TDPWatts: 1400, DomainGPUs: 72, PricePerGPUHour: 12.50, ReservedPricePerGPUHour: 5.63},
	// AMD Instinct MI300X (AMD Instinct MI300X data sheet, 2023): 192 GB
	// HBM3 at 5.3 TB/s; BF16 1,307.4 TF dense, FP8 2,614.9 TF dense; no
	// FP4; 7 Infinity Fabric links of 128 GB/s (bidirectional) each = 896
	// GB/s to the 7 other GPUs of an 8-GPU platform (fabric "mesh"); 750 W.
	// NIC: assumption, one 400 Gb/s NIC per GPU = 50e9 B/s (AMD Instinct
	// platform reference designs). Price: assumption, $6.00 (Azure ND
	// MI300X v5 is listed near $48/h for 8 GPUs; no committed source).
	{Name: "MI300X", HBMBytes: 192e9, HBMBytesPerS: 5.3e12, BF16FLOPS: 1307.4e12, FP8FLOPS: 2614.9e12,
		NVLinkBytesPerS: 896e9, NICBytesPerS: 50e9, TDPWatts: 750, DomainGPUs: 8, PricePerGPUHour: 6.00, ReservedPricePerGPUHour: 2.70,
		Vendor: VendorAMD, Fabric: FabricMesh},
	// AMD Instinct MI325X (AMD Instinct MI325X data sheet, 2024): 256 GB
	// HBM3E at 6.0 TB/s; BF16 1,307.4 TF, FP8 2,614.9 TF dense; no FP4;
	// Infinity Fabric as the MI300X's (896 GB/s, 8 GPUs); 1,000 W. NIC as
	// the MI300X's. Price: assumption, $7.00 (the H200 row's: same market).
	{Name: "MI325X", HBMBytes: 256e9, HBMBytesPerS: 6.0e12, BF16FLOPS: 1307.4e12, FP8FLOPS: 2614.9e12,
		NVLinkBytesPerS: 896e9, NICBytesPerS: 50e9, TDPWatts: 1000, DomainGPUs: 8, PricePerGPUHour: 7.00, ReservedPricePerGPUHour: 3.15,
		Vendor: VendorAMD, Fabric: FabricMesh},
	// AMD Instinct MI355X (AMD Instinct MI355X data sheet, 2025): 288 GB
	// HBM3E at 8.0 TB/s; BF16 2,516.6 TF dense, FP8 5,033.2 TF dense,
	// MXFP6 and MXFP4 10,066.3 TF dense (FP6 is not a precision fleetsim
	// models: FP6 weights are not offered); 7 Infinity Fabric links of
	// 153.6 GB/s = 1,075.2 GB/s, 8 GPUs; 1,400 W. NIC: assumption, one 400
	// Gb/s NIC per GPU. Price: assumption, $9.00 (the B200 row's).
	{Name: "MI355X", HBMBytes: 288e9, HBMBytesPerS: 8.0e12, BF16FLOPS: 2516.6e12, FP8FLOPS: 5033.2e12, FP4FLOPS: 10066.3e12,
		NVLinkBytesPerS: 1075.2e9, NICBytesPerS: 50e9, TDPWatts: 1400, DomainGPUs: 8, PricePerGPUHour: 9.00, ReservedPricePerGPUHour: 4.05,
		Vendor: VendorAMD, Fabric: FabricMesh},
}

// LLM describes a decoder-only transformer: dense, or mixture-of-experts
// when its MoE fields are set (moe.go).
type LLM struct {
	Name         string  `toml:"name"`
	Layers       int     `toml:"layers"`
	Hidden       int     `toml:"hidden"`
	Heads        int     `toml:"heads"`
	KVHeads      int     `toml:"kv_heads"`
	HeadDim      int     `toml:"head_dim"`
	Intermediate int     `toml:"intermediate"`
	Vocab        int     `toml:"vocab"`
	Params       float64 `toml:"params"` // total parameters
	// ContextTokens is the context window (prompt + output) in tokens; a
	// longer request is refused. 0 means no limit is known.
	ContextTokens int `toml:"context_tokens"`

	// Mixture-of-experts and attention-variant fields (moe.go); all zero
	// for a dense GQA model.
	MoE

	// Config, in a scenario's [[models]], is a Hugging Face config.json
	// (relative to the scenario file) the shapes are read from
	// (hfconfig.go); the table's other keys override what it gives.
	Config string `toml:"config"`
}

// Built-in models: Llama 3 (arXiv 2407.21783, Table 3: layers, model
// dimension, FFN dimension, attention heads, key/value heads, vocabulary;
// the 3.1 releases' 128K context window, §3.4.2 and the model cards'
// max_position_embeddings = 131072).
var builtinLLMs = []LLM{
	{Name: "llama-3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 128256, Params: 8.03e9, ContextTokens: 131072},
	{Name: "llama-3-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 128256, Params: 70.6e9, ContextTokens: 131072},
	{Name: "llama-3-405b", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128,
		Intermediate: 53248, Vocab: 128256, Params: 405.9e9, ContextTokens: 131072},
	// huggingface.co/Qwen/Qwen3-32B/blob/main/config.json: hidden_size
	// 5120, num_hidden_layers 64, num_attention_heads 64,
	// num_key_value_heads 8, head_dim 128, intermediate_size 25600,
	// vocab_size 151936, max_position_embeddings 40960, untied embeddings.
	// Model card: 32.8B parameters (the shapes give 32.76B).
	{Name: "qwen3-32b", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 25600, Vocab: 151936, Params: 32.8e9, ContextTokens: 40960},
	// huggingface.co/Qwen/Qwen2.5-72B-Instruct/blob/main/config.json:
	// hidden_size 8192, num_hidden_layers 80, num_attention_heads 64,
	// num_key_value_heads 8 (head_dim 128), intermediate_size 29568,
	// vocab_size 152064, max_position_embeddings 32768, q/k/v biases,
	// untied embeddings. Model card: 72.7B parameters.
	{Name: "qwen2.5-72b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 29568, Vocab: 152064, Params: 72.7e9, ContextTokens: 32768},
}

// llmAliases are other names of built-in models with the same architecture:
// the Llama 3.1 and 3.3 releases are Llama 3's shapes (the built-ins
// already have 3.1's 128K context); DeepSeek-R1 (and V3.1, R1-0528,
// V3-0324) is DeepSeek-V3's
// architecture; Kimi-K2.5's language model is Kimi-K2's.
var llmAliases = map[string]string{
	"llama-3.1-8b":   "llama-3-8b",
	"llama-3.1-70b":  "llama-3-70b",
	"llama-3.3-70b":  "llama-3-70b",
	"llama-3.1-405b": "llama-3-405b",
	"deepseek-r1":    "deepseek-v3",
	"deepseek-v3.1":  "deepseek-v3",
	// DeepSeek's later checkpoints of the same architecture and config.
	"deepseek-r1-0528": "deepseek-v3",
	"deepseek-v3-0324": "deepseek-v3",
	"kimi-k2.5":        "kimi-k2",
	"minimax-m2.5":     "minimax-m2",
}

// AliasOf is the built-in model alias name stands for, "" when it is no
// alias.
func AliasOf(name string) string { return llmAliases[name] }

// KVBytesPerToken is the KV-cache size of one token across the whole model:
// 2 (K and V) · layers · kv_heads · head_dim · bytesPerElem. CALIBRATION.md §3:
// Llama-3-8B 128 KiB, 70B 320 KiB, 405B 504 KiB in BF16.
func (m *LLM) KVBytesPerToken(bytesPerElem float64) float64 {
	if m.IsMLA() {
		return m.mlaKVBytesPerToken(bytesPerElem)
	}
	return 2 * float64(m.Layers) * float64(m.KVHeads) * float64(m.HeadDim) * bytesPerElem
}

// KVBytesPerTokenGPU is one GPU's share of a token's KV at tensor
// parallelism tp in the layers that attend the whole context (a windowed
// layer's KV is bounded per sequence: WindowKVBytesPerSeqGPU): its
// kv_heads/tp heads, but never less than one whole head (past tp =
// kv_heads each KV head is replicated, so capacity stops growing).
func (m *LLM) KVBytesPerTokenGPU(bytesPerElem float64, tp int) float64 {
	return m.kvBytesPerTokenGPUAll(bytesPerElem, tp) * (1 - m.LocalFraction())
}

// WindowKVBytesPerTokenGPU is one GPU's share of a token's KV in the
// windowed layers (0 without a window).
func (m *LLM) WindowKVBytesPerTokenGPU(bytesPerElem float64, tp int) float64 {
	return m.kvBytesPerTokenGPUAll(bytesPerElem, tp) * m.LocalFraction()
}

// WindowKVBytesPerSeqGPU is what one sequence holds at most in the
// windowed layers of one GPU: the window's tokens.
func (m *LLM) WindowKVBytesPerSeqGPU(bytesPerElem float64, tp int) float64 {
	return m.WindowKVBytesPerTokenGPU(bytesPerElem, tp) * float64(max(m.SlidingWindow, 0))
}

// kvBytesPerTokenGPUAll is a token's KV on one GPU over every layer.
func (m *LLM) kvBytesPerTokenGPUAll(bytesPerElem float64, tp int) float64 {
	if m.IsMLA() {
		// The latent KV is one vector per token and layer, replicated on
		// every GPU of the TP group (vLLM, SGLang).
		return m.mlaKVBytesPerToken(bytesPerElem)
	}
	heads := float64(m.KVHeads) / float64(tp)
	if heads < 1 {
		heads = 1
	}
	return 2 * float64(m.Layers) * heads * float64(m.HeadDim) * bytesPerElem
}

// Catalog holds the GPUs and models a scenario may name: the built-ins plus
// any the scenario adds or overrides.
type Catalog struct {
	GPUs map[string]GPU
	LLMs map[string]LLM
	// Profiles are the engine profiles, by built-in name or by the path a
	// scenario named.
	Profiles map[string]PerfProfile
}

// NewCatalog returns the built-in catalog.
func NewCatalog() *Catalog {
	c := &Catalog{GPUs: map[string]GPU{}, LLMs: map[string]LLM{}, Profiles: map[string]PerfProfile{}}
	for name, p := range builtinProfiles {
		c.Profiles[name] = p
	}
	for _, g := range builtinGPUs {
		c.GPUs[g.Name] = g
	}
	for _, m := range builtinLLMs {
		c.LLMs[m.Name] = m
	}
	for _, m := range builtinMoELLMs {
		c.LLMs[m.Name] = m
	}
	for alias, name := range llmAliases {
		m := c.LLMs[name]
		m.Name = alias
		c.LLMs[alias] = m
	}
	return c
}

// GPUNames lists the GPU names, sorted.
func (c *Catalog) GPUNames() []string { return sortedKeys(c.GPUs) }

// LLMNames lists the model names, sorted.
func (c *Catalog) LLMNames() []string { return sortedKeys(c.LLMs) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate checks a GPU definition, reporting under key prefix.
func (g *GPU) Validate(prefix string, ps *config.Problems) {
	if g.Name == "" {
		ps.Add(config.Key(prefix, "name"), "must not be empty")
	}
	ps.Positive(config.Key(prefix, "hbm_bytes"), g.HBMBytes)
	ps.Positive(config.Key(prefix, "hbm_bytes_per_s"), g.HBMBytesPerS)
	ps.Positive(config.Key(prefix, "bf16_flops"), g.BF16FLOPS)
	ps.NonNegative(config.Key(prefix, "fp8_flops"), g.FP8FLOPS) // 0: no FP8 tensor cores (A100)
	ps.NonNegative(config.Key(prefix, "fp4_flops"), g.FP4FLOPS)
	ps.Positive(config.Key(prefix, "nvlink_bytes_per_s"), g.NVLinkBytesPerS)
	ps.NonNegative(config.Key(prefix, "nic_bytes_per_s"), g.NICBytesPerS)
	ps.NonNegative(config.Key(prefix, "tdp_watts"), g.TDPWatts)
	ps.PositiveInt(config.Key(prefix, "domain_gpus"), g.DomainGPUs)
	ps.NonNegative(config.Key(prefix, "price_per_gpu_hour"), g.PricePerGPUHour)
	ps.NonNegative(config.Key(prefix, "reserved_price_per_gpu_hour"), g.ReservedPricePerGPUHour)
	if g.Vendor != "" {
		ps.OneOf(config.Key(prefix, "vendor"), g.Vendor, Vendors)
	}
	if g.Fabric != "" {
		ps.OneOf(config.Key(prefix, "fabric"), g.Fabric, Fabrics)
	}
}

// Validate checks a model definition, reporting under key prefix.
func (m *LLM) Validate(prefix string, ps *config.Problems) {
	if m.Name == "" {
		ps.Add(config.Key(prefix, "name"), "must not be empty")
	}
	ps.PositiveInt(config.Key(prefix, "layers"), m.Layers)
	ps.PositiveInt(config.Key(prefix, "hidden"), m.Hidden)
	ps.PositiveInt(config.Key(prefix, "heads"), m.Heads)
	ps.PositiveInt(config.Key(prefix, "kv_heads"), m.KVHeads)
	ps.PositiveInt(config.Key(prefix, "head_dim"), m.HeadDim)
	ps.PositiveInt(config.Key(prefix, "intermediate"), m.Intermediate)
	ps.PositiveInt(config.Key(prefix, "vocab"), m.Vocab)
	ps.Positive(config.Key(prefix, "params"), m.Params)
	if m.ContextTokens < 0 {
		ps.Add(config.Key(prefix, "context_tokens"), "must be >= 0 (0: no known limit), found %d", m.ContextTokens)
	}
	if m.KVHeads > 0 && m.Heads > 0 && m.Heads%m.KVHeads != 0 {
		ps.Add(config.Key(prefix, "kv_heads"), "must divide heads (%d), found %d", m.Heads, m.KVHeads)
	}
	m.validateMoE(prefix, ps)
}
