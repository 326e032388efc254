package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// Figure is one plot to be written as NAME.png and NAME.svg. Its legend is
// drawn to the right of the axes, outside the data, so it never hides a
// curve.
type Figure struct {
	Name string // file name without extension, e.g. "ttft_cdf"
	Plot *gplot.Plot
}

// Size of every figure, and the PNG resolution.
const (
	figWidth  = 8 * vg.Inch
	figHeight = 4.5 * vg.Inch
	pngDPI    = 144
)

// Write renders each figure into DIR/plots/ (created if needed) as NAME.png
// and NAME.svg and returns the paths written, sorted. Every image is
// rendered in memory first and written to a temporary file that is then
// renamed, so a failure never leaves a half-written image.
func Write(dir string, figs ...Figure) ([]string, error) {
	out := filepath.Join(dir, "plots")
	type file struct {
		path string
		data []byte
	}
	var files []file
	for _, f := range figs {
		for _, format := range []string{"png", "svg"} {
			b, err := render(f, format)
			if err != nil {
				return nil, fmt.Errorf("plot %s.%s: %w", f.Name, format, err)
			}
			files = append(files, file{filepath.Join(out, f.Name+"."+format), b})
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	for _, f := range files {
		if err := checkPlotsDir(out, f.path); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(out, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	var written []string
	for _, f := range files {
		if err := writeAtomic(f.path, f.data); err != nil {
			return written, err
		}
		written = append(written, f.path)
	}
	sort.Strings(written)
	return written, nil
}

// checkPlotsDir refuses to write the figure path into the plots directory
// out unless out is absent or a directory (not a symbolic link: a run
// directory received from someone else must not make fleetsim write
// elsewhere), and path is a figure's name (results.IsPlotFile) that is
// absent or a regular file.
func checkPlotsDir(out, path string) error {
	if fi, err := os.Lstat(out); err == nil && !fi.IsDir() {
		return badInput("%s: is not a directory (a symbolic link?); fleetsim plot writes its figures only into a directory of the run directory", out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !results.IsPlotFile(filepath.Base(path)) {
		return fmt.Errorf("plot: %s is not a figure's name of results.PlotFigures", filepath.Base(path))
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return badInput("%s: is not a regular file (a symbolic link?); fleetsim plot replaces only its own figures", path)
	}
	return nil
}

// render draws f in format "png" or "svg".
func render(f Figure, format string) (b []byte, err error) {
	defer func() {
		// gonum/plot panics on some impossible layouts; report, don't crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing failed: %v", r)
		}
	}()
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(pngDPI))}
	case "svg":
		c = vgsvg.New(figWidth, figHeight)
	default:
		return nil, fmt.Errorf("unknown format %q", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	p := f.Plot
	orig := p.Legend
	leg := orig
	p.Legend = gplot.NewLegend() // drawn outside, to the right
	defer func() { p.Legend = orig }()
	area := dc
	leg.Padding = vg.Points(2.5)
	// A legend taller than the figure shrinks its text, down to 6 pt.
	if h := leg.Rectangle(dc).Size().Y; h > figHeight*0.9 {
		size := leg.TextStyle.Font.Size * figHeight * 0.9 / h
		leg.TextStyle.Font.Size = max(size, vg.Points(6))
		leg.Padding = vg.Points(1)
	}
	if r := leg.Rectangle(dc); r.Size().X > 0 {
		pad := vg.Points(8)
		w := r.Size().X + pad
		area.Max.X -= w
		la := dc
		la.Min.X = area.Max.X + pad/2
		// Line the legend up with the top of the axes, below the title.
		if p.Title.Text != "" {
			la.Max.Y -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		}
		la.Max.Y -= vg.Points(4)
		leg.Top, leg.Left = true, true
		leg.Draw(la)
	}
	p.Draw(area)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	if format == "svg" {
		return svgFontFallbacks(buf.Bytes()), nil
	}
	return buf.Bytes(), nil
}

// fontFallbacks are, for each font family gonum/plot draws with, families
// with the same metrics (Liberation's are metric-compatible with the
// Microsoft core fonts) and the generic family, so that an SVG shown where
// Liberation is not installed keeps its text the width it was laid out
// for, or close, instead of a default font that overruns the legend.
var fontFallbacks = map[string]string{
	"Liberation Serif": "'Liberation Serif','Times New Roman',Times,serif",
	"Liberation Sans":  "'Liberation Sans',Arial,Helvetica,sans-serif",
	"Liberation Mono":  "'Liberation Mono','Courier New',Courier,monospace",
}

// svgFontFallbacks rewrites vgsvg's font-family:NAME; (one family, no
// fallback) into NAME's fallback list. Embedding the fonts instead
// (vgsvg.EmbedFonts) would add about 400 kB to every SVG.
func svgFontFallbacks(b []byte) []byte {
	for name, list := range fontFallbacks {
		b = bytes.ReplaceAll(b, []byte("font-family:"+name+";"), []byte("font-family:"+list+";"))
	}
	return b
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// palette is Okabe–Ito: distinguishable with colour-blindness and in grey.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// lineStyle is the colour and dash pattern of the i-th line: the palette,
// then the palette again dotted, then dash-dotted.
func lineStyle(i int) (color.Color, []vg.Length) {
	switch (i / len(palette)) % 3 {
	case 1:
		return colour(i), dotted
	case 2:
		return colour(i), []vg.Length{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}
	}
	return colour(i), nil
}

var (
	sloColour  = color.RGBA{0xC0, 0x00, 0x00, 0xff}
	markColour = color.RGBA{0x55, 0x55, 0x55, 0xff}
	dashed     = []vg.Length{vg.Points(6), vg.Points(3)}
	dotted     = []vg.Length{vg.Points(2), vg.Points(2)}
)

// newPlot is a plot with a title (and the scenario, when known), axis
// labels and a light grid.
func newPlot(m Meta, title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	if m.Scenario != "" {
		title += " — " + m.Scenario
	}
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = numTicks{}
	p.Y.Tick.Marker = numTicks{}
	return p
}

// numTicks labels about six round values (1, 2, 2.5 or 5 × 10^k apart),
// written plainly (1000, not 1e+03), with an unlabelled tick halfway
// between labels.
type numTicks struct{}

func (numTicks) Ticks(min, max float64) []gplot.Tick { return niceTicks(min, max, 6, false) }

// integerTicks labels whole numbers only (replica counts), every one when
// there are few.
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []gplot.Tick { return niceTicks(min, max, 10, true) }

func niceTicks(min, max float64, n int, integer bool) []gplot.Tick {
	if !(max > min) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return []gplot.Tick{{Value: min, Label: fmtTick(min)}}
	}
	raw := (max - min) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if integer {
		step = math.Max(1, math.Round(step))
	}
	var ts []gplot.Tick
	half := step / 2
	if integer && step == 1 {
		half = 0
	}
	for k := math.Ceil(min/step - 1e-9); k*step <= max*(1+1e-12)+1e-12; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ts = append(ts, gplot.Tick{Value: v, Label: fmtTick(v)})
		if half > 0 && v+half <= max {
			ts = append(ts, gplot.Tick{Value: v + half})
		}
	}
	if half > 0 && len(ts) > 0 && ts[0].Value-half >= min {
		ts = append(ts, gplot.Tick{Value: ts[0].Value - half})
	}
	return ts
}

// logTicks is the ticker of a log axis drawn over log10 of the data (see
// scale): it labels 1, 2 and 5 × 10^k when the axis spans at most three
// decades, only the powers of ten beyond that, with unlabelled minor ticks
// at the other integers × 10^k. Labels are the values, not their logs.
type logTicks struct{}

func (logTicks) Ticks(lmin, lmax float64) []gplot.Tick {
	if !(lmax > lmin) || math.IsInf(lmin, 0) || math.IsInf(lmax, 0) {
		return []gplot.Tick{{Value: lmin, Label: fmtTick(math.Pow(10, lmin))}}
	}
	lo, hi := math.Floor(lmin), math.Ceil(lmax)
	few := lmax-lmin <= 3
	var ts []gplot.Tick
	for e := lo; e <= hi; e++ {
		base := math.Pow(10, e)
		for i := 1; i <= 9; i++ {
			v := base * float64(i)
			lv := math.Log10(v)
			if lv < lmin-1e-9 || lv > lmax+1e-9 {
				continue
			}
			t := gplot.Tick{Value: lv}
			if i == 1 || (few && (i == 2 || i == 5)) {
				t.Label = fmtTick(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// fmtTick writes a tick value plainly (0.25, 1000, 400000), from a million
// up and below 1e-4 as mantissa and power of ten (1e7, 2.5e6, 1e-5).
func fmtTick(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e6 || a < 1e-4 {
		// 1e7 and 2.5e6, not 10000000 and 2500000, whose zeros nobody counts.
		e := math.Floor(math.Log10(a))
		m, err := strconv.ParseFloat(strconv.FormatFloat(v/math.Pow(10, e), 'g', 3, 64), 64)
		if err == nil && math.Abs(m) >= 10 {
			m, e = m/10, e+1
		}
		return strconv.FormatFloat(m, 'g', 3, 64) + "e" + strconv.Itoa(int(e))
	}
	// Round away float noise such as 0.30000000000000004.
	s := strconv.FormatFloat(v, 'f', -1, 64)
	r := strconv.FormatFloat(v, 'g', 6, 64)
	if len(r) < len(s) {
		if f, err := strconv.ParseFloat(r, 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	return s
}
