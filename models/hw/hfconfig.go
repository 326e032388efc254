package hw

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/fleetsim/fleetsim/internal/infile"
)

// Hugging Face config.json import ([[models]] config = "config.json",
// `fleetsim models show`). A config gives a model's shapes, not its
// parameter count: params are derived from the shapes, tensor by tensor,
// as the model's modeling code in Hugging Face transformers lays them out
// (embeddings, attention, FFN or experts and router, norms, LM head unless
// tied; Llama 4's vision encoder, which its model card counts). What the
// config states twice (head_dim against hidden_size/heads, layer_types'
// length, the expert counts) is checked against itself.

// HFFamilies are the model_type values ImportHFConfig reads, each with the
// architectures class that names it.
var HFFamilies = map[string]string{
	"llama":       "LlamaForCausalLM",
	"mistral":     "MistralForCausalLM",
	"qwen2":       "Qwen2ForCausalLM",
	"qwen3":       "Qwen3ForCausalLM",
	"mixtral":     "MixtralForCausalLM",
	"qwen2_moe":   "Qwen2MoeForCausalLM",
	"qwen3_moe":   "Qwen3MoeForCausalLM",
	"deepseek_v2": "DeepseekV2ForCausalLM",
	"deepseek_v3": "DeepseekV3ForCausalLM",
	"kimi_k2":     "DeepseekV3ForCausalLM",
	"gpt_oss":     "GptOssForCausalLM",
	"llama4":      "Llama4ForConditionalGeneration",
	"llama4_text": "Llama4ForCausalLM",
	"minimax_m2":  "MiniMaxM2ForCausalLM",
}

// HFImport is a model read from a config.json.
type HFImport struct {
	// LLM is the model; its Name is empty (the scenario names it).
	LLM LLM
	// ModelType is the config's model_type (or the one its architectures
	// class stands for).
	ModelType string
	// Parts are the derived parameters by part, for `models show`.
	Parts []HFPart
	// Notes say what the import assumed or left out.
	Notes []string
}

// HFPart is one part of the derived parameter count.
type HFPart struct {
	Name   string
	Params float64
}

// ReadHFConfig reads and imports the config.json at path (infile: at most
// infile.ModelConfig.Max bytes).
func ReadHFConfig(path string) (*HFImport, error) {
	data, err := infile.ReadFile(nil, path, infile.ModelConfig)
	if err != nil {
		return nil, err
	}
	return ParseHFConfig(path, data)
}

// hfError is a problem with one key of a config: FILE:LINE: KEY: MSG (no
// LINE when the key is absent).
type hfError struct {
	file, key, msg string
	line           int
}

func (e *hfError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.file, e.line, e.key, e.msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.file, e.key, e.msg)
}

// hfReader reads typed keys of one JSON object, reporting the first
// problem.
type hfReader struct {
	file   string
	data   []byte
	obj    map[string]any
	prefix string // "text_config." for a nested object
	err    error
}

func (r *hfReader) fail(key, format string, args ...any) {
	if r.err == nil {
		full := r.prefix + key
		r.err = &hfError{file: r.file, key: full, msg: fmt.Sprintf(format, args...), line: jsonKeyLine(r.data, full)}
	}
}

func (r *hfReader) has(key string) bool {
	v, ok := r.obj[key]
	return ok && v != nil
}

// num reads key as a finite number; ok=false when absent or null.
func (r *hfReader) num(key string) (float64, bool) {
	v, ok := r.obj[key]
	if !ok || v == nil {
		return 0, false
	}
	n, isNum := v.(json.Number)
	if !isNum {
		r.fail(key, "must be a number, found %s", jsonKind(v))
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		r.fail(key, "must be a finite number, found %s", n)
		return 0, false
	}
	return f, true
}

// count reads key as a whole number in [0, 1<<40]; def when absent.
func (r *hfReader) count(key string, def int) int {
	f, ok := r.num(key)
	if !ok {
		return def
	}
	if f != math.Trunc(f) || f < 0 || f > 1<<40 {
		r.fail(key, "must be a whole number >= 0, found %v", f)
		return def
	}
	return int(f)
}

// need reads key as a whole number > 0, refusing its absence.
func (r *hfReader) need(key, why string) int {
	if !r.has(key) {
		r.fail(key, "missing: %s", why)
		return 0
	}
	n := r.count(key, 0)
	if n <= 0 && r.err == nil {
		r.fail(key, "must be > 0, found %d", n)
	}
	return n
}

func (r *hfReader) boolean(key string, def bool) bool {
	v, ok := r.obj[key]
	if !ok || v == nil {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		r.fail(key, "must be true or false, found %s", jsonKind(v))
		return def
	}
	return b
}

func (r *hfReader) str(key string) string {
	v, ok := r.obj[key]
	if !ok || v == nil {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		r.fail(key, "must be a string, found %s", jsonKind(v))
	}
	return s
}

func (r *hfReader) list(key string) ([]any, bool) {
	v, ok := r.obj[key]
	if !ok || v == nil {
		return nil, false
	}
	l, isList := v.([]any)
	if !isList {
		r.fail(key, "must be a list, found %s", jsonKind(v))
		return nil, false
	}
	return l, true
}

// ints reads key as a list of whole numbers.
func (r *hfReader) ints(key string) ([]int, bool) {
	l, ok := r.list(key)
	if !ok {
		return nil, false
	}
	out := make([]int, len(l))
	for i, v := range l {
		n, isNum := v.(json.Number)
		f, err := n.Float64()
		if !isNum || err != nil || f != math.Trunc(f) || f < 0 || f > 1<<40 {
			r.fail(key, "element %d must be a whole number >= 0", i)
			return nil, false
		}
		out[i] = int(f)
	}
	return out, true
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case json.Number:
		return "a number"
	}
	return "null"
}

// jsonKeyLine is the line of key (a dotted path) in data, found by
// looking for each part as a quoted key after the one before: cheap, and
// right for the configs people write (0 when not found).
func jsonKeyLine(data []byte, key string) int {
	at := 0
	for _, part := range strings.Split(key, ".") {
		i := bytes.Index(data[at:], []byte(`"`+part+`"`))
		if i < 0 {
			return 0
		}
		at += i + 1
	}
	return 1 + bytes.Count(data[:at], []byte("\n"))
}

// maxHFLayers bounds num_hidden_layers (the largest released models have
// a few hundred).
const maxHFLayers = 100_000

// ParseHFConfig imports a Hugging Face config.json; file is used in
// messages. An unknown model_type, a missing shape or a shape that
// contradicts another is refused with FILE[:LINE] and the key.
func ParseHFConfig(file string, data []byte) (*HFImport, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		if se, ok := err.(*json.SyntaxError); ok {
			return nil, fmt.Errorf("%s:%d: not JSON: %v", file, 1+bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n")), err)
		}
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			return nil, fmt.Errorf("%s: not a JSON object: %v", file, err)
		}
		return nil, fmt.Errorf("%s: not JSON: %v", file, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value", file)
	}
	top := &hfReader{file: file, data: data, obj: obj}
	mt := top.str("model_type")
	arch := ""
	if l, ok := top.list("architectures"); ok && len(l) > 0 {
		arch, _ = l[0].(string)
	}
	if top.err != nil {
		return nil, top.err
	}
	if _, ok := HFFamilies[mt]; !ok {
		known := false
		for t, a := range HFFamilies {
			if a == arch && arch != "" && (mt == "" || t != "kimi_k2") {
				mt, known = t, true
				break
			}
		}
		if !known {
			key := "model_type"
			if mt == "" && arch == "" {
				return nil, &hfError{file: file, key: key, msg: "missing (and no architectures): cannot tell the architecture"}
			}
			return nil, &hfError{file: file, key: key, line: jsonKeyLine(data, key),
				msg: fmt.Sprintf("unknown architecture (model_type %q, architectures %q); fleetsim reads model_type %s, or write the [[models]] table by hand (docs/reference.md)", mt, arch, strings.Join(sortedKeys(HFFamilies), ", "))}
		}
	}
	imp := &HFImport{ModelType: mt}
	r := top
	if mt == "llama4" {
		tc, ok := obj["text_config"].(map[string]any)
		if !ok {
			return nil, &hfError{file: file, key: "text_config", msg: "missing: a llama4 config gives its language model under text_config"}
		}
		r = &hfReader{file: file, data: data, obj: tc, prefix: "text_config."}
	}
	imp.read(r)
	if r.err == nil && mt == "llama4" {
		if vc, ok := obj["vision_config"].(map[string]any); ok {
			imp.vision(&hfReader{file: file, data: data, obj: vc, prefix: "vision_config."}, imp.LLM.Hidden)
		} else {
			imp.Notes = append(imp.Notes, "no vision_config: the vision encoder is not counted")
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	for _, p := range imp.Parts {
		imp.LLM.Params += p.Params
	}
	return imp, nil
}

// read fills imp from the language model's object.
func (imp *HFImport) read(r *hfReader) {
	mt := imp.ModelType
	m := &imp.LLM
	m.Hidden = r.need("hidden_size", "the model dimension")
	m.Layers = r.need("num_hidden_layers", "the number of layers")
	m.Heads = r.need("num_attention_heads", "the number of attention heads")
	m.Vocab = r.need("vocab_size", "the vocabulary size")
	m.KVHeads = r.count("num_key_value_heads", m.Heads) // absent: multi-head attention
	m.ContextTokens = r.count("max_position_embeddings", 0)
	if r.err != nil {
		return
	}
	if m.Layers > maxHFLayers {
		r.fail("num_hidden_layers", "at most %d, found %d", maxHFLayers, m.Layers)
		return
	}
	if m.KVHeads == 0 || m.Heads%m.KVHeads != 0 {
		r.fail("num_key_value_heads", "must divide num_attention_heads (%d), found %d", m.Heads, m.KVHeads)
		return
	}
	m.HeadDim = r.count("head_dim", 0)
	if m.HeadDim == 0 {
		if m.Hidden%m.Heads != 0 {
			r.fail("head_dim", "missing, and hidden_size %d is not a multiple of num_attention_heads %d", m.Hidden, m.Heads)
			return
		}
		m.HeadDim = m.Hidden / m.Heads
	}
	h, L := float64(m.Hidden), m.Layers
	moe := mt == "mixtral" || mt == "qwen2_moe" || mt == "qwen3_moe" || mt == "deepseek_v2" || mt == "deepseek_v3" ||
		mt == "kimi_k2" || mt == "gpt_oss" || mt == "llama4" || mt == "llama4_text" || mt == "minimax_m2"
	mla := mt == "deepseek_v2" || mt == "deepseek_v3" || mt == "kimi_k2"

	// Attention.
	var attn float64
	if mla {
		m.KVLoraRank = r.need("kv_lora_rank", "multi-head latent attention's compressed KV width")
		m.QKRopeHeadDim = r.need("qk_rope_head_dim", "the rotary part of a query–key head")
		nope := r.need("qk_nope_head_dim", "the non-rotary part of a query–key head")
		v := r.need("v_head_dim", "the value head width")
		qr := r.count("q_lora_rank", 0)
		if r.err != nil {
			return
		}
		// As the built-ins take MLA: query–key width nope + rope, every
		// head its own KV in prefill; the cache holds the latent.
		m.HeadDim, m.KVHeads = nope+m.QKRopeHeadDim, m.Heads
		nh, qk := float64(m.Heads), float64(nope+m.QKRopeHeadDim)
		if qr > 0 {
			attn += h*float64(qr) + float64(qr) + float64(qr)*nh*qk
		} else {
			attn += h * nh * qk
		}
		attn += h*float64(m.KVLoraRank+m.QKRopeHeadDim) + float64(m.KVLoraRank) +
			float64(m.KVLoraRank)*nh*float64(nope+v) + nh*float64(v)*h
	} else {
		q, kv := float64(m.Heads*m.HeadDim), float64(m.KVHeads*m.HeadDim)
		attn = h*q + 2*h*kv + q*h
		switch {
		case mt == "qwen2" || mt == "qwen2_moe":
			attn += q + 2*kv // q, k and v biases
		case r.boolean("attention_bias", false):
			attn += q + 2*kv + h
		}
		if mt == "qwen3" || mt == "qwen3_moe" {
			attn += 2 * float64(m.HeadDim) // q_norm, k_norm
		}
		if mt == "gpt_oss" {
			attn += float64(m.Heads) // attention sinks
		}
	}
	if r.err != nil {
		return
	}

	// Which layers have experts, and their shapes.
	isMoE := make([]bool, L)
	var expert, shared float64 // one routed expert's FFN size; shared experts' total FFN size
	if moe {
		switch mt {
		case "mixtral", "gpt_oss", "minimax_m2":
			m.Experts = r.need("num_local_experts", "the routed experts per layer")
			if mt == "gpt_oss" && !r.has("num_experts_per_tok") {
				m.ExpertsPerToken = r.need("experts_per_token", "the router's top-k")
			} else {
				m.ExpertsPerToken = r.need("num_experts_per_tok", "the router's top-k")
			}
			m.ExpertIntermediate = r.need("intermediate_size", "each expert's FFN size")
			for i := range isMoE {
				isMoE[i] = true
			}
		case "qwen2_moe", "qwen3_moe":
			m.Experts = r.need("num_experts", "the routed experts per layer")
			m.ExpertsPerToken = r.need("num_experts_per_tok", "the router's top-k")
			m.ExpertIntermediate = r.need("moe_intermediate_size", "each expert's FFN size")
			step := r.count("decoder_sparse_step", 1)
			dense, _ := r.ints("mlp_only_layers")
			if s := r.count("shared_expert_intermediate_size", 0); s > 0 {
				m.SharedExperts, shared = 1, float64(s)
			}
			for i := range isMoE {
				isMoE[i] = step > 0 && (i+1)%step == 0
			}
			for _, i := range dense {
				if i >= L {
					r.fail("mlp_only_layers", "layer %d is past num_hidden_layers (%d)", i, L)
					return
				}
				isMoE[i] = false
			}
		case "deepseek_v2", "deepseek_v3", "kimi_k2":
			m.Experts = r.need("n_routed_experts", "the routed experts per layer")
			m.ExpertsPerToken = r.need("num_experts_per_tok", "the router's top-k")
			m.ExpertIntermediate = r.need("moe_intermediate_size", "each expert's FFN size")
			m.SharedExperts = r.count("n_shared_experts", 0)
			shared = float64(m.SharedExperts * m.ExpertIntermediate)
			first := r.count("first_k_dense_replace", 0)
			freq := r.count("moe_layer_freq", 1)
			if first >= L {
				r.fail("first_k_dense_replace", "must be below num_hidden_layers (%d), found %d", L, first)
				return
			}
			for i := range isMoE {
				isMoE[i] = i >= first && freq > 0 && i%freq == 0
			}
		case "llama4", "llama4_text":
			m.Experts = r.need("num_local_experts", "the routed experts per layer")
			m.ExpertsPerToken = r.need("num_experts_per_tok", "the router's top-k")
			m.ExpertIntermediate = r.need("intermediate_size", "each expert's FFN size")
			m.SharedExperts, shared = 1, float64(m.ExpertIntermediate)
			if ls, ok := r.ints("moe_layers"); ok && len(ls) > 0 {
				for _, i := range ls {
					if i >= L {
						r.fail("moe_layers", "layer %d is past num_hidden_layers (%d)", i, L)
						return
					}
					isMoE[i] = true
				}
			} else {
				step := r.count("interleave_moe_layer_step", 1)
				for i := range isMoE {
					isMoE[i] = step > 0 && (i+1)%step == 0
				}
			}
		}
		if r.err != nil {
			return
		}
		if m.ExpertsPerToken > m.Experts {
			r.fail("num_experts_per_tok", "must be at most the %d experts, found %d", m.Experts, m.ExpertsPerToken)
			return
		}
		expert = float64(m.ExpertIntermediate)
	}
	nMoE := 0
	for _, b := range isMoE {
		if b {
			nMoE++
		}
	}
	if moe && nMoE == 0 {
		r.fail("num_hidden_layers", "no layer has experts under this config's layer pattern")
		return
	}
	if nMoE > 0 {
		m.DenseLayers = L - nMoE
	} else {
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate, m.SharedExperts = 0, 0, 0, 0
	}
	// The dense FFN size (Llama 4 names it intermediate_size_mlp).
	switch {
	case mt == "llama4" || mt == "llama4_text":
		m.Intermediate = r.need("intermediate_size_mlp", "the dense layers' FFN size")
	case mt == "mixtral" || mt == "gpt_oss" || mt == "minimax_m2":
		m.Intermediate = m.ExpertIntermediate
	case L-nMoE > 0:
		m.Intermediate = r.need("intermediate_size", "the FFN size")
	default:
		m.Intermediate = r.count("intermediate_size", 0)
		if m.Intermediate == 0 {
			m.Intermediate = m.ExpertIntermediate
		}
	}
	if r.err != nil {
		return
	}

	// Windows: layer_types where given, else each family's keys.
	switch lt, ok := r.list("layer_types"); {
	case ok:
		if len(lt) != L {
			r.fail("layer_types", "has %d entries for num_hidden_layers %d", len(lt), L)
			return
		}
		n := 0
		for i, v := range lt {
			switch v {
			case "sliding_attention", "chunked_attention":
				n++
			case "full_attention":
			default:
				r.fail("layer_types", "entry %d: unknown layer type %v (fleetsim reads full_attention, sliding_attention, chunked_attention)", i, v)
				return
			}
		}
		if n > 0 {
			m.SlidingLayers, m.SlidingWindow = n, r.count("sliding_window", 0)
			if m.SlidingWindow == 0 {
				m.SlidingWindow = r.count("attention_chunk_size", 0)
			}
			if m.SlidingWindow == 0 {
				r.fail("sliding_window", "missing: layer_types has %d windowed layers", n)
				return
			}
		}
	case mt == "mistral" || mt == "mixtral":
		if w := r.count("sliding_window", 0); w > 0 {
			m.SlidingWindow, m.SlidingLayers = w, L
		}
	case mt == "qwen2" || mt == "qwen3" || mt == "qwen2_moe" || mt == "qwen3_moe":
		if r.boolean("use_sliding_window", false) {
			w := r.need("sliding_window", "use_sliding_window is true")
			from := r.count("max_window_layers", 0)
			if n := L - min(from, L); n > 0 && w > 0 {
				m.SlidingWindow, m.SlidingLayers = w, n
			}
		}
	case mt == "llama4" || mt == "llama4_text":
		if c := r.count("attention_chunk_size", 0); c > 0 {
			// Chunked attention on the RoPE layers; every
			// nope_layer_interval-th (default 4) attends globally.
			n := 0
			if nr, ok := r.ints("no_rope_layers"); ok && len(nr) > 0 {
				if len(nr) != L {
					r.fail("no_rope_layers", "has %d entries for num_hidden_layers %d", len(nr), L)
					return
				}
				for _, v := range nr {
					if v != 0 {
						n++
					}
				}
			} else {
				every := r.count("nope_layer_interval", 4)
				for i := 0; i < L; i++ {
					if every <= 0 || (i+1)%every != 0 {
						n++
					}
				}
			}
			if n > 0 {
				m.SlidingWindow, m.SlidingLayers = c, n
				imp.Notes = append(imp.Notes, fmt.Sprintf("chunked attention (%d-token chunks) on %d layers is taken as a window of that size", c, n))
			}
		}
	}
	if r.err != nil {
		return
	}

	// Parameters.
	tied := r.boolean("tie_word_embeddings", false)
	emb := float64(m.Vocab) * h
	imp.Parts = append(imp.Parts, HFPart{"embeddings", emb})
	if !tied {
		imp.Parts = append(imp.Parts, HFPart{"lm_head", emb})
	}
	imp.Parts = append(imp.Parts, HFPart{"attention", float64(L) * attn})
	imp.Parts = append(imp.Parts, HFPart{"norms", float64(2*L+1) * h})
	if d := L - nMoE; d > 0 {
		imp.Parts = append(imp.Parts, HFPart{"dense FFN", float64(d) * 3 * h * float64(m.Intermediate)})
	}
	if nMoE > 0 {
		e := float64(m.Experts)
		routed := e * 3 * h * expert
		if mt == "gpt_oss" {
			routed += e * (2*expert + h) // expert biases
		}
		imp.Parts = append(imp.Parts, HFPart{"routed experts", float64(nMoE) * routed})
		if shared > 0 {
			imp.Parts = append(imp.Parts, HFPart{"shared experts", float64(nMoE) * 3 * h * shared})
		}
		router := e * h
		if mt == "gpt_oss" || mt == "deepseek_v3" || mt == "kimi_k2" || mt == "minimax_m2" {
			router += e // bias / score correction
		}
		if mt == "qwen2_moe" && shared > 0 {
			router += h // the shared expert's gate
		}
		imp.Parts = append(imp.Parts, HFPart{"routers", float64(nMoE) * router})
	}
	if m.ContextTokens == 0 {
		imp.Notes = append(imp.Notes, "no max_position_embeddings: no context limit is known")
	}
	if mla {
		imp.Notes = append(imp.Notes, "multi-head latent attention: KV per token and layer is kv_lora_rank + qk_rope_head_dim; head_dim is qk_nope_head_dim + qk_rope_head_dim, kv_heads the heads")
	}
	if tied {
		imp.Notes = append(imp.Notes, "tie_word_embeddings: the LM head shares the embeddings")
	}
	if r.has("num_nextn_predict_layers") || r.has("num_mtp_modules") {
		imp.Notes = append(imp.Notes, "multi-token-prediction layers are not counted (the model cards leave them out)")
	}
}

// vision counts a Llama 4 vision encoder (a ViT with biases, its pixel-
// shuffle adapter and the projector into the language model): loaded
// with the model, never run on text.
func (imp *HFImport) vision(r *hfReader, textHidden int) {
	h := float64(r.need("hidden_size", "the vision encoder's width"))
	L := float64(r.need("num_hidden_layers", "the vision encoder's layers"))
	inter := float64(r.need("intermediate_size", "the vision encoder's FFN size"))
	patch := float64(r.count("patch_size", 14))
	img := float64(r.count("image_size", 336))
	ch := float64(r.count("num_channels", 3))
	pin := float64(r.count("projector_input_dim", 0))
	pout := float64(r.count("projector_output_dim", 0))
	vout := float64(r.count("vision_output_dim", 0))
	if r.err != nil {
		return
	}
	grid := img / patch
	p := ch*patch*patch*h + h + (grid*grid+1)*h + 4*h // patch embedding, class token, positions, pre/post norms
	p += L * (4*(h*h+h) + 2*h*inter + inter + h + 4*h)
	p += inter*pin + pout*pout // pixel-shuffle MLP
	p += vout * float64(textHidden)
	imp.Parts = append(imp.Parts, HFPart{"vision encoder", p})
	imp.Notes = append(imp.Notes, "the vision encoder is counted in params (loaded, as the model card counts it) though text requests never run it")
}

// builtinConfigs are the config.json files of the built-in models,
// written from their public model cards (configs/README.md).
//
//go:embed configs/*.json
var builtinConfigs embed.FS

// BuiltinConfig is the shipped config.json of built-in model name (an
// alias reads its model's), false when none is shipped.
func BuiltinConfig(name string) ([]byte, bool) {
	if a, ok := llmAliases[name]; ok {
		name = a
	}
	b, err := builtinConfigs.ReadFile("configs/" + name + ".json")
	return b, err == nil
}

// WithOverrides is imp's model named name, with each key of the [[models]]
// table that set reports as given (a toml key of LLM: "params",
// "context_tokens") taken from table instead.
func (imp *HFImport) WithOverrides(name string, table LLM, set func(key string) bool) LLM {
	out := imp.LLM
	out.Name, out.Config = name, table.Config
	overrideFields(reflect.ValueOf(&out).Elem(), reflect.ValueOf(table), set)
	return out
}

func overrideFields(dst, src reflect.Value, set func(string) bool) {
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			overrideFields(dst.Field(i), src.Field(i), set)
			continue
		}
		key := strings.Split(f.Tag.Get("toml"), ",")[0]
		if key == "" || key == "name" || key == "config" || !set(key) {
			continue
		}
		dst.Field(i).Set(src.Field(i))
	}
}
