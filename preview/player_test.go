package preview

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/scene"
)

// testClip is bounce_ball N=3 F=1 Hz over 3 s at 30 fps: N/F fills the
// clip, so the schedule leaves no room for the seed to move it and the
// events are at t_1 = 1/(2F) = 0.5 s, 1.5 s and 2.5 s, clip frames 15,
// 45 and 75 of 90.
func testClip(t *testing.T) *scene.Clip {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: "bounce_ball", N: 3, F: 1, Seed: 4, Duration: 3, FPS: 30, Width: 320, Height: 180})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Times(); !slices.Equal(got, []float64{0.5, 1.5, 2.5}) {
		t.Fatalf("event times %v, want [0.5 1.5 2.5]", got)
	}
	return c
}

func newPlayer(t *testing.T, c Config) *Player {
	t.Helper()
	if c.Clip == nil {
		c.Clip = testClip(t)
	}
	c.Trace = c.Clip.Trace()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func wantState(t *testing.T, step string, p *Player, tt float64, frame, count int, paused bool) {
	t.Helper()
	s := p.State()
	if !near(s.T, tt) || s.Frame != frame || s.Count != count || s.Paused != paused {
		t.Fatalf("after %s: t=%v frame %d count %d paused %v; want t=%v frame %d count %d paused %v",
			step, s.T, s.Frame, s.Count, s.Paused, tt, frame, count, paused)
	}
}

func TestStepAndJump(t *testing.T) {
	p := newPlayer(t, Config{})
	wantState(t, "start", p, 0, 0, 0, false)
	p.Advance(0.1) // 0.1 s at 1×: frame 3
	wantState(t, "advance 0.1", p, 0.1, 3, 0, false)
	steps := []struct {
		key    Key
		t      float64
		frame  int
		count  int
		paused bool
	}{
		{KeyStepForward, 4.0 / 30, 4, 0, true},
		{KeyStepBack, 3.0 / 30, 3, 0, true},
		{KeyStepBack, 2.0 / 30, 2, 0, true},
		{KeyNextEvent, 0.5, 15, 1, true}, // the event at t is counted
		{KeyNextEvent, 1.5, 45, 2, true},
		{KeyPrevEvent, 0.5, 15, 1, true}, // strictly before 1.5
		{KeyPrevEvent, 0.5, 15, 1, true}, // none before 0.5: stays
		{KeyStepBack, 14.0 / 30, 14, 0, true},
		{KeyNextEvent, 0.5, 15, 1, true},
		{KeyStepForward, 16.0 / 30, 16, 1, true},
		{KeyPrevEvent, 0.5, 15, 1, true}, // from after an event: that event
		{KeyPause, 0.5, 15, 1, false},
		{KeyPause, 0.5, 15, 1, true},
	}
	for i, s := range steps {
		if p.Key(s.key) {
			t.Fatalf("step %d (%s) quit", i, s.key)
		}
		wantState(t, s.key.String(), p, s.t, s.frame, s.count, s.paused)
	}
	p.Seek(2.5)
	p.Key(KeyNextEvent) // the last event: nothing after it
	wantState(t, "next after the last", p, 2.5, 75, 3, true)
	p.Seek(0)
	p.Key(KeyStepBack)
	wantState(t, "left at 0", p, 0, 0, 0, true)
	p.Seek(3)
	p.Key(KeyStepForward) // the last frame (89) has no next
	wantState(t, "right at the end", p, 3, 89, 3, true)
	p.Key(KeyStepBack)
	wantState(t, "left at the end", p, 88.0/30, 88, 3, true)
	if !p.Key(KeyQuit) {
		t.Fatal("KeyQuit does not quit")
	}
}

func TestPlayToEndAndRestart(t *testing.T) {
	p := newPlayer(t, Config{Start: 2.9})
	p.Advance(0.05)
	wantState(t, "advance 0.05", p, 2.95, 88, 3, false)
	p.Advance(1) // past the end: pause at D, the last frame
	wantState(t, "advance past the end", p, 3, 89, 3, true)
	p.Key(KeyPause) // at the end: from the start
	wantState(t, "space at the end", p, 0, 0, 0, false)
	p.Key(KeyPause)
	p.Advance(1) // paused: no time passes
	wantState(t, "advance while paused", p, 0, 0, 0, true)
}

func TestSpeed(t *testing.T) {
	p := newPlayer(t, Config{})
	for _, want := range []float64{2, 4, 4} {
		p.Key(KeyFaster)
		if got := p.Speed(); got != want {
			t.Fatalf("speed %v, want %v", got, want)
		}
	}
	for _, want := range []float64{2, 1, 0.5, 0.25, 0.25} {
		p.Key(KeySlower)
		if got := p.Speed(); got != want {
			t.Fatalf("speed %v, want %v", got, want)
		}
	}
	p.Advance(1) // one second at ¼×
	wantState(t, "1 s at ¼×", p, 0.25, 7, 0, false)
	// Frame 7 ends at 8/30 s: 1/60 s of clip time away, 1/15 s of real
	// time at ¼×.
	if got := p.UntilChange(); math.Abs(got-(8.0/30-0.25)*4) > 1e-12 {
		t.Fatalf("UntilChange %v, want %v", got, (8.0/30-0.25)*4)
	}
	p.Key(KeyPause)
	if !math.IsInf(p.UntilChange(), 1) {
		t.Fatal("UntilChange while paused is not +Inf")
	}
}

func TestOverlayToggle(t *testing.T) {
	p := newPlayer(t, Config{Overlay: true})
	var with, without scene.DrawList
	p.DrawList(&with)
	p.Key(KeyOverlay)
	p.DrawList(&without)
	if p.Overlay() || len(with.Items) <= len(without.Items) {
		t.Fatalf("overlay on: %d items, off: %d (overlay now %v)", len(with.Items), len(without.Items), p.Overlay())
	}
}

// The scene part of a frame is the clip's own draw list at the frame's
// time, and the overlay only appends.
func TestDrawListScene(t *testing.T) {
	c := testClip(t)
	p := newPlayer(t, Config{Clip: c, Overlay: true, Start: 0.51}) // frame 15
	var dl scene.DrawList
	p.DrawList(&dl)
	want := c.State(0.5)
	if dl.Width != 320 || dl.Height != 180 || dl.Background != want.Background || len(dl.Items) <= len(want.Items) {
		t.Fatalf("draw list %dx%d bg %v, %d items; want 320x180 bg %v, more than %d items", dl.Width, dl.Height, dl.Background, len(dl.Items), want.Background, len(want.Items))
	}
	if !slices.Equal(dl.Items[:len(want.Items)], want.Items) {
		t.Fatal("the scene items differ from the clip's at frame 15")
	}
	p.SetOverlay(false)
	p.DrawList(&dl)
	if !dl.Equal(want) {
		t.Fatal("with the overlay off the draw list is not the clip's")
	}
}

func texts(dl *scene.DrawList) map[string]scene.RGBA {
	out := map[string]scene.RGBA{}
	for _, it := range dl.Items {
		if it.Kind == scene.Text {
			out[it.Text] = it.Color
		}
	}
	return out
}

func TestOverlayText(t *testing.T) {
	p := newPlayer(t, Config{Overlay: true, Start: 0.5, Paused: true})
	var dl scene.DrawList
	p.DrawList(&dl)
	got := texts(&dl)
	_, state := p.tr.Replay(0.5)
	for _, want := range []string{
		"bounce_ball_N03_F1.0_s04",
		"t = 0.500 s of 3.000 s   frame 15 (0–89)",
		"count 1 of 3   state " + state,
		"paused 1×",
		"true events (3)",
	} {
		if _, ok := got[want]; !ok {
			t.Errorf("overlay lacks %q; has %q", want, keys(got))
		}
	}
	// Event 1 (at t) is past, event 2 the next, event 3 to come.
	for text, c := range map[string]scene.RGBA{"1   0.500 s": dimColor, "2   1.500 s": nextColor, "3   2.500 s": textColor} {
		if got[text] != c {
			t.Errorf("event row %q colour %v, want %v", text, got[text], c)
		}
	}
}

func keys(m map[string]scene.RGBA) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Every overlay item lies inside OverlayBounds (or off the canvas), on the
// test clip and on the smallest canvas a spec allows.
func TestOverlayBounds(t *testing.T) {
	small, err := scene.New(scene.Params{Domain: "bounce_ball", N: 3, F: 1, Duration: 3, FPS: 30, Width: 64, Height: 64})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		clip  *scene.Clip
		start float64
	}{{nil, 0}, {nil, 0.5}, {nil, 1.7}, {nil, 3}, {small, 0.5}, {small, 3}} {
		start := tc.start
		p := newPlayer(t, Config{Clip: tc.clip, Overlay: true, Start: start})
		var dl scene.DrawList
		p.DrawList(&dl)
		n := len(p.clip.State(float64(p.frame()) / 30).Items)
		rects := p.OverlayBounds()
		if tc.clip == nil && len(rects) != 3 {
			t.Fatalf("t=%v: %d overlay rectangles, want 3 (status, events, timeline)", start, len(rects))
		}
		m, err := sharedMeasurer()
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range dl.Items[n:] {
			x0, y0, x1, y1 := it.X0, it.Y0, it.X1, it.Y1
			switch it.Kind {
			case scene.Text:
				w := m.width(it.Text, it.Size)
				x0, x1, y0, y1 = it.X0-w/2, it.X0+w/2, it.Y0-it.Size/2, it.Y0+it.Size/2
			case scene.Line:
				x0, x1 = x0-it.Width/2, x1+it.Width/2
			}
			// Only what lands on the canvas counts.
			x0, y0 = math.Max(0, x0), math.Max(0, y0)
			x1, y1 = math.Min(float64(dl.Width), x1), math.Min(float64(dl.Height), y1)
			if x1 <= x0 || y1 <= y0 {
				continue
			}
			inside := false
			for _, r := range rects {
				if x0 >= r.X0-1e-9 && x1 <= r.X1+1e-9 && y0 >= r.Y0-1e-9 && y1 <= r.Y1+1e-9 {
					inside = true
				}
			}
			if !inside {
				t.Errorf("t=%v: %v item %q at (%.1f,%.1f)-(%.1f,%.1f) outside %v", start, it.Kind, it.Text, x0, y0, x1, y1, rects)
			}
		}
	}
}

func plan(t *testing.T, c *scene.Clip, policy string) *sampling.Plan {
	t.Helper()
	pol, err := sampling.Parse(policy)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pol.Plan(sampling.Clip{ID: c.P.ID(), Duration: c.P.Duration, FPS: float64(c.P.FPS), Seed: c.P.Seed, Events: c.Times()})
	if err != nil {
		t.Fatal(err)
	}
	return &pl
}

// fps:1 on the 3 s clip samples t = 0, 1, 2 (clip frames 0, 30, 60); each
// is held until the next.
func TestPolicyHeld(t *testing.T) {
	c := testClip(t)
	pl := plan(t, c, "fps:1")
	cases := []struct {
		at            float64
		sample, shown int
		label         string
	}{
		{0, 0, 0, "Frame 1 of 3 at t = 0.000 s"},
		{0.99, 0, 0, "Frame 1 of 3 at t = 0.000 s"},
		{1, 1, 30, "Frame 2 of 3 at t = 1.000 s"},
		{1.5, 1, 30, "Frame 2 of 3 at t = 1.000 s"},
		{3, 2, 60, "Frame 3 of 3 at t = 2.000 s"},
	}
	for _, tc := range cases {
		p := newPlayer(t, Config{Clip: c, Plan: pl, Labels: chat.LabelsTime, Start: tc.at})
		s := p.State()
		if s.Sample != tc.sample || s.ShownFrame != tc.shown || s.Label != tc.label || s.Policy != "fps:1" {
			t.Errorf("at %v: sample %d frame %d label %q policy %q; want %d, %d, %q, fps:1", tc.at, s.Sample, s.ShownFrame, s.Label, s.Policy, tc.sample, tc.shown, tc.label)
		}
		var dl scene.DrawList
		p.DrawList(&dl)
		if !dl.Equal(c.State(float64(tc.shown) / 30)) {
			t.Errorf("at %v: the picture is not clip frame %d", tc.at, tc.shown)
		}
	}
	// Labels as eval writes them in the other modes.
	p := newPlayer(t, Config{Clip: c, Plan: pl, Labels: chat.LabelsPosition, Start: 1.5})
	if got := p.State().Label; got != "Frame 2 of 3" {
		t.Errorf("position label %q, want %q", got, "Frame 2 of 3")
	}
	p = newPlayer(t, Config{Clip: c, Plan: pl, Labels: chat.LabelsNone, Start: 1.5})
	if got := p.State().Label; got != "" {
		t.Errorf("labels none: label %q, want none", got)
	}
}

// keyframes (O = 0.1 s) samples 0.4, 0.5, 0.6, 1.4, …: before 0.4 s the
// model has seen nothing, and the screen is blank.
func TestPolicyBeforeFirstFrame(t *testing.T) {
	c := testClip(t)
	pl := plan(t, c, "keyframes")
	p := newPlayer(t, Config{Clip: c, Plan: pl, Labels: chat.LabelsPosition, Start: 0.2, Overlay: true})
	s := p.State()
	if s.Sample != -1 || s.ShownFrame != -1 || s.Label != "" {
		t.Fatalf("before the first sample: %+v", s)
	}
	var dl scene.DrawList
	p.DrawList(&dl)
	if _, ok := texts(&dl)["no frame yet: the first is sampled at t = 0.400 s"]; !ok {
		t.Errorf("overlay lacks the no-frame line: %q", keys(texts(&dl)))
	}
	p.SetOverlay(false)
	p.DrawList(&dl)
	if dl.Background != BlankColor || len(dl.Items) != 0 || dl.World != nil {
		t.Fatalf("blank frame: bg %v, %d items", dl.Background, len(dl.Items))
	}
	p.Seek(0.4)
	if s := p.State(); s.Sample != 0 || s.ShownFrame != 12 || s.Label != "Frame 1 of 9" {
		t.Fatalf("at 0.4 s: %+v, want sample 0, clip frame 12, Frame 1 of 9", s)
	}
}

// shuffled:M shows the frames out of time order: the player plays them in
// time order and labels each with its shown position, as eval does.
func TestPolicyShuffledLabels(t *testing.T) {
	c := testClip(t)
	pl := plan(t, c, "shuffled:3")
	moved := false
	for _, f := range pl.Frames {
		p := newPlayer(t, Config{Clip: c, Plan: pl, Labels: chat.LabelsPosition, Start: f.T})
		s := p.State()
		if s.Sample != f.Index || s.Label != chat.PositionLabel(f.Position, 3) {
			t.Errorf("at %v: sample %d label %q, want %d %q", f.T, s.Sample, s.Label, f.Index, chat.PositionLabel(f.Position, 3))
		}
		moved = moved || f.Position != f.Index
	}
	if !moved {
		t.Fatal("shuffled:3 kept the time order")
	}
}

func TestNewErrors(t *testing.T) {
	c := testClip(t)
	tr := c.Trace()
	other, err := scene.New(scene.Params{Domain: "blinking", N: 1, F: 1, Duration: 3, FPS: 30, Width: 320, Height: 180})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no clip", Config{Trace: tr}, "needs a clip"},
		{"other trace", Config{Clip: c, Trace: other.Trace()}, "is not the trace"},
		{"start after the end", Config{Clip: c, Trace: tr, Start: 3.5}, "outside the clip"},
		{"NaN start", Config{Clip: c, Trace: tr, Start: math.NaN()}, "outside the clip"},
		{"empty plan", Config{Clip: c, Trace: tr, Plan: &sampling.Plan{Policy: "keyframes:0.1"}, Labels: chat.LabelsPosition}, "gives no frames"},
		{"bad labels", Config{Clip: c, Trace: tr, Plan: plan(t, c, "fps:1"), Labels: "words"}, "want time, position or none"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestParseScript(t *testing.T) {
	got, err := ParseScript("tick, space,right,shift+right,+,-,o,Q,esc,left,shift+left")
	if err != nil {
		t.Fatal(err)
	}
	want := []Key{KeyNone, KeyPause, KeyStepForward, KeyNextEvent, KeyFaster, KeySlower, KeyOverlay, KeyQuit, KeyQuit, KeyStepBack, KeyPrevEvent}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseScript = %v, want %v", got, want)
	}
	for _, bad := range []string{"", " ", "space,,right", "jump", "shift+up", strings.Repeat("tick,", MaxScript) + "tick"} {
		if _, err := ParseScript(bad); err == nil {
			t.Errorf("ParseScript(%.20q) accepted", bad)
		}
	}
}

func TestTextWidth(t *testing.T) {
	m, err := sharedMeasurer()
	if err != nil {
		t.Fatal(err)
	}
	if w := m.width("", 13); w != 0 {
		t.Errorf("width of empty text %v", w)
	}
	if a, b := m.width("iiii", 13), m.width("WWWW", 13); !(a > 0 && a < b) {
		t.Errorf("width iiii %v, WWWW %v", a, b)
	}
	// Linear in size; control characters take no room.
	if a, b := m.width("t = 0.500 s", 13), m.width("t = 0.500 s", 26); math.Abs(2*a-b) > 1e-9 {
		t.Errorf("width at 13 px %v, at 26 px %v", a, b)
	}
	if a, b := m.width("ab", 13), m.width("a\x01b", 13); a != b {
		t.Errorf("a control character changed the width: %v vs %v", a, b)
	}
}
