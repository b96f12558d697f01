package scene

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/domain"
)

func paperParams(domain string, n int, f float64, seed int) Params {
	if n == 0 {
		f = PaperNominalF
	}
	return Params{Domain: domain, N: n, F: f, Seed: seed, Duration: PaperDuration, FPS: DefaultFPS, Width: DefaultWidth, Height: DefaultHeight}
}

// forEachCell runs fn on every domain × paper cell × a few seeds.
func forEachCell(t *testing.T, seeds []int, fn func(t *testing.T, c *Clip)) {
	for _, d := range Domains() {
		for _, n := range PaperCounts {
			for _, f := range PaperFrequencies {
				if n == 0 && f != PaperNominalF {
					continue
				}
				for _, s := range seeds {
					c, err := New(paperParams(d, n, f, s))
					if err != nil {
						t.Fatalf("%s N=%d F=%v s=%d: %v", d, n, f, s, err)
					}
					fn(t, c)
				}
			}
		}
	}
}

func TestScheduleOnEveryCell(t *testing.T) {
	forEachCell(t, []int{0, 1, 7}, func(t *testing.T, c *Clip) {
		p := c.P
		ts := c.Times()
		if len(ts) != p.N {
			t.Fatalf("%s: %d events, want %d", p.ID(), len(ts), p.N)
		}
		// Contacts are on the nearest frame (TestContactsOnFrames), other
		// events on the nominal schedule.
		tol := 1e-9
		if domain.Of(p.Domain).EventsOnFrames {
			tol += 0.5 / float64(p.FPS)
		}
		for i, ti := range ts {
			if want := ts[0] + float64(i)/p.F; math.Abs(ti-want) > tol {
				t.Errorf("%s: t_%d = %v, want t_1+(i-1)/F = %v", p.ID(), i+1, ti, want)
			}
			if ti < 0 || ti > p.Duration {
				t.Errorf("%s: t_%d = %v outside the clip", p.ID(), i+1, ti)
			}
		}
		start, end := c.ActiveSpan()
		if p.N > 0 {
			if start < 0 || end > p.Duration+1e-9 {
				t.Errorf("%s: active span [%v,%v] leaves the clip", p.ID(), start, end)
			}
			if span := end - start; math.Abs(span-float64(p.N)/p.F) > 1e-6 {
				t.Errorf("%s: active span %v, want N/F = %v", p.ID(), span, float64(p.N)/p.F)
			}
			// t_1 on a frame of the clip whenever the placement has room.
			if k := ts[0] * float64(p.FPS); math.Abs(k-math.Round(k)) > 1e-6 && p.Duration-float64(p.N)/p.F >= 1/float64(p.FPS) {
				t.Errorf("%s: t_1 = %v is not on a frame", p.ID(), ts[0])
			}
		}
		tr := c.Trace()
		if err := tr.Validate(); err != nil {
			t.Fatalf("%s: %v", p.ID(), err)
		}
		if got, _ := tr.Replay(p.Duration); got != p.N || tr.Final() != p.N {
			t.Errorf("%s: replay gives c_N=%d, Final %d, want %d", p.ID(), got, tr.Final(), p.N)
		}
	})
}

func TestSeedChangesNuisanceNotSchedule(t *testing.T) {
	for _, d := range Domains() {
		a, _ := New(paperParams(d, 6, 1.5, 1))
		b, _ := New(paperParams(d, 6, 1.5, 2))
		ta, tb := a.Times(), b.Times()
		for i := 1; i < len(ta); i++ {
			if math.Abs((ta[i]-ta[i-1])-(tb[i]-tb[i-1])) > 1e-9 {
				t.Errorf("%s: spacing differs between seeds", d)
			}
		}
		if reflect.DeepEqual(a.Trace().Nuisance, b.Trace().Nuisance) {
			t.Errorf("%s: seeds 1 and 2 have the same nuisance", d)
		}
		ea, eb := a.Trace().Events, b.Trace().Events
		for i := range ea {
			if ea[i].Type != eb[i].Type || ea[i].Count != eb[i].Count {
				t.Errorf("%s: event %d differs in type/count between seeds", d, i+1)
			}
		}
		// The same seed looks the same in another cell: only the start delay
		// (which scales with the room left) and the walk's length differ.
		c, _ := New(paperParams(d, 2, 3.0, 1))
		na, nc := a.Trace().Nuisance, c.Trace().Nuisance
		for k, v := range na {
			if k == "start_delay" {
				continue
			}
			if !reflect.DeepEqual(v, nc[k]) {
				t.Errorf("%s: nuisance %q differs across cells for the same seed: %v vs %v", d, k, v, nc[k])
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, d := range Domains() {
		a, _ := New(paperParams(d, 8, 2.5, 3))
		b, _ := New(paperParams(d, 8, 2.5, 3))
		ja, _ := a.Trace().Marshal()
		jb, _ := b.Trace().Marshal()
		if string(ja) != string(jb) {
			t.Errorf("%s: traces differ between two builds", d)
		}
		for _, tt := range []float64{0, 3.3, 7.77, 12, 23.9} {
			if !a.State(tt).Equal(b.State(tt)) {
				t.Errorf("%s: State(%v) differs between two builds", d, tt)
			}
		}
	}
}

// wallGap returns the smallest distance between the ball's edge and a wall's
// inner edge (0 = touching).
func wallGap(b *bounceBall, t float64) (gap float64, wall string) {
	p := b.centre(t)
	r := b.ball.R
	in := b.box.Width / 2
	gaps := []float64{p.y - r - (b.box.Y0 + in), (b.box.X1 - in) - (p.x + r), (b.box.Y1 - in) - (p.y + r), p.x - r - (b.box.X0 + in)}
	gap = math.Inf(1)
	for i, g := range gaps {
		if g < gap {
			gap, wall = g, walls[i]
		}
	}
	return gap, wall
}

func TestBounceBallTouchesExactlyAtEvents(t *testing.T) {
	forEachCell(t, []int{0, 4}, func(t *testing.T, c *Clip) {
		if c.P.Domain != "bounce_ball" {
			return
		}
		b := c.dom.(*bounceBall)
		tr := c.Trace()
		for i, ti := range c.times {
			gap, wall := wallGap(b, ti)
			if math.Abs(gap) > 1e-9 {
				t.Errorf("%s: at t_%d the ball is %v px from the nearest wall, want 0", c.P.ID(), i+1, gap)
			}
			if wall != tr.Events[i].Attrs["wall"] || wall != tr.Events[i].After {
				t.Errorf("%s: event %d touches %s, trace says %v", c.P.ID(), i+1, wall, tr.Events[i])
			}
			if i > 0 && tr.Events[i].After == tr.Events[i-1].After {
				t.Errorf("%s: consecutive contacts on the same wall", c.P.ID())
			}
		}
		// At every other time (1 ms grid) the ball is clear of all walls, and
		// between contacts its speed is constant.
		const dt = 0.001
		for k := 0; k <= int(c.P.Duration/dt); k++ {
			tt := float64(k) * dt
			near := false
			for _, ti := range c.times {
				if math.Abs(tt-ti) < dt/2 {
					near = true
				}
			}
			if gap, _ := wallGap(b, tt); !near && gap <= 1e-9 {
				t.Fatalf("%s: ball touches a wall at t=%v, not an event time", c.P.ID(), tt)
			}
		}
		for i := 1; i < len(c.times); i++ {
			a, z := c.times[i-1], c.times[i]
			v1 := dist(b.centre(a), b.centre(a+(z-a)/4)) / ((z - a) / 4)
			v2 := dist(b.centre(a+(z-a)/2), b.centre(z)) / ((z - a) / 2)
			if math.Abs(v1-v2) > 1e-6*math.Max(1, v1) {
				t.Errorf("%s: speed between contacts %d and %d not constant: %v vs %v", c.P.ID(), i, i+1, v1, v2)
			}
		}
		// At rest before and after the active span.
		start, end := c.ActiveSpan()
		if c.P.N > 0 {
			if b.centre(0) != b.centre(start) || b.centre(end) != b.centre(c.P.Duration) {
				t.Errorf("%s: ball moves outside the active span", c.P.ID())
			}
		}
	})
}

func dist(a, b vec) float64 { return math.Hypot(a.x-b.x, a.y-b.y) }

func TestBlinkingPulse(t *testing.T) {
	forEachCell(t, []int{2}, func(t *testing.T, c *Clip) {
		if c.P.Domain != "blinking" {
			return
		}
		bl := c.dom.(*blinking)
		isOn := func(tt float64) bool { return c.State(tt).Items[0] == bl.onItem }
		pulse := c.Trace().Pulse
		frame := 1 / float64(c.P.FPS)
		if c.P.N > 0 && (pulse < frame || pulse >= 1/c.P.F) {
			t.Fatalf("%s: pulse %v not in [1 frame, period)", c.P.ID(), pulse)
		}
		for i, ti := range c.times {
			if isOn(ti-1e-6) || !isOn(ti) || !isOn(ti+pulse-1e-6) || isOn(ti+pulse) {
				t.Errorf("%s: pulse %d is not on exactly over [t_i, t_i+pulse)", c.P.ID(), i+1)
			}
			// At least one rendered frame shows it.
			seen := false
			for k := math.Ceil(ti * float64(c.P.FPS)); float64(k)/float64(c.P.FPS) < ti+pulse; k++ {
				seen = seen || isOn(k/float64(c.P.FPS))
			}
			if !seen {
				t.Errorf("%s: pulse %d falls between frames", c.P.ID(), i+1)
			}
			if _, st := c.Trace().Replay(ti); st != "on" {
				t.Errorf("%s: replay at t_%d gives %q", c.P.ID(), i+1, st)
			}
		}
		if c.P.N == 0 && isOn(12) {
			t.Errorf("N=0 blinking is on")
		}
	})
}

func TestStateMachineHighlight(t *testing.T) {
	forEachCell(t, []int{0, 5}, func(t *testing.T, c *Clip) {
		if c.P.Domain != "state_machine" {
			return
		}
		m := c.dom.(*stateMachine)
		if len(m.nodes) < 4 {
			t.Fatalf("%s: %d states, want ≥ 4", c.P.ID(), len(m.nodes))
		}
		highlighted := func(tt float64) string {
			var got []string
			for _, it := range c.State(tt).Items {
				if it.Kind == Text && it.Color == m.hiText {
					got = append(got, it.Text)
				}
			}
			if len(got) != 1 {
				t.Fatalf("%s: %d highlighted states at t=%v", c.P.ID(), len(got), tt)
			}
			return got[0]
		}
		edges := map[string]bool{}
		for _, e := range c.Trace().Nuisance["edges"].([]string) {
			edges[e] = true
		}
		for i, ev := range c.Trace().Events {
			before, after := highlighted(ev.T-1e-6), highlighted(ev.T)
			if before != ev.Before || after != ev.After || before == after {
				t.Errorf("%s: event %d highlight %s→%s, trace %s→%s", c.P.ID(), i+1, before, after, ev.Before, ev.After)
			}
			if !edges[before+"->"+after] {
				t.Errorf("%s: transition %s→%s is not along an arrow", c.P.ID(), before, after)
			}
		}
	})
}

func TestBadParams(t *testing.T) {
	ok := paperParams("bounce_ball", 4, 2, 0)
	cases := []struct {
		mod  func(p *Params)
		want string
	}{
		{func(p *Params) { p.Domain = "juggling" }, "unknown domain"},
		{func(p *Params) { p.N, p.F = 12, 0.4 }, "longer than"},
		{func(p *Params) { p.F = 0 }, "must be positive"},
		{func(p *Params) { p.F = -1 }, "must be positive"},
		{func(p *Params) { p.FPS = 0 }, "fps"},
		{func(p *Params) { p.FPS = 1000 }, "fps"},
		{func(p *Params) { p.Width = 855 }, "odd"},
		{func(p *Params) { p.Height = 10 }, "out of range"},
		{func(p *Params) { p.Duration = -3 }, "duration"},
		{func(p *Params) { p.N = -1 }, "count"},
		{func(p *Params) { p.FPS, p.F = 4, 3 }, "half the frame rate"},
	}
	for _, tc := range cases {
		p := ok
		tc.mod(&p)
		_, err := New(p)
		if err == nil || !errors.Is(err, ErrParams) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want error containing %q", p, err, tc.want)
		}
	}
}

func TestID(t *testing.T) {
	p := Params{Domain: "bounce_ball", N: 8, F: 1.5, Seed: 3}
	if got := p.ID(); got != "bounce_ball_N08_F1.5_s03" {
		t.Errorf("ID = %q", got)
	}
	p.F = 2
	if got := p.ID(); got != "bounce_ball_N08_F2.0_s03" {
		t.Errorf("ID = %q", got)
	}
	p.F = 0.25
	if got := p.ID(); got != "bounce_ball_N08_F0.25_s03" {
		t.Errorf("ID = %q", got)
	}
}

// TestFrameAtEventShowsIt: when an event falls on a frame (t_1 always
// does; later ones when (i−1)/F is a whole number of frames), that frame
// shows the event although t_1 + (i−1)/F and k/fps may differ in their
// last bits. blinking N=12, F=2.5, seed 0 at 30 fps has its ninth event at
// 12.666666666666668 s, frame 380 (380/30 = 12.666666666666666 s).
func TestFrameAtEventShowsIt(t *testing.T) {
	for _, f := range []float64{0.5, 1, 1.5, 2, 2.5, 3, 4} {
		for seed := range 4 {
			c, err := New(Params{Domain: "blinking", N: 12, F: f, Seed: seed, Duration: 24, FPS: 30, Width: 64, Height: 64})
			if err != nil {
				t.Fatal(err)
			}
			for i, ti := range c.Times() {
				k := math.Round(ti * 30)
				if math.Abs(ti*30-k) > 1e-6 {
					continue // between frames
				}
				on := c.State(k / 30)
				before := c.State((k - 1) / 30)
				if reflect.DeepEqual(on.Items, before.Items) {
					t.Errorf("F=%v seed %d: event %d at %.15f s: frame %v does not show it", f, seed, i+1, ti, k)
				}
				if got := c.eventsBefore(k / 30); got != i+1 {
					t.Errorf("F=%v seed %d: eventsBefore(frame of event %d) = %d", f, seed, i+1, got)
				}
			}
		}
	}
}

// TestContactsOnFrames: a wall contact is an instant, so every contact of
// every bounce_ball clip of the paper grid (all seeds) is on a frame
// instant of the clip — t_i = k/fps exactly, for a whole k — and frame round(t_i·fps)
// draws the ball touching the wall; each t_i is within half a frame of
// t_1 + (i−1)/F. At 4 Hz on 30 fps the nominal schedule puts every other
// contact half-way between two frames, and at 3.5 Hz most of them between
// frames.
func TestContactsOnFrames(t *testing.T) {
	var seeds []int
	for s := range PaperSeeds {
		seeds = append(seeds, s)
	}
	checked := 0
	forEachCell(t, seeds, func(t *testing.T, c *Clip) {
		if c.P.Domain != "bounce_ball" {
			return
		}
		fps := float64(c.P.FPS)
		b := c.dom.(*bounceBall)
		for i, ti := range c.Times() {
			k := math.Round(ti * fps)
			// The very instant frame k shows (the renderers draw frame k at
			// float64(k)/fps), not one a float's last bits from it.
			if ti != k/fps {
				t.Fatalf("%s: t_%d·fps = %.9f is not a whole frame", c.P.ID(), i+1, ti*fps)
			}
			if gap, _ := wallGap(b, k/fps); math.Abs(gap) > 1e-9 {
				t.Errorf("%s: frame %v (t_%d) draws the ball %v px from the wall", c.P.ID(), k, i+1, gap)
			}
			if d := math.Abs(ti - (c.times[0] + float64(i)/c.P.F)); d > 0.5/fps+1e-9 {
				t.Errorf("%s: t_%d is %v s from t_1+(i−1)/F, more than half a frame", c.P.ID(), i+1, d)
			}
			checked++
		}
	})
	if checked == 0 {
		t.Fatal("no contacts checked")
	}
	// With less than a frame of room for the span, t_1 is snapped all the
	// same and the span is clipped to the clip: here it starts after
	// frame 0, which shows the ball at rest, and ends with the clip, less
	// than a frame before the ball would rest.
	c, err := New(Params{Domain: "bounce_ball", N: 3, F: 0.8, Seed: 1, Duration: 3.751, FPS: 30, Width: 64, Height: 64})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Times(), []float64{19.0 / 30, 57.0 / 30, 94.0 / 30}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: times %v, want %v", c.P.ID(), got, want)
	}
	b := c.dom.(*bounceBall)
	if start, end := c.ActiveSpan(); math.Abs(start-(19.0/30-0.625)) > 1e-12 || end != c.P.Duration || b.centre(0) != b.rest0 {
		t.Errorf("%s: span [%v, %v], centre at 0 %v (rest %v)", c.P.ID(), start, end, b.centre(0), b.rest0)
	}
}
