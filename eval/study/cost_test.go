package study

import (
	"math"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
)

func TestEstimateImageTokens(t *testing.T) {
	tiles := Model{ImageTokens: ImageTokenRule{Rule: RuleOpenAITiles}}
	low := tiles
	low.Detail = "low"
	auto := tiles
	auto.Detail = "auto"
	up := tiles
	up.ImageTokens.Upscale = true
	mini := Model{ImageTokens: ImageTokenRule{Rule: RuleOpenAITiles, BaseTokens: 2833, TileTokens: 5667}}
	patches := Model{ImageTokens: ImageTokenRule{Rule: RuleOpenAIPatches}}
	patchesMini := Model{ImageTokens: ImageTokenRule{Rule: RuleOpenAIPatches, Multiplier: 1.62}}
	for _, c := range []struct {
		name string
		m    Model
		w, h int
		want int
	}{
		// OpenAI's documented examples.
		{"1024² high", tiles, 1024, 1024, 765},
		{"2048×4096 high", tiles, 2048, 4096, 1105},
		{"4096×8192 low", low, 4096, 8192, 85},
		{"any low", low, 854, 480, 85},
		// Worked by hand: 854×480 fits and its short side is under 768: 2×1 tiles.
		{"854×480", tiles, 854, 480, 85 + 2*170},
		{"auto is estimated as high", auto, 1024, 1024, 765},
		{"unset rule is openai_tiles", Model{}, 1024, 1024, 765},
		{"512² not upscaled", tiles, 512, 512, 255},
		{"512² upscaled to 768²", up, 512, 512, 765},
		{"4000×3000: 2048×1536 → 1024×768: 2×2", tiles, 4000, 3000, 765},
		{"gpt-4o-mini parameters", mini, 1024, 1024, 2833 + 4*5667},
		{"patches 1024²", patches, 1024, 1024, 1024},
		{"patches 1800×2400", patches, 1800, 2400, 1452},
		{"patches ×1.62", patchesMini, 1024, 1024, 1659},
		{"per_pixel 1000²/750", Model{ImageTokens: ImageTokenRule{Rule: RulePerPixel}}, 1000, 1000, 1334},
		{"per_pixel 28²", Model{ImageTokens: ImageTokenRule{Rule: RulePerPixel, PixelsPerToken: 784}}, 448, 448, 256},
		{"fixed", Model{ImageTokens: ImageTokenRule{Rule: RuleFixed, Fixed: 258}}, 854, 480, 258},
		{"no size", tiles, 0, 480, 0},
	} {
		if got := EstimateImageTokens(c.m, c.w, c.h); got != c.want {
			t.Errorf("%s: %d×%d → %d, want %d", c.name, c.w, c.h, got, c.want)
		}
	}
}

func TestEstimateTextTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abcd": 1, "abcde": 2, "Frame 1 of 50 at t = 0.000 s": 7, "—": 1} {
		if got := EstimateTextTokens(s); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

// clip24 is a 24 s bounce_ball clip at 30 fps, 854×480, with events.
func clip24(id string, events ...float64) ClipInfo {
	return ClipInfo{ID: id, Duration: 24, FPS: 30, N: len(events), Events: events, Width: 854, Height: 480}
}

func dryRun(t *testing.T, s *Study, set *prompts.Set, clips ...ClipInfo) []Estimate {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	es, err := s.DryRun(clips, set)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestDryRunHandWorked: 2 clips, fps:4 on 24 s gives 96 frames each;
// max_images 50 thin keeps 50. With a one-sentence template every number
// is worked by hand.
func TestDryRunHandWorked(t *testing.T) {
	set, err := prompts.ParseYAML([]byte("count:\n  user: Count the events.\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Study{Name: "hand", Manifest: "m", Repetitions: 1, Decoding: Decoding{MaxTokens: 100},
		Models: []Model{
			{Name: "thin", BaseURL: "http://x/v1", MaxImages: 50, LimitMode: "thin", Prices: Prices{InputPerMTok: 2.5, OutputPerMTok: 10}},
			{Name: "refuse", BaseURL: "http://x/v1", MaxImages: 50},
		},
		Conditions: []Condition{{Policy: "fps:4", Labels: "time", Prompt: "count"}}}
	s.SetDefaults()
	es, err := s.DryRun([]ClipInfo{clip24("bounce_ball_a", 3), clip24("bounce_ball_b", 5)}, set)
	if err != nil {
		t.Fatal(err)
	}
	// Text per request: "Count the events." 17 bytes → 5 tokens; 4 for
	// the message; 50 labels "Frame P of 50 at t = T s" (22 bytes + P +
	// T). Thinning keeps frame ⌊j·96/50⌋ (t = that/4): j = 0…20 have
	// t < 10 (T 5 bytes), j = 21…49 t ≥ 10 (6 bytes). j = 0…8: 28 bytes,
	// 7 tokens (×9 = 63); j = 9…20: 29 bytes, 8 (×12 = 96); j = 21…49: 30
	// bytes, 8 (×29 = 232). 5 + 4 + 391 = 400. Images: 50 × 425 (854×480,
	// 2 tiles) = 21,250. Per request 21,650; two clips 43,300.
	want := Estimate{Model: "thin", Policy: "fps:4", Prompt: "count", Requests: 2, Images: 100,
		InputTokens: 43300, OutputTokens: 200, USD: 43300/1e6*2.5 + 200/1e6*10}
	if len(es) != 2 {
		t.Fatalf("%d estimates", len(es))
	}
	if math.Abs(es[0].USD-want.USD) > 1e-12 {
		t.Errorf("USD %v, want %v", es[0].USD, want.USD)
	}
	es[0].USD = want.USD
	if es[0] != want {
		t.Errorf("thin:\n got %+v\nwant %+v", es[0], want)
	}
	if r := es[1]; r.Refused != 2 || r.Requests != 0 || r.Images != 0 || r.InputTokens != 0 || r.USD != 0 {
		t.Errorf("refuse: %+v", r)
	}
}

func TestDryRunPolicies(t *testing.T) {
	clips := []ClipInfo{clip24("bounce_ball_N03", 2, 5, 8), clip24("blinking_N00")}
	s := &Study{Name: "p", Manifest: "m", Repetitions: 3,
		Models: []Model{
			{Name: "img", BaseURL: "http://x/v1", ImageTokens: ImageTokenRule{Rule: RuleFixed, Fixed: 100}, Prices: Prices{InputPerMTok: 1, OutputPerMTok: 1}},
			{Name: "vid", BaseURL: "http://x/v1", Video: VideoSupport{Supported: true, TokensPerFrame: 258}, ImageTokens: ImageTokenRule{Rule: RuleFixed, Fixed: 100}},
		},
		Conditions: []Condition{{"keyframes", "position", "direct", "", ""}, {"adaptive:12", "time", "direct", "", ""}, {"native", "time", "direct", "", ""}, {"native:2", "time", "thinking", "", ""}, {"fps:2", "time", "structured_trace", "", ""}, {"fps:2", "time", "multi_turn_verification", "", ""}, {"uniform:8", "time", "zero_shot", "", ""}}}
	s.SetDefaults()
	es := dryRun(t, s, nil, clips...)
	if len(es) != 14 {
		t.Fatalf("%d estimates", len(es))
	}
	get := func(model, policy, prompt string) Estimate {
		for _, e := range es {
			if e.Model == model && e.Policy == policy && e.Prompt == prompt {
				return e
			}
		}
		t.Fatalf("no estimate %s %s %s", model, policy, prompt)
		return Estimate{}
	}
	for _, c := range []struct {
		model, policy, prompt     string
		requests, images, vframes int
	}{
		{"img", "keyframes", "direct", 6, 3 * 9, 0},                    // 3 events × 3 frames; N=0 gives none (still a request)
		{"img", "adaptive:12", "direct", 6, 3 * 24, 0},                 // estimated as its budget
		{"img", "native", "direct", 6, 3 * 48, 0},                      // no video support: frames at 1 FPS
		{"img", "native:2", "thinking", 6, 3 * 96, 0},                  // 2 FPS
		{"img", "uniform:8", "zero_shot", 6, 3 * 16, 0},                // 8 frames each
		{"vid", "native", "direct", 6, 0, 3 * 48},                      // the video, sampled at 1 FPS
		{"vid", "native:2", "thinking", 6, 0, 3 * 96},                  // at the policy's 2 FPS
		{"img", "fps:2", "multi_turn_verification", 12, 3 * 2 * 96, 0}, // two turns, images sent twice
	} {
		e := get(c.model, c.policy, c.prompt)
		if e.Requests != c.requests || e.Images != c.images || e.VideoFrames != c.vframes || e.Refused != 0 {
			t.Errorf("%s %s %s: %+v, want requests %d images %d video frames %d", c.model, c.policy, c.prompt, e, c.requests, c.images, c.vframes)
		}
	}
	// Default outputs per prompt.
	if e := get("img", "keyframes", "direct"); e.OutputTokens != 6*50 {
		t.Errorf("direct output %d", e.OutputTokens)
	}
	if e := get("img", "native:2", "thinking"); e.OutputTokens != 6*1500 {
		t.Errorf("thinking output %d", e.OutputTokens)
	}
	// Video tokens: 24 frames × 258 per request, plus text.
	v := get("vid", "native", "direct")
	if text := v.InputTokens/6 - 24*258; text < 50 || text > 150 {
		t.Errorf("video input %d: text part %d", v.InputTokens, text)
	}
	// The second turn re-sends the first turn's input plus reply and
	// follow-up: multi-turn input = 2 × structured-trace input + trials ×
	// (output + follow-up), since both share the first turn's text.
	st, mt := get("img", "fps:2", "structured_trace"), get("img", "fps:2", "multi_turn_verification")
	set := prompts.Default()
	tm, _ := set.Get("multi_turn_verification")
	follow := 0
	for _, c := range clips {
		fu, _ := tm.FollowUpMessage(prompts.Input{Domain: strings.SplitN(c.ID, "_N", 2)[0], Duration: 24, Frames: []prompts.Frame{{Position: 0, T: 0, DataURL: "x"}}})
		follow += 3 * (textTokens([]chat.Message{fu}) + 4)
	}
	if want := 2*st.InputTokens + 6*800 + follow; mt.InputTokens != want {
		t.Errorf("multi-turn input %d, want %d (structured %d)", mt.InputTokens, want, st.InputTokens)
	}
	if mt.OutputTokens != 12*800 {
		t.Errorf("multi-turn output %d", mt.OutputTokens)
	}
	if e := get("img", "fps:2", "structured_trace"); math.Abs(e.USD-float64(e.InputTokens+e.OutputTokens)/1e6) > 1e-12 {
		t.Errorf("USD %v for %d + %d tokens at $1", e.USD, e.InputTokens, e.OutputTokens)
	}
	// max_tokens replaces the defaults.
	s.Decoding.MaxTokens = 10
	es = dryRun(t, s, nil, clips...)
	for _, e := range es {
		if e.OutputTokens != e.Requests*10 {
			t.Errorf("%+v: output with max_tokens 10", e)
		}
	}
}

func TestDryRunErrors(t *testing.T) {
	s := &Study{Name: "e", Manifest: "m", Repetitions: 1, Models: []Model{{Name: "a", BaseURL: "http://x/v1"}},
		Conditions: []Condition{{"keyframes", "position", "direct", "", ""}}}
	s.SetDefaults()
	for _, c := range []struct {
		clip ClipInfo
		want string
	}{
		{ClipInfo{ID: "juggling_1", Duration: 24, FPS: 30, Width: 64, Height: 64}, "clip juggling_1: no domain given"},
		{ClipInfo{ID: "x", Domain: "juggling", Duration: 24, FPS: 30, Width: 64, Height: 64}, `unknown domain "juggling"`},
		{ClipInfo{ID: "bounce_ball_1", Duration: 24, FPS: 30, N: 2, Width: 64, Height: 64}, "keyframes:0.1 reads the event times: N=2 but 0 given"},
		{ClipInfo{ID: "bounce_ball_2", Duration: 24, FPS: 30, N: 1, Events: []float64{3}}, "no frame size"},
		{ClipInfo{ID: "bounce_ball_3", FPS: 30, Width: 64, Height: 64}, "needs a positive duration"},
	} {
		_, err := s.DryRun([]ClipInfo{c.clip}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.clip, err, c.want)
		}
	}
	s.Conditions[0].Prompt = "nope"
	if _, err := s.DryRun(nil, nil); err == nil || !strings.Contains(err.Error(), `unknown prompt "nope"`) {
		t.Errorf("unknown prompt: %v", err)
	}
}

func TestWriteEstimates(t *testing.T) {
	es := []Estimate{
		{Model: "gpt", Policy: "fps:4", Prompt: "structured_trace", Requests: 2190, Images: 109500, InputTokens: 47471631, OutputTokens: 1752000, USD: 136.1990775},
		{Model: "gpt", Policy: "keyframes", Prompt: "direct", Requests: 2190, Images: 36180, InputTokens: 15655920, OutputTokens: 109500, USD: 0.004},
		{Model: "local", Policy: "fps:16", Prompt: "direct", Refused: 2190},
	}
	var b strings.Builder
	if err := WriteEstimates(&b, es); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	want := `model        policy     prompt            requests   images  refused  input tokens  output tokens     USD
---------------------------------------------------------------------------------------------------------
gpt          fps:4      structured_trace     2,190  109,500        0    47,471,631      1,752,000  136.20
gpt          keyframes  direct               2,190   36,180        0    15,655,920        109,500   <0.01
total gpt                                    4,380  145,680        0    63,127,551      1,861,500  136.20
local        fps:16     direct                   0        0    2,190             0              0    0.00
total local                                      0        0    2,190             0              0    0.00
---------------------------------------------------------------------------------------------------------
total                                        4,380  145,680    2,190    63,127,551      1,861,500  136.20
refused: trials whose frames exceed the model's max_images under limit_mode refuse; not sent, not counted above.
`
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	// One model, no refusals: no subtotal, no refused column.
	b.Reset()
	if err := WriteEstimates(&b, es[:1]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "refused") || strings.Contains(b.String(), "total gpt") || !strings.Contains(b.String(), "\ntotal ") {
		t.Errorf("single model table:\n%s", b.String())
	}
}

func TestGroupAndDollars(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %s", n, got)
		}
	}
	for v, want := range map[float64]string{0: "0.00", 0.004: "<0.01", 0.005: "0.01", 1.996: "2.00", 1348.43: "1,348.43"} {
		if got := dollars(v); got != want {
			t.Errorf("dollars(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestDryRunObjects: CountVideoBench's protocol on one objects clip (5 s,
// 30 fps, 1920×1080): uniform:10 with the countvideobench prompt, worked
// by hand. Text: "How many red cubes are in this video?" 37 bytes → 10
// tokens; labels "Frame P of 10 at t = T s": P = 1…9 28 bytes → 7 tokens
// (×9 = 63), P = 10 29 bytes → 8; 4 for the message: 85. Images: 1920×1080
// fits 2048², its short side 1080 > 768 scales it to 1365×768: 3×2 tiles,
// 85 + 6·170 = 1105; ×10 = 11,050. Input 11,135 per trial; output the
// countvideobench default, 100. keyframes cannot sample a clip without
// events: unsupported, not sent; single:best takes the middle frame.
func TestDryRunObjects(t *testing.T) {
	clip := ClipInfo{ID: "objects_N20_cube-red_s03", Duration: 5, FPS: 30, N: 20, Width: 1920, Height: 1080, Seed: 3}
	s := &Study{Name: "cvb", Manifest: "m", Repetitions: 2,
		Models:     []Model{{Name: "gpt", BaseURL: "http://x/v1", Prices: Prices{InputPerMTok: 1, OutputPerMTok: 1}}},
		Conditions: []Condition{{"uniform:10", "time", "countvideobench", "", ""}, {"keyframes", "position", "countvideobench", "", ""}, {"single:best", "position", "countvideobench", "", ""}, {"keyframes", "position", "direct", "", ""}}}
	s.SetDefaults()
	es := dryRun(t, s, nil, clip)
	want := Estimate{Model: "gpt", Policy: "uniform:10", Prompt: "countvideobench", Requests: 2, Images: 20,
		InputTokens: 2 * 11135, OutputTokens: 2 * 100, USD: (2*11135 + 2*100) / 1e6}
	if math.Abs(es[0].USD-want.USD) > 1e-12 {
		t.Errorf("USD %v, want %v", es[0].USD, want.USD)
	}
	es[0].USD = want.USD
	if es[0] != want {
		t.Errorf("uniform:10:\n got %+v\nwant %+v", es[0], want)
	}
	for _, e := range []Estimate{es[1], es[3]} {
		if e.Unsupported != 2 || e.Requests != 0 || e.Images != 0 || e.InputTokens != 0 || e.USD != 0 {
			t.Errorf("%s · %s: %+v, want 2 unsupported trials", e.Policy, e.Prompt, e)
		}
	}
	// single:best: the question, one label "Frame 1 of 1 at t = 2.500 s"
	// (27 bytes, 7 tokens), the message, one image.
	if e := es[2]; e.Requests != 2 || e.Images != 2 || e.InputTokens != 2*(10+7+4+1105) {
		t.Errorf("single:best: %+v", e)
	}
	// An explicit class beats the id; an id without one needs it.
	named := clip
	named.ID, named.Class = "clip-7", "sphere-purple"
	named.Domain = "objects"
	s.Conditions = s.Conditions[:1]
	e := dryRun(t, s, nil, named)[0]
	// "How many purple spheres are in this video?" 43 bytes → 11 tokens.
	if e.InputTokens != 2*(11135+1) {
		t.Errorf("explicit class: %d input tokens, want %d", e.InputTokens, 2*(11135+1))
	}
	named.Class = ""
	if _, err := s.DryRun([]ClipInfo{named}, nil); err == nil || !strings.Contains(err.Error(), "clip clip-7: prompts: domain objects needs the clip's object class") {
		t.Errorf("no class: %v", err)
	}
	var b strings.Builder
	if err := WriteEstimates(&b, es); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "unsupported") || !strings.Contains(b.String(), "unsupported: keyframes trials on objects clips") {
		t.Errorf("table:\n%s", b.String())
	}
}
