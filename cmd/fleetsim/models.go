package main

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/models/hw"
)

const modelsUsage = `usage:
  fleetsim models list
      the catalog's models (aliases marked) with parameters, KV per token and context
  fleetsim models gpus
      the catalog's GPUs: dense peaks per precision, HBM, links, power, price
  fleetsim models show NAME|CONFIG.json
      a catalog model, or a Hugging Face config.json read as [[models]]
      config = "CONFIG.json" reads it: the [[models]] table it amounts to,
      the derived parameters by part, KV bytes per token, what was assumed`

// cmdModels is `fleetsim models ...`.
func cmdModels(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("%s", modelsUsage)
	}
	switch args[0] {
	case "list":
		if len(args) != 1 {
			return usagef("usage: fleetsim models list")
		}
		return modelsList(stdout)
	case "gpus":
		if len(args) != 1 {
			return usagef("usage: fleetsim models gpus")
		}
		return modelsGPUs(stdout)
	case "show":
		if len(args) != 2 {
			return usagef("usage: fleetsim models show NAME|CONFIG.json")
		}
		return modelsShow(args[1], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, modelsUsage)
		return nil
	}
	return usagef("unknown models command %q; commands: list, gpus, show\n%s", args[0], modelsUsage)
}

func modelsList(w io.Writer) error {
	cat := hw.NewCatalog()
	fmt.Fprintf(w, "%-20s %10s %10s %12s %10s  %s\n", "model", "params", "active", "KV/token", "context", "")
	for _, n := range cat.LLMNames() {
		m := cat.LLMs[n]
		note := ""
		if a := hw.AliasOf(n); a != "" {
			note = "alias of " + a
		}
		fmt.Fprintf(w, "%-20s %9.4gB %9.4gB %8.0f KiB %10d  %s\n", n, m.Params/1e9, m.ActiveParamsDerived()/1e9,
			m.KVBytesPerToken(2)/1024, m.ContextTokens, note)
	}
	fmt.Fprintln(w, "KV per token in bf16, all layers (windowed layers hold at most their window).")
	return nil
}

func modelsGPUs(w io.Writer) error {
	cat := hw.NewCatalog()
	fmt.Fprintf(w, "%-10s %-6s %8s %8s %8s %7s %8s %9s %-8s %6s %6s %7s\n",
		"gpu", "vendor", "bf16 TF", "fp8 TF", "fp4 TF", "HBM GB", "HBM TB/s", "link GB/s", "fabric", "domain", "TDP W", "$/GPU-h")
	for _, n := range cat.GPUNames() {
		g := cat.GPUs[n]
		vendor, fabric := g.Vendor, g.Fabric
		if vendor == "" {
			vendor = hw.VendorNVIDIA
		}
		if fabric == "" {
			fabric = hw.FabricNVSwitch
		}
		fmt.Fprintf(w, "%-10s %-6s %8.0f %8.0f %8.0f %7.0f %8.2f %9.0f %-8s %6d %6.0f %7.2f\n", n, vendor,
			g.BF16FLOPS/1e12, g.FP8FLOPS/1e12, g.FP4FLOPS/1e12, g.HBMBytes/1e9, g.HBMBytesPerS/1e12,
			g.NVLinkBytesPerS/1e9, fabric, g.DomainGPUs, g.TDPWatts, g.PricePerGPUHour)
	}
	fmt.Fprintln(w, "Dense peaks; 0: no tensor cores at that precision. Sources: models/hw/catalog.go.")
	return nil
}

func modelsShow(arg string, w io.Writer) error {
	cat := hw.NewCatalog()
	if m, ok := cat.LLMs[arg]; ok {
		fmt.Fprintf(w, "# %s: built-in", arg)
		if a := hw.AliasOf(arg); a != "" {
			fmt.Fprintf(w, ", an alias of %s (the same architecture)", a)
		}
		fmt.Fprintln(w)
		writeModelTOML(w, m)
		if data, ok := hw.BuiltinConfig(arg); ok {
			imp, err := hw.ParseHFConfig(arg+".json", data)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "# its shipped config.json (models/hw/configs, model_type %s) derives:\n", imp.ModelType)
			writeDerived(w, imp)
		}
		return nil
	}
	if _, err := os.Stat(arg); err != nil && !strings.HasSuffix(arg, ".json") {
		return usagef("%q is neither a catalog model (fleetsim models list) nor a file: %v", arg, err)
	}
	imp, err := hw.ReadHFConfig(arg)
	if err != nil {
		return usageError{err}
	}
	m := imp.LLM
	m.Name = "NAME"
	fmt.Fprintf(w, "# %s: model_type %s; in a scenario, either\n#   [[models]]\n#   name = \"NAME\"\n#   config = %q\n# or the table it amounts to:\n", arg, imp.ModelType, arg)
	writeModelTOML(w, m)
	writeDerived(w, imp)
	return nil
}

// writeModelTOML writes m as a [[models]] table: every shape, and the
// MoE and attention-variant keys that are set.
func writeModelTOML(w io.Writer, m hw.LLM) {
	fmt.Fprintln(w, "[[models]]")
	var walk func(v reflect.Value, always bool)
	walk = func(v reflect.Value, always bool) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				walk(v.Field(i), false)
				continue
			}
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			fv := v.Field(i)
			if key == "" || key == "config" || (!always && fv.IsZero()) {
				continue
			}
			switch fv.Kind() {
			case reflect.String:
				fmt.Fprintf(w, "%s = %q\n", key, fv.String())
			case reflect.Int:
				fmt.Fprintf(w, "%s = %d\n", key, fv.Int())
			case reflect.Float64:
				fmt.Fprintf(w, "%s = %s\n", key, strconv.FormatFloat(fv.Float(), 'e', -1, 64))
			}
		}
	}
	walk(reflect.ValueOf(m), true)
}

func writeDerived(w io.Writer, imp *hw.HFImport) {
	m := imp.LLM
	parts := make([]string, len(imp.Parts))
	for i, p := range imp.Parts {
		parts[i] = fmt.Sprintf("%s %.4gB", p.Name, p.Params/1e9)
	}
	fmt.Fprintf(w, "#   params %.4gB: %s\n", m.Params/1e9, strings.Join(parts, ", "))
	if m.IsMoE() {
		fmt.Fprintf(w, "#   active per token %.4gB (%d of %d experts in %d MoE layers)\n", m.ActiveParamsDerived()/1e9, m.ExpertsPerToken, m.Experts, m.MoELayers())
	}
	fmt.Fprintf(w, "#   KV per token %.0f KiB in bf16, %.0f KiB in fp8", m.KVBytesPerToken(2)/1024, m.KVBytesPerToken(1)/1024)
	if m.SlidingWindow > 0 {
		fmt.Fprintf(w, " (%d of %d layers hold at most a window of %d tokens)", m.SlidingLayers, m.Layers, m.SlidingWindow)
	}
	fmt.Fprintln(w)
	for _, n := range imp.Notes {
		fmt.Fprintf(w, "#   note: %s\n", n)
	}
}
