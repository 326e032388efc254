package plot

import (
	"bytes"
	"fmt"
	"image/color"
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
	if err := os.MkdirAll(out, 0o755); err != nil {
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
	leg := p.Legend
	p.Legend = gplot.NewLegend() // drawn outside, below
	defer func() { p.Legend = leg }()
	area := dc
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
	return buf.Bytes(), nil
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

// numTicks is gonum's default ticker with labels written plainly
// (1000, not 1e+03) and without trailing zeros.
type numTicks struct{}

func (numTicks) Ticks(min, max float64) []gplot.Tick {
	ts := gplot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = fmtTick(ts[i].Value)
		}
	}
	return ts
}

// integerTicks labels only whole numbers (replica counts).
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []gplot.Tick {
	var ts []gplot.Tick
	for _, t := range (numTicks{}).Ticks(min, max) {
		if t.Label != "" && t.Value != math.Round(t.Value) {
			continue
		}
		ts = append(ts, t)
	}
	return ts
}

// logTicks labels 1, 2 and 5 × 10^k when the axis spans at most three
// decades, only the powers of ten beyond that, with unlabelled minor ticks
// at the other integers × 10^k.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []gplot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo := math.Floor(math.Log10(min))
	hi := math.Ceil(math.Log10(max))
	few := hi-lo <= 3
	var ts []gplot.Tick
	for e := lo; e <= hi; e++ {
		base := math.Pow(10, e)
		for i := 1; i <= 9; i++ {
			v := base * float64(i)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := gplot.Tick{Value: v}
			if i == 1 || (few && (i == 2 || i == 5)) {
				t.Label = fmtTick(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

func fmtTick(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e7 || a < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
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
