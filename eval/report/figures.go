package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure kinds.
const (
	KindHeatmap   = "heatmap"
	KindCurves    = "curves"
	KindHistogram = "histogram"
)

// fileSafe maps a name into [A-Za-z0-9._-].
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// planFigures names every figure: a heatmap per model × condition × event
// domain, intervention curves per model × event domain, a prediction
// histogram per model × condition over the event domains and another over
// its objects trials (Domain objects), and CountVideoBench's EM and
// Coverage by true count.
func (r *Report) planFigures() {
	used := map[string]bool{}
	add := func(f Figure, parts ...string) {
		for i := range parts {
			parts[i] = fileSafe(parts[i])
		}
		base := "figures/" + strings.Join(parts, "-")
		name := base + ".png"
		for i := 2; used[name]; i++ {
			name = base + "-" + strconv.Itoa(i) + ".png"
		}
		used[name] = true
		f.File = name
		r.Figures = append(r.Figures, f)
	}
	for _, b := range r.Boundaries {
		add(Figure{Kind: KindHeatmap, Model: b.Model, Policy: b.Policy, Labels: b.Labels, Prompt: b.Prompt, Domain: b.Domain,
			Title: fmt.Sprintf("%s · %s · %s", b.Model, DomainTitle(b.Domain), Condition{b.Policy, b.Labels, b.Prompt}.Label())},
			"heatmap", b.Model, b.Domain, b.Policy, b.Prompt)
	}
	for _, mi := range r.Models {
		for _, d := range mi.Domains {
			if len(r.curves(mi.Model, d)) == 0 {
				continue
			}
			add(Figure{Kind: KindCurves, Model: mi.Model, Domain: d,
				Title: fmt.Sprintf("%s · %s: accuracy vs N, averaged over F", mi.Model, DomainTitle(d))},
				"curves", mi.Model, d)
		}
	}
	for _, c := range r.CountDistributions {
		add(Figure{Kind: KindHistogram, Model: c.Model, Policy: c.Policy, Labels: c.Labels, Prompt: c.Prompt,
			Title: fmt.Sprintf("%s · %s: predicted counts", c.Model, Condition{c.Policy, c.Labels, c.Prompt}.Label())},
			"hist", c.Model, c.Policy, c.Prompt)
	}
	for _, c := range r.CountVideoBench.Rows {
		add(Figure{Kind: KindHistogram, Model: c.Model, Policy: c.Policy, Labels: c.Labels, Prompt: c.Prompt, Domain: ObjectsDomain,
			Title: fmt.Sprintf("%s · %s: predicted counts, objects", c.Model, Condition{c.Policy, c.Labels, c.Prompt}.Label())},
			"hist", ObjectsDomain, c.Model, c.Policy, c.Prompt)
	}
	if len(r.CountVideoBench.Rows) > 0 {
		add(Figure{Kind: KindCardinalityEM, Domain: ObjectsDomain, Title: "Objects: exact match by true count (CountVideoBench Fig. 4)"}, "cvb", "em")
		add(Figure{Kind: KindCardinalityCoverage, Domain: ObjectsDomain, Title: "Objects: coverage by true count (CountVideoBench Fig. 3)"}, "cvb", "coverage")
	}
}

// curves returns the curve points of one model × domain grouped by
// condition, in the model's condition order.
func (r *Report) curves(model, domain string) map[Condition][]CurvePoint {
	out := map[Condition][]CurvePoint{}
	for _, p := range r.Curves {
		if p.Model == model && p.Domain == domain {
			c := Condition{p.Policy, p.Labels, p.Prompt}
			out[c] = append(out[c], p)
		}
	}
	return out
}

// RenderFigure draws one planned figure as PNG.
func (r *Report) RenderFigure(f Figure) ([]byte, error) {
	var p *plot.Plot
	var w, h vg.Length
	var side *plot.Legend // drawn to the right of the plot
	var err error
	switch f.Kind {
	case KindHeatmap:
		p, w, h = r.heatmap(f)
	case KindCurves:
		p, side, w, h, err = r.curvePlot(f)
	case KindHistogram:
		p, w, h, err = r.histogram(f)
	case KindCardinalityEM, KindCardinalityCoverage:
		p, side, w, h, err = r.cardinalityPlot(f)
	default:
		err = fmt.Errorf("unknown figure kind %q", f.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.File, err)
	}
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))}
	dc := draw.New(c)
	if side != nil {
		lw := side.Rectangle(dc).Size().X + vg.Points(16)
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		side.Draw(draw.Crop(dc, w-lw, 0, 0, -vg.Points(24)))
	} else {
		p.Draw(dc)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.File, err)
	}
	return buf.Bytes(), nil
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Title.Padding = vg.Points(6)
	p.Title.TextStyle.Font.Variant = "Sans"
	p.BackgroundColor = color.White
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(10)
		a.Label.TextStyle.Font.Variant = "Sans"
		a.Tick.Label.Font.Size = vg.Points(9)
		a.Tick.Label.Font.Variant = "Sans"
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8.5)
	p.Legend.TextStyle.Font.Variant = "Sans"
	return p
}

// ramp is a sequential colour scale (ColorBrewer YlGnBu) for accuracy in
// [0, 1].
var ramp = []color.RGBA{
	{0xff, 0xff, 0xd9, 0xff}, {0xed, 0xf8, 0xb1, 0xff}, {0xc7, 0xe9, 0xb4, 0xff}, {0x7f, 0xcd, 0xbb, 0xff},
	{0x41, 0xb6, 0xc4, 0xff}, {0x1d, 0x91, 0xc0, 0xff}, {0x22, 0x5e, 0xa8, 0xff}, {0x25, 0x34, 0x94, 0xff},
	{0x08, 0x1d, 0x58, 0xff},
}

// AccuracyColor maps an accuracy in [0, 1] to the heatmap colour.
func AccuracyColor(a float64) color.RGBA {
	a = min(max(a, 0), 1)
	x := a * float64(len(ramp)-1)
	i := int(math.Floor(x))
	if i >= len(ramp)-1 {
		return ramp[len(ramp)-1]
	}
	t := x - float64(i)
	lerp := func(p, q uint8) uint8 { return uint8(math.Round(float64(p) + t*(float64(q)-float64(p)))) }
	c0, c1 := ramp[i], ramp[i+1]
	return color.RGBA{lerp(c0.R, c1.R), lerp(c0.G, c1.G), lerp(c0.B, c1.B), 0xff}
}

// gridCell is one rectangle of the heatmap in data coordinates; col and
// row index the positive-count grid (col −1: the N = 0 column).
type gridCell struct {
	x0, x1, y0, y1 float64
	col, row       int
	fill           color.Color
	text           string
	textColor      color.Color
	outline        bool
}

// grid draws filled rectangles with their value printed inside.
type grid struct {
	cells    []gridCell
	fontSize vg.Length
}

func (g grid) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := p.Title.TextStyle
	sty.Font.Size = g.fontSize
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	for _, cell := range g.cells {
		x0, x1, y0, y1 := trX(cell.x0), trX(cell.x1), trY(cell.y0), trY(cell.y1)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(cell.fill, pts)
		c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1)}, append(pts, pts[0]))
		if cell.text != "" {
			sty.Color = cell.textColor
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, cell.text)
		}
	}
	// The outlined region's perimeter last: an edge of an outlined cell
	// whose neighbour across it is not outlined.
	type pos struct{ col, row int }
	in := map[pos]bool{}
	for _, cell := range g.cells {
		if cell.outline {
			in[pos{cell.col, cell.row}] = true
		}
	}
	ls := draw.LineStyle{Color: color.RGBA{0xd9, 0x48, 0x01, 0xff}, Width: vg.Points(2.4)}
	for _, cell := range g.cells {
		if !cell.outline {
			continue
		}
		x0, x1, y0, y1 := trX(cell.x0), trX(cell.x1), trY(cell.y0), trY(cell.y1)
		if !in[pos{cell.col - 1, cell.row}] {
			c.StrokeLine2(ls, x0, y0, x0, y1)
		}
		if !in[pos{cell.col + 1, cell.row}] {
			c.StrokeLine2(ls, x1, y0, x1, y1)
		}
		if !in[pos{cell.col, cell.row - 1}] {
			c.StrokeLine2(ls, x0, y0, x1, y0)
		}
		if !in[pos{cell.col, cell.row + 1}] {
			c.StrokeLine2(ls, x0, y1, x1, y1)
		}
	}
}

// heatmap draws one capability surface: positive N across, F up, each cell
// coloured and labelled with its accuracy; the N = 0 control is a separate
// column on the left (frequency does not apply to it). Cells inside the
// contiguous count boundary N*τ(F) are outlined.
func (r *Report) heatmap(f Figure) (*plot.Plot, vg.Length, vg.Length) {
	var cells []SurfaceCell
	for _, c := range r.Surfaces {
		if c.key() == f.key() {
			cells = append(cells, c)
		}
	}
	var bound BoundaryRow
	for _, b := range r.Boundaries {
		if b.key() == f.key() {
			bound = b
		}
	}
	var ns []int
	var fs []float64
	var controls []SurfaceCell
	for _, c := range cells {
		if c.N == 0 {
			controls = append(controls, c)
			continue
		}
		if len(ns) == 0 || ns[len(ns)-1] != c.N {
			ns = append(ns, c.N)
		}
		fs = appendFreq(fs, c.F)
	}
	if len(fs) == 0 {
		for _, c := range controls {
			fs = appendFreq(fs, c.F)
		}
	}
	sort.Ints(ns)
	sort.Float64s(fs)
	rowOf := func(v float64) int {
		for j, x := range fs {
			if math.Abs(x-v) <= 1e-9 {
				return j
			}
		}
		return -1
	}
	x0 := 0.0
	g := grid{fontSize: vg.Points(10.5)}
	var ticksX []plot.Tick
	text := func(a float64) (string, color.Color) {
		tc := color.Color(color.Black)
		if a > 0.55 {
			tc = color.White
		}
		return fmt.Sprintf("%.2f", a), tc
	}
	// cellText is a cell's label, its colour and fill: the accuracy, or
	// n/a on grey where the condition supplies no frames.
	cellText := func(c SurfaceCell) (string, color.Color, color.Color) {
		if c.NotApplicable {
			return "n/a", color.RGBA{0x55, 0x55, 0x55, 0xff}, color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
		}
		s, tc := text(c.Accuracy)
		return s, tc, AccuracyColor(c.Accuracy)
	}
	if len(controls) > 0 {
		x0 = 1.35
		ticksX = append(ticksX, plot.Tick{Value: 0.5, Label: "0\n(control)"})
		if len(controls) == 1 {
			// One nominal-F control: frequency is inapplicable, so the cell
			// spans the column.
			c := controls[0]
			s, tc, fill := cellText(c)
			g.cells = append(g.cells, gridCell{x0: 0, x1: 1, y0: 0, y1: float64(len(fs)), fill: fill, text: s, textColor: tc})
		} else {
			for _, c := range controls {
				j := rowOf(c.F)
				s, tc, fill := cellText(c)
				g.cells = append(g.cells, gridCell{x0: 0, x1: 1, y0: float64(j), y1: float64(j + 1), fill: fill, text: s, textColor: tc})
			}
		}
	}
	limit := map[int]float64{} // row → count boundary
	for _, cb := range bound.Count {
		if !cb.Below {
			limit[rowOf(cb.F)] = cb.Value
		}
	}
	for i, n := range ns {
		ticksX = append(ticksX, plot.Tick{Value: x0 + float64(i) + 0.5, Label: strconv.Itoa(n)})
		for j := range fs {
			gc := gridCell{x0: x0 + float64(i), x1: x0 + float64(i) + 1, y0: float64(j), y1: float64(j + 1),
				col: i, row: j, fill: color.RGBA{0xee, 0xee, 0xee, 0xff}}
			for _, c := range cells {
				if c.N == n && rowOf(c.F) == j {
					gc.text, gc.textColor, gc.fill = cellText(c)
					if lim, ok := limit[j]; ok && float64(n) <= lim && !c.NotApplicable {
						gc.outline = true
					}
				}
			}
			g.cells = append(g.cells, gc)
		}
	}
	var ticksY []plot.Tick
	for j, v := range fs {
		ticksY = append(ticksY, plot.Tick{Value: float64(j) + 0.5, Label: hz(v)})
	}
	p := newPlot(f.Title)
	p.Title.TextStyle.Font.Size = vg.Points(12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(11)
		a.Tick.Label.Font.Size = vg.Points(10.5)
	}
	p.Add(g)
	p.X.Min, p.X.Max = 0, x0+float64(len(ns))
	p.Y.Min, p.Y.Max = 0, float64(max(len(fs), 1))
	p.X.Tick.Marker = plot.ConstantTicks(ticksX)
	p.Y.Tick.Marker = plot.ConstantTicks(ticksY)
	p.X.Label.Text = fmt.Sprintf("event count N   (outlined: reliable region inside N*τ(F), τ = %s)", num(r.Tau))
	p.Y.Label.Text = "frequency F (Hz)"
	p.X.Padding, p.Y.Padding = 0, 0
	w := vg.Length(1.3+0.55*(x0+float64(len(ns)))) * vg.Inch
	w = max(w, 5*vg.Inch)
	h := vg.Length(1.2+0.36*float64(len(fs))) * vg.Inch
	h = max(h, 2.6*vg.Inch)
	return p, w, h
}

func appendFreq(fs []float64, f float64) []float64 {
	for _, x := range fs {
		if math.Abs(x-f) <= 1e-9 {
			return fs
		}
	}
	return append(fs, f)
}

// curvePlot is Figure 4: accuracy vs N averaged over F, one line per
// condition, with τ dashed.
func (r *Report) curvePlot(f Figure) (*plot.Plot, *plot.Legend, vg.Length, vg.Length, error) {
	byCond := r.curves(f.Model, f.Domain)
	var conds []Condition // the model's order: baseline first
	for _, mi := range r.Models {
		if mi.Model == f.Model {
			for _, c := range mi.Conditions {
				if byCond[c] != nil {
					conds = append(conds, c)
				}
			}
		}
	}
	p := newPlot(f.Title)
	p.X.Label.Text = "event count N"
	p.Y.Label.Text = "exact match (mean over F)"
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.TextStyle.Font.Variant = "Sans"
	leg.TextStyle.Font.Size = vg.Points(9)
	leg.Top = true
	maxN := 1
	for i, c := range conds {
		pts := make(plotter.XYs, len(byCond[c]))
		for j, q := range byCond[c] {
			pts[j] = plotter.XY{X: float64(q.N), Y: q.Accuracy}
			maxN = max(maxN, q.N)
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.6)
		s.Color = plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		s.Radius = vg.Points(3)
		p.Add(l, s)
		leg.Add(c.Label(), l, s)
	}
	tau, err := plotter.NewLine(plotter.XYs{{X: 0, Y: r.Tau}, {X: float64(maxN), Y: r.Tau}})
	if err != nil {
		return nil, nil, 0, 0, err
	}
	tau.Color = color.Gray{0x80}
	tau.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(tau)
	leg.Add("τ = "+num(r.Tau), tau)
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.2, Label: "0.2"}, {Value: 0.4, Label: "0.4"},
		{Value: 0.6, Label: "0.6"}, {Value: 0.8, Label: "0.8"}, {Value: 1, Label: "1.0"}})
	p.X.Min, p.X.Max = -0.3, float64(maxN)+0.3
	var ticks []plot.Tick
	seen := map[int]bool{}
	for _, c := range conds {
		for _, q := range byCond[c] {
			if !seen[q.N] {
				seen[q.N] = true
				ticks = append(ticks, plot.Tick{Value: float64(q.N), Label: strconv.Itoa(q.N)})
			}
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	return p, &leg, 7.6 * vg.Inch, 3.6 * vg.Inch, nil
}

// bars draws vertical bars of width 0.8 centred on integers.
type bars struct {
	xy    plotter.XYs
	fill  func(i int) color.Color
	width float64
}

func (b bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, q := range b.xy {
		x0, x1 := trX(q.X-b.width/2), trX(q.X+b.width/2)
		y0, y1 := trY(0), trY(q.Y)
		c.FillPolygon(b.fill(i), []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
}

func (b bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, _, ymax = plotter.XYRange(b.xy)
	return xmin - b.width, xmax + b.width, 0, ymax
}

// histogram is CountVideoBench's Figure 5: how often each integer was
// predicted, with the true-count distribution for reference and the
// largest local excess and deficit (§5.2) marked.
func (r *Report) histogram(f Figure) (*plot.Plot, vg.Length, vg.Length, error) {
	var row CountRow
	rows := r.CountDistributions
	if countOnly(f.Domain) {
		rows = r.CountVideoBench.Rows
	}
	for _, c := range rows {
		if c.key() == f.key().condition() {
			row = c
		}
	}
	p := newPlot(f.Title)
	p.X.Label.Text = fmt.Sprintf("predicted count  (%d answered, %d unparseable)", row.Answered, row.Abstentions)
	p.Y.Label.Text = "predictions"
	p.Add(plotter.NewGrid())
	excess, deficit := row.Excess, row.Deficit
	red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
	blue := color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	pred := make(plotter.XYs, len(row.Histogram))
	for i, b := range row.Histogram {
		pred[i] = plotter.XY{X: float64(b.Value), Y: float64(b.Count)}
	}
	if len(pred) > 0 {
		p.Add(bars{xy: pred, width: 0.8, fill: func(i int) color.Color {
			if excess.Defined && excess.Amount > 0 && row.Histogram[i].Value == excess.Value {
				return red
			}
			return color.RGBA{0x9e, 0xae, 0xc2, 0xff}
		}})
	}
	// True counts: how many trials had each true N.
	truth := map[int]int{}
	for _, c := range row.ByCardinality {
		truth[c.N] = c.Trials
	}
	var tv []int
	for v := range truth {
		tv = append(tv, v)
	}
	sort.Ints(tv)
	tpts := make(plotter.XYs, len(tv))
	for i, v := range tv {
		tpts[i] = plotter.XY{X: float64(v), Y: float64(truth[v])}
	}
	if len(tpts) > 0 {
		s, err := plotter.NewScatter(tpts)
		if err != nil {
			return nil, 0, 0, err
		}
		s.Shape = draw.CircleGlyph{}
		s.Color = color.Black
		s.Radius = vg.Points(2.5)
		p.Add(s)
		p.Legend.Add("true-count trials", s)
	}
	sw := vg.Points(8)
	p.Legend.Add("predictions", legendBox{color.RGBA{0x9e, 0xae, 0xc2, 0xff}, sw})
	if excess.Defined && excess.Amount > 0 {
		p.Legend.Add(fmt.Sprintf("largest local excess: +%d at %d", excess.Amount, excess.Value), legendBox{red, sw})
	}
	if deficit.Defined && deficit.Amount > 0 {
		mark, err := plotter.NewScatter(plotter.XYs{{X: float64(deficit.Value), Y: 0}})
		if err != nil {
			return nil, 0, 0, err
		}
		mark.Shape = draw.TriangleGlyph{}
		mark.Color = blue
		mark.Radius = vg.Points(5)
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("largest local deficit: −%d at %d", deficit.Amount, deficit.Value), mark)
	}
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(4)
	// Headroom above the tallest bar for the legend.
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.3+1
	var ticks []plot.Tick
	lo, hi := math.MaxInt, math.MinInt
	for _, q := range append(append(plotter.XYs{}, pred...), tpts...) {
		lo, hi = min(lo, int(q.X)), max(hi, int(q.X))
	}
	if lo <= hi {
		step := max(1, (hi-lo+1)/20)
		for v := lo; v <= hi; v += step {
			ticks = append(ticks, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = float64(lo)-0.8, float64(hi)+0.8
	}
	return p, 6.4 * vg.Inch, 3.4 * vg.Inch, nil
}

// legendBox is a filled square legend thumbnail.
type legendBox struct {
	c    color.Color
	side vg.Length
}

func (l legendBox) Thumbnail(c *draw.Canvas) {
	cx, cy := (c.Min.X+c.Max.X)/2, (c.Min.Y+c.Max.Y)/2
	h := l.side / 2
	c.FillPolygon(l.c, []vg.Point{{X: cx - h, Y: cy - h}, {X: cx + h, Y: cy - h}, {X: cx + h, Y: cy + h}, {X: cx - h, Y: cy + h}})
}

// plainTicks are plot's default ticks labelled without trailing zeros
// ("250", not "250.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}
