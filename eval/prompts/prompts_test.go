package prompts

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/parse"
)

var allNames = []string{"cot", "countvideobench", "direct", "multi_turn_verification", "natural_direct", "role_prompting", "structured_trace", "thinking", "zero_shot"}

func TestBuiltinNamesAndFamilies(t *testing.T) {
	if _, err := builtins(); err != nil {
		t.Fatal(err)
	}
	b := Builtin()
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range b {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(got, allNames) {
		t.Fatalf("builtin names %v, want %v", got, allNames)
	}
	if !slices.Equal(Default().Names(), allNames) {
		t.Errorf("Default().Names() = %v", Default().Names())
	}
	natural := map[string]bool{"zero_shot": true, "natural_direct": true, "cot": true}
	for name, tm := range b {
		want := FamilySynthetic
		if natural[name] {
			want = FamilyNatural
		}
		if name == "countvideobench" {
			want = FamilyObjects
		}
		if tm.Family != want || tm.Name != name {
			t.Errorf("%s: name %q family %q, want family %s", name, tm.Name, tm.Family, want)
		}
		if err := tm.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if (tm.FollowUp != "") != (name == "multi_turn_verification") {
			t.Errorf("%s: follow-up %q", name, tm.FollowUp)
		}
	}
	if b["role_prompting"].System == "" {
		t.Errorf("role_prompting has no system message")
	}
	// Builtin returns a copy.
	b["direct"] = Template{Name: "direct", User: "x", Family: FamilySynthetic}
	if d, _ := Default().Get("direct"); d.User == "x" {
		t.Errorf("Builtin map is shared")
	}
}

func TestQuestions(t *testing.T) {
	q := Questions()
	for _, d := range []string{DomainBounceBall, DomainBlinking, DomainStateMachine, DomainNatural, DomainObjects} {
		if q[d].Text == "" || q[d].EventNoun == "" || q[d].Attributes == "" || !strings.HasSuffix(q[d].Text, "?") {
			t.Errorf("%s: %+v", d, q[d])
		}
	}
	if len(q) != 5 {
		t.Errorf("%d questions", len(q))
	}
	if !strings.Contains(q[DomainNatural].Text, "repeated") {
		t.Errorf("natural question %q", q[DomainNatural].Text)
	}
}

// shuffledFrames makes n frames at uniform times shown in a random order.
func shuffledFrames(n int, seed uint64) []Frame {
	r := rand.New(rand.NewPCG(seed, 1))
	perm := r.Perm(n)
	fs := make([]Frame, n)
	for i, k := range perm {
		fs[i] = Frame{Position: i, T: float64(k) * 24 / float64(n), DataURL: "data:image/jpeg;base64," + strings.Repeat("A", 4+k)}
	}
	return fs
}

func TestBuildEveryTemplateAndDomain(t *testing.T) {
	set := Default()
	for _, name := range set.Names() {
		tm, err := set.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for dom, q := range Questions() {
			frames := shuffledFrames(7, uint64(len(name)+len(dom)))
			in := Input{Domain: dom, Duration: 24, Frames: frames, Detail: "low"}
			if dom == DomainObjects {
				in.Class = "cube-red"
			}
			msgs, err := tm.Build(in)
			if err != nil {
				t.Fatalf("%s/%s: %v", name, dom, err)
			}
			wantMsgs := 1
			if tm.System != "" {
				wantMsgs = 2
				if msgs[0].Role != chat.RoleSystem || len(msgs[0].Parts) != 1 || msgs[0].Parts[0].Type != chat.TypeText {
					t.Errorf("%s/%s: system message %+v", name, dom, msgs[0])
				}
			}
			if len(msgs) != wantMsgs {
				t.Fatalf("%s/%s: %d messages, want %d", name, dom, len(msgs), wantMsgs)
			}
			u := msgs[len(msgs)-1]
			if u.Role != chat.RoleUser || len(u.Parts) != 1+2*len(frames) {
				t.Fatalf("%s/%s: user message role %s with %d parts", name, dom, u.Role, len(u.Parts))
			}
			text := u.Parts[0].Text
			wants := []string{q.Text, `\boxed{N}`, "24-second video", "7 images", "time t in seconds"}
			if name == "countvideobench" {
				// CountVideoBench's protocol: the question and nothing else.
				wants = nil
				if text != q.Text {
					t.Errorf("%s/%s: text %q, want the question alone %q", name, dom, text, q.Text)
				}
			}
			for _, want := range wants {
				if !strings.Contains(text, want) {
					t.Errorf("%s/%s: instructions lack %q:\n%s", name, dom, want, text)
				}
			}
			if strings.Contains(text, "{{") || strings.Contains(text, "<no value>") {
				t.Errorf("%s/%s: unrendered template text:\n%s", name, dom, text)
			}
			for i, f := range frames {
				label, img := u.Parts[1+2*i], u.Parts[2+2*i]
				pos, total, ts, ok := chat.ParseFrameLabel(label.Text)
				if label.Type != chat.TypeText || !ok || pos != i || total != len(frames) || math.Abs(ts-f.T) > 0.0005 {
					t.Errorf("%s/%s: frame %d label %q → %d %d %v %v, want t %v", name, dom, i, label.Text, pos, total, ts, ok, f.T)
				}
				if img.Type != chat.TypeImage || img.URL != f.DataURL || img.Detail != "low" {
					t.Errorf("%s/%s: frame %d image part %+v", name, dom, i, img)
				}
			}
		}
	}
}

func TestBuildVideoAndNoFrames(t *testing.T) {
	tm, _ := Default().Get("structured_trace")
	msgs, err := tm.Build(Input{Domain: DomainBlinking, Duration: 24, VideoURL: "data:video/mp4;base64,AAAA"})
	if err != nil {
		t.Fatal(err)
	}
	p := msgs[0].Parts
	if len(msgs) != 1 || len(p) != 3 || p[1].Text != chat.VideoLabel(24) || p[2].Type != chat.TypeVideo || p[2].URL != "data:video/mp4;base64,AAAA" {
		t.Fatalf("video request %+v", msgs)
	}
	for _, want := range []string{"video below is 24 seconds long", "time since the start of the video", "running count k"} {
		if !strings.Contains(p[0].Text, want) {
			t.Errorf("video instructions lack %q:\n%s", want, p[0].Text)
		}
	}
	if strings.Contains(p[0].Text, "frame") {
		t.Errorf("video instructions mention frames:\n%s", p[0].Text)
	}
	// A policy that gives no frames (keyframes, N=0) still builds.
	msgs, err = tm.Build(Input{Domain: DomainBlinking, Duration: 24})
	if err != nil || len(msgs[0].Parts) != 1 || !strings.Contains(msgs[0].Parts[0].Text, "No frames") {
		t.Errorf("no-frame request: %v %+v", err, msgs)
	}
}

func TestBuildErrors(t *testing.T) {
	tm, _ := Default().Get("direct")
	ok := Frame{Position: 0, T: 1, DataURL: "data:image/png;base64,AA"}
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{Domain: "juggling", Duration: 24}, `unknown domain "juggling" (known: blinking, bounce_ball, natural, objects, state_machine)`},
		{Input{Domain: DomainObjects, Duration: 5}, "domain objects needs the clip's object class (e.g. cube-red)"},
		{Input{Domain: DomainObjects, Class: "cube-orange", Duration: 5}, `unknown object class "cube-orange" (want <shape>-<colour>, shape cube|sphere, colour red|blue|green|yellow|purple)`},
		{Input{Domain: DomainObjects, Class: "pyramid-red", Duration: 5}, `unknown object class "pyramid-red"`},
		{Input{Domain: DomainObjects, Class: "red cube", Duration: 5}, `unknown object class "red cube"`},
		{Input{Domain: DomainBlinking, Class: "cube-red", Duration: 24}, `class "cube-red" given for domain blinking; only the objects domain has classes`},
		{Input{Domain: DomainBlinking}, "duration 0 s is not a positive number"},
		{Input{Domain: DomainBlinking, Duration: math.Inf(1)}, "duration +Inf s is not a positive number"},
		{Input{Domain: DomainBlinking, Duration: 24, VideoURL: "data:video/mp4;base64,AA", Frames: []Frame{ok}}, "both a video and 1 frames given"},
		{Input{Domain: DomainBlinking, Duration: 24, Frames: []Frame{ok, ok}}, "frame 1 has position 0; give frames in shown order"},
		{Input{Domain: DomainBlinking, Duration: 24, Frames: []Frame{{Position: 0, T: -1, DataURL: "x"}}}, "frame 0: time -1 s is not a time in the clip"},
		{Input{Domain: DomainBlinking, Duration: 24, Frames: []Frame{{Position: 0, T: math.NaN(), DataURL: "x"}}}, "frame 0: time NaN s"},
		{Input{Domain: DomainBlinking, Duration: 24, Frames: []Frame{{Position: 0, T: 2}}}, "frame 0 (t = 2.000 s) has no image"},
	} {
		_, err := tm.Build(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.in, err, c.want)
		}
	}
}

func TestFollowUp(t *testing.T) {
	set := Default()
	in := Input{Domain: DomainStateMachine, Duration: 24, Frames: shuffledFrames(3, 1)}
	mt, _ := set.Get("multi_turn_verification")
	m, ok := mt.FollowUpMessage(in)
	if !ok || m.Role != chat.RoleUser || len(m.Parts) != 1 || mt.Turns() != 2 {
		t.Fatalf("follow-up %+v %v", m, ok)
	}
	for _, want := range []string{"frames", "highlight change", `\boxed{N}`, "corrected"} {
		if !strings.Contains(m.Parts[0].Text, want) {
			t.Errorf("follow-up lacks %q: %s", want, m.Parts[0].Text)
		}
	}
	mv, _ := mt.FollowUpMessage(Input{Domain: DomainStateMachine, Duration: 24, VideoURL: "data:video/mp4;base64,AA"})
	if !strings.Contains(mv.Parts[0].Text, "video") {
		t.Errorf("video follow-up %q", mv.Parts[0].Text)
	}
	if _, ok := mt.FollowUpMessage(Input{Domain: "nope", Duration: 24}); ok {
		t.Errorf("follow-up for a bad input")
	}
	for _, name := range set.Names() {
		if name == "multi_turn_verification" {
			continue
		}
		tm, _ := set.Get(name)
		if _, ok := tm.FollowUpMessage(in); ok || tm.Turns() != 1 {
			t.Errorf("%s has a follow-up", name)
		}
	}
}

// TestLedgerFormatParses fills in the ledger line the structured prompts
// ask for, as a model following them would, and checks that package parse
// reads the times, the attributes and the boxed count: the prompts ask
// for what the parser understands.
func TestLedgerFormatParses(t *testing.T) {
	attr := map[string][]string{
		DomainBounceBall:   {"left", "top", "right"},
		DomainBlinking:     {"on", "on", "on"},
		DomainStateMachine: {"A → C", "C → B", "B → A"},
		DomainNatural:      {"squat", "squat", "squat"},
		DomainObjects:      {"front left", "centre", "back right"},
	}
	key := map[string]string{DomainBounceBall: "wall", DomainBlinking: "phase", DomainStateMachine: "to"}
	wantAttr := map[string][]string{DomainBounceBall: {"left", "top", "right"}, DomainBlinking: {"on", "on", "on"}, DomainStateMachine: {"C", "B", "A"}}
	times := []string{"00:03.2", "00:04.0", "00:12.5"}
	for _, name := range []string{"structured_trace", "multi_turn_verification"} {
		tm, _ := Default().Get(name)
		for dom := range attr {
			in := Input{Domain: dom, Duration: 24, Frames: shuffledFrames(4, 2)}
			if dom == DomainObjects {
				in.Class = "sphere-blue"
			}
			msgs, err := tm.Build(in)
			if err != nil {
				t.Fatal(err)
			}
			var format string
			for line := range strings.SplitSeq(msgs[0].Parts[0].Text, "\n") {
				if strings.Contains(line, "running count k") {
					format = line
				}
			}
			if format != "mm:ss.s — <attribute> — running count k" {
				t.Fatalf("%s/%s: ledger format line %q", name, dom, format)
			}
			var reply strings.Builder
			reply.WriteString("Here is the list.\n")
			for i, ts := range times {
				line := strings.NewReplacer("mm:ss.s", ts, "<attribute>", attr[dom][i], "running count k", "running count "+string(rune('1'+i))).Replace(format)
				reply.WriteString(line + "\n")
			}
			reply.WriteString(`\boxed{3}`)
			res := parse.Parse(reply.String(), dom)
			if res.Count == nil || *res.Count != 3 || res.CountSource != parse.SourceBoxed {
				t.Errorf("%s/%s: count %v (%s) from\n%s", name, dom, res.Count, res.CountSource, reply.String())
			}
			if dom == DomainObjects {
				continue // scored on the count alone (package score)
			}
			if len(res.Events) != 3 {
				t.Fatalf("%s/%s: %d events from\n%s", name, dom, len(res.Events), reply.String())
			}
			for i, want := range []float64{3.2, 4.0, 12.5} {
				if math.Abs(res.Events[i].T-want) > 1e-9 {
					t.Errorf("%s/%s: event %d at %v, want %v", name, dom, i, res.Events[i].T, want)
				}
				if k := key[dom]; k != "" && res.Events[i].Attrs[k] != wantAttr[dom][i] {
					t.Errorf("%s/%s: event %d attrs %v, want %s=%s", name, dom, i, res.Events[i].Attrs, k, wantAttr[dom][i])
				}
			}
		}
	}
}

func TestOverrideAndAdd(t *testing.T) {
	doc := `
direct:
  user: "Count for {{.Domain}}: {{.Question}} Answer as \\boxed{N}."
my_ledger:
  family: natural
  system: "Be brief."
  user: |
    {{.Question}} {{.Frames}} frames, {{.Duration}} s.
  follow_up: "Check again; \\boxed{N}."
`
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := s.Get("direct")
	if d.Family != FamilySynthetic || d.System != "" || d.FollowUp != "" || !strings.HasPrefix(d.User, "Count for") {
		t.Errorf("override: %+v", d)
	}
	msgs, err := d.Build(Input{Domain: DomainBounceBall, Duration: 24})
	if err != nil || msgs[0].Parts[0].Text != `Count for bounce_ball: `+Questions()[DomainBounceBall].Text+` Answer as \boxed{N}.` {
		t.Errorf("override built %v %+v", err, msgs)
	}
	if !slices.Equal(s.Overridden(), []string{"direct"}) {
		t.Errorf("overridden %v", s.Overridden())
	}
	if got := s.Names(); len(got) != len(allNames)+1 || !slices.Contains(got, "my_ledger") {
		t.Errorf("names %v", got)
	}
	m, _ := s.Get("my_ledger")
	if m.Family != FamilyNatural || m.Turns() != 2 {
		t.Errorf("added %+v", m)
	}
	msgs, err = m.Build(Input{Domain: DomainNatural, Duration: 7.5, Frames: shuffledFrames(2, 3)})
	if err != nil || msgs[0].Parts[0].Text != "Be brief." || msgs[1].Parts[0].Text != Questions()[DomainNatural].Text+" 2 frames, 7.5 s." {
		t.Errorf("added built %v %+v", err, msgs)
	}
	// The default set is untouched.
	if d0, _ := Default().Get("direct"); d0.User == d.User {
		t.Errorf("Load changed the built-ins")
	}
	// An empty file adds nothing.
	e, err := ParseYAML(nil)
	if err != nil || !slices.Equal(e.Names(), allNames) {
		t.Errorf("empty file: %v %v", err, e)
	}
}

func TestBadTemplates(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"broken:\n  user: \"{{.Question\"\n", `template "broken" user: template: broken.user:1: unclosed action`},
		{"typo:\n  user: \"{{.Qestion}}\"\n", `template "typo" user: template: typo.user:1:2: executing "typo.user" at <.Qestion>: can't evaluate field Qestion`},
		{"fu:\n  user: x\n  follow_up: \"{{if}}\"\n", `template "fu" follow_up:`},
		{"sys:\n  user: x\n  system: \"{{end}}\"\n", `template "sys" system:`},
		{"empty:\n  family: natural\n", `template "empty": user text is empty`},
		{"blank:\n  user: \"{{if false}}x{{end}}\"\n", `template "blank": user text renders empty for domain blinking`},
		{"fam:\n  user: x\n  family: cartoon\n", `template "fam": family "cartoon" (want synthetic, natural, objects)`},
		{"has space:\n  user: x\n", `template name "has space"`},
		{"x:\n  user: x\n  sytem: y\n", "field sytem not found"},
		{"- a\n- b\n", "cannot unmarshal"},
	} {
		_, err := ParseYAML([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.doc, err, c.want)
		}
	}
	// Two broken templates: both named.
	_, err := ParseYAML([]byte("a:\n  user: \"{{\"\nb:\n  user: \"\"\n"))
	if err == nil || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("two errors: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("x:\n  user: \"{{.Nope}}\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad file: %v", err)
	}
}

func TestGetUnknown(t *testing.T) {
	_, err := Default().Get("chain_of_thought")
	want := `unknown prompt "chain_of_thought" (known: ` + strings.Join(allNames, ", ") + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestHash(t *testing.T) {
	tm, _ := Default().Get("structured_trace")
	frames := shuffledFrames(5, 9)
	in := Input{Domain: DomainBounceBall, Duration: 24, Frames: frames, Detail: "high"}
	build := func(in Input) string {
		msgs, err := tm.Build(in)
		if err != nil {
			t.Fatal(err)
		}
		return Hash(msgs)
	}
	h := build(in)
	if len(h) != 64 || h != build(in) {
		t.Fatalf("hash %q not stable", h)
	}
	// Same lengths, other bytes: the image bytes are not hashed.
	same := in
	same.Frames = slices.Clone(frames)
	same.Frames[2].DataURL = strings.Repeat("B", len(frames[2].DataURL))
	same.Frames[2].DataURL = "data:image/jpeg;base64," + same.Frames[2].DataURL[len("data:image/jpeg;base64,"):]
	if build(same) != h {
		t.Errorf("hash depends on image bytes")
	}
	changed := map[string]Input{}
	c := in
	c.Frames = slices.Clone(frames)
	c.Frames[1].T += 0.001
	changed["time"] = c
	c = in
	c.Frames = slices.Clone(frames)
	c.Frames[0], c.Frames[1] = c.Frames[1], c.Frames[0]
	c.Frames[0].Position, c.Frames[1].Position = 0, 1
	changed["order"] = c
	c = in
	c.Detail = "low"
	changed["detail"] = c
	c = in
	c.Frames = slices.Clone(frames)
	c.Frames[3].DataURL += "A"
	changed["image length"] = c
	c = in
	c.Frames = slices.Clone(frames)
	c.Frames[3].DataURL = strings.Replace(c.Frames[3].DataURL, "jpeg", "png", 1) + "AA"
	changed["media type"] = c
	c = in
	c.Duration = 23
	changed["duration (text)"] = c
	c = in
	c.Domain = DomainBlinking
	changed["question"] = c
	for what, in := range changed {
		if build(in) == h {
			t.Errorf("hash insensitive to %s", what)
		}
	}
	d, _ := Default().Get("direct")
	msgs, _ := d.Build(in)
	if Hash(msgs) == h {
		t.Errorf("hash insensitive to the template")
	}
	// Role and text boundaries are part of the encoding.
	a := []chat.Message{{Role: "user", Parts: []chat.Part{chat.Text("ab"), chat.Text("c")}}}
	b := []chat.Message{{Role: "user", Parts: []chat.Part{chat.Text("a"), chat.Text("bc")}}}
	sys := []chat.Message{{Role: "system", Parts: []chat.Part{chat.Text("ab"), chat.Text("c")}}}
	if Hash(a) == Hash(b) || Hash(a) == Hash(sys) || Hash(nil) == Hash(a) {
		t.Errorf("hash encoding is ambiguous")
	}
}

// TestObjectsQuestion: CountVideoBench's question for every class, word
// for word (§5.1: "How many [color] [shape]s are in this video?").
func TestObjectsQuestion(t *testing.T) {
	for class, want := range map[string]string{
		"cube-red":      "How many red cubes are in this video?",
		"cube-blue":     "How many blue cubes are in this video?",
		"sphere-green":  "How many green spheres are in this video?",
		"sphere-yellow": "How many yellow spheres are in this video?",
		"sphere-purple": "How many purple spheres are in this video?",
	} {
		q, err := QuestionFor(DomainObjects, class)
		if err != nil || q.Text != want || q.EventNoun != "object" || q.Attributes == "" {
			t.Errorf("%s: %+v, %v; want %q", class, q, err, want)
		}
	}
	if Questions()[DomainObjects].Text != "How many red cubes are in this video?" {
		t.Errorf("sample objects question %q", Questions()[DomainObjects].Text)
	}
	if q, err := QuestionFor(DomainBlinking, ""); err != nil || q != Questions()[DomainBlinking] {
		t.Errorf("blinking: %+v %v", q, err)
	}
	if err := CheckClass("sphere-blue"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "cube", "-red", "cube-", "Cube-red", "cube-red-x", "cube_red"} {
		if err := CheckClass(bad); err == nil {
			t.Errorf("class %q accepted", bad)
		}
	}
}

// TestCountVideoBenchRequest: the countvideobench prompt on ten uniform
// frames of a 5 s objects clip sends the question, then a label and an
// image per frame, nothing else; the class changes the hash.
func TestCountVideoBenchRequest(t *testing.T) {
	tm, err := Default().Get("countvideobench")
	if err != nil {
		t.Fatal(err)
	}
	if tm.Family != FamilyObjects || tm.System != "" || tm.Turns() != 1 {
		t.Fatalf("countvideobench: %+v", tm)
	}
	var frames []Frame
	for j := range 10 {
		frames = append(frames, Frame{Position: j, T: float64(j) * 0.5, DataURL: "data:image/jpeg;base64,AAAA"})
	}
	in := Input{Domain: DomainObjects, Class: "sphere-yellow", Duration: 5, Frames: frames}
	msgs, err := tm.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Role != chat.RoleUser || len(msgs[0].Parts) != 21 {
		t.Fatalf("request %+v", msgs)
	}
	p := msgs[0].Parts
	if p[0].Text != "How many yellow spheres are in this video?" {
		t.Errorf("text %q", p[0].Text)
	}
	if p[1].Text != chat.FrameLabel(0, 10, 0) || p[19].Text != chat.FrameLabel(9, 10, 4.5) || p[20].Type != chat.TypeImage {
		t.Errorf("frame parts %q … %q", p[1].Text, p[19].Text)
	}
	other := in
	other.Class = "sphere-green"
	msgs2, err := tm.Build(other)
	if err != nil {
		t.Fatal(err)
	}
	if Hash(msgs) == Hash(msgs2) {
		t.Errorf("hash insensitive to the class")
	}
	// Every other template asks the objects question too.
	for _, name := range Default().Names() {
		tm, _ := Default().Get(name)
		msgs, err := tm.Build(in)
		if err != nil || !strings.Contains(msgs[len(msgs)-1].Parts[0].Text, "How many yellow spheres are in this video?") {
			t.Errorf("%s: %v", name, err)
		}
		if fu, ok := tm.FollowUpMessage(in); ok != (tm.Turns() == 2) || ok && !strings.Contains(fu.Parts[0].Text, "object") {
			t.Errorf("%s: follow-up %+v %v", name, fu, ok)
		}
	}
	if _, ok := tm.FollowUpMessage(Input{Domain: DomainObjects, Duration: 5}); ok {
		t.Errorf("follow-up without a class")
	}
}

// TestCountVideoBenchReplies: the free-form sentences CVB reports
// ("Responses are typically short natural-language sentences containing
// the predicted count", §5.1) parse to the count; refusals and "many"
// are non-responses (nil).
func TestCountVideoBenchReplies(t *testing.T) {
	for reply, want := range map[string]int{
		"There are 12 red cubes in this video.":               12,
		"I count twenty-one yellow spheres.":                  21,
		"There are 7 red cubes visible across the 10 frames.": 7,
		"**Answer:** 38": 38,
		"Based on the frames, the video shows 49 purple spheres in total.": 49,
	} {
		res := parse.Parse(reply, DomainObjects)
		if res.Count == nil || *res.Count != want {
			t.Errorf("%q: count %v, want %d", reply, res.Count, want)
		}
	}
	for _, reply := range []string{"There are many red cubes in this video.", "I'm sorry, I cannot determine how many spheres there are."} {
		if res := parse.Parse(reply, DomainObjects); res.Count != nil {
			t.Errorf("%q: count %d, want none", reply, *res.Count)
		}
	}
}
