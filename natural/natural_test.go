package natural_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/natural"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// The fixtures: three of our blinking clips (N = 1, 2, 3 at F = 1 Hz,
// 5 s, 160×96 at 30 fps) rendered on the GPU and re-encoded with libav at
// another frame rate and size, 25 fps and 320×240, as natural videos come:
// videos/<id>.mp4, with each clip's trace.
const (
	srcFPS          = 25
	srcW, srcH      = 320, 240
	fixtureDuration = 5
)

var (
	fixtureDir string                  // holds videos/
	traces     map[string]*trace.Trace // scene traces by video file name
	names      []string                // video file names, by N
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natural tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	r, err := gpu.NewRenderer()
	if err != nil {
		return 0, fmt.Errorf("the fixtures are rendered (EGL; llvmpipe is enough): %w", err)
	}
	defer r.Close()
	dir, err := os.MkdirTemp("", "natural")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	spec, err := pipeline.ParseSpec([]byte(fmt.Sprintf("grid: default\ndomains: [blinking]\ncounts: [1, 2, 3]\nfrequencies: [1.0]\nseeds: 1\nduration: %d\nwidth: 160\nheight: 96\n", fixtureDuration)))
	if err != nil {
		return 0, err
	}
	rendered := filepath.Join(dir, "rendered")
	if _, err := pipeline.Render(context.Background(), spec, pipeline.Options{Out: rendered, Renderer: r, Workers: 1}); err != nil {
		return 0, err
	}
	entries, err := pipeline.LoadManifest(filepath.Join(rendered, pipeline.ManifestName))
	if err != nil {
		return 0, err
	}
	fixtureDir = dir
	videos := filepath.Join(dir, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		return 0, err
	}
	traces = map[string]*trace.Trace{}
	for _, e := range entries {
		tr, err := trace.Load(filepath.Join(rendered, e.Trace))
		if err != nil {
			return 0, err
		}
		name := e.ID + ".mp4"
		if err := reencode(filepath.Join(rendered, e.Video), filepath.Join(videos, name), srcFPS, srcW, srcH); err != nil {
			return 0, err
		}
		traces[name] = tr
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return traces[a].N - traces[b].N })
	return m.Run(), nil
}

// reencode decodes src at fps frames per second, scaled to w×h, and
// writes an H.264 MP4 of those frames (encode's writer).
func reencode(src, dst string, fps, w, h int) error {
	v, err := encode.OpenVideo(src)
	if err != nil {
		return err
	}
	defer v.Close()
	n := int(math.Round(v.Info().Duration * float64(fps)))
	wr, err := encode.Create(dst, encode.Options{Width: w, Height: h, FPS: fps, Preset: "ultrafast", CRF: 18, GOP: fps})
	if err != nil {
		return err
	}
	defer wr.Abort()
	img := encode.Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
	for k := range n {
		if err := v.FrameAt(float64(k)/float64(fps), img); err != nil {
			return err
		}
		if err := wr.WriteRGBA(img); err != nil {
			return err
		}
	}
	return wr.Close()
}

// bounds writes each event of a scene trace as a repetition in frames of
// the 25 fps re-encode: from half a period before the event to the event,
// (t_i − 1/(2F), t_i), each time rounded to the nearest frame.
func bounds(tr *trace.Trace) []int {
	var out []int
	for _, e := range tr.Events {
		out = append(out, int(math.Round((e.T-1/(2*tr.F))*srcFPS)), int(math.Round(e.T*srcFPS)))
	}
	return out
}

// row is one annotation row to write.
type row struct {
	action, name string
	count        string
	bounds       []int
}

// writeRepCount writes rows in the RepCount-A layout, with pandas'
// unnamed index column and float-formatted boundary cells when pandas is
// true, padding every row to the widest with empty cells.
func writeRepCount(t *testing.T, path string, pandas bool, rows []row) {
	t.Helper()
	width := 0
	for _, r := range rows {
		width = max(width, len(r.bounds))
	}
	var b strings.Builder
	if pandas {
		b.WriteString(",")
	}
	b.WriteString("type,name,count")
	for i := range width {
		fmt.Fprintf(&b, ",L%d", i+1)
	}
	b.WriteString("\n")
	for i, r := range rows {
		if pandas {
			fmt.Fprintf(&b, "%d,", i)
		}
		fmt.Fprintf(&b, "%s,%s,%s", r.action, r.name, r.count)
		for j := range width {
			b.WriteString(",")
			if j < len(r.bounds) {
				if pandas {
					fmt.Fprintf(&b, "%d.0", r.bounds[j])
				} else {
					b.WriteString(strconv.Itoa(r.bounds[j]))
				}
			}
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fromTraces is an annotation row per fixture video, from its scene trace.
func fromTraces() []row {
	var rows []row
	for _, name := range names {
		tr := traces[name]
		rows = append(rows, row{action: "blink", name: name, count: strconv.Itoa(tr.N), bounds: bounds(tr)})
	}
	return rows
}

// TestImportReproducesTraces: the three re-encoded clips with a RepCount-A
// table written from their traces import as natural clips whose traces
// put every repetition's event within one source frame (1/25 s) of the
// scene's event (end), of half a period before it (start) or of a quarter
// period before it (middle); the manifest reads back strictly, points at
// the videos relative to itself, and records what libav probed.
func TestImportReproducesTraces(t *testing.T) {
	for _, at := range []string{"", trace.EventAtStart, trace.EventAtMiddle} {
		t.Run("event-at "+at, func(t *testing.T) {
			tmp := t.TempDir()
			ann := filepath.Join(tmp, "test.csv")
			writeRepCount(t, ann, true, fromTraces())
			out := filepath.Join(tmp, "out")
			videos := relTo(t, filepath.Join(fixtureDir, "videos"))
			res, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: out, EventAt: at})
			if err != nil {
				t.Fatal(err)
			}
			if res.Imported != 3 || res.Traces != 3 || len(res.Problems) != 0 || res.Layout != natural.LayoutRepCount {
				t.Fatalf("result %+v", res)
			}
			manifest := filepath.Join(out, pipeline.ManifestName)
			entries, err := pipeline.LoadManifest(manifest)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range entries {
				name := names[i]
				want := traces[name]
				if e.ID != strings.TrimSuffix(name, ".mp4") || e.Domain != "natural" || e.N != want.N || !e.External || e.F != 0 ||
					e.Render.FPS != srcFPS || e.Render.Width != srcW || e.Render.Height != srcH || e.Frames != srcFPS*fixtureDuration ||
					math.Abs(e.Render.Duration-fixtureDuration) > 1e-9 || e.Natural.FrameRate != srcFPS || e.Natural.Rotation != 0 ||
					e.Natural.Source != name || e.Natural.Action != "blink" || e.Trace != "clips/"+e.ID+".trace.json" {
					t.Errorf("entry %+v %+v", e, e.Natural)
				}
				if wantVideo := "../../" + filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(videos)), "videos", name)); !strings.HasSuffix(e.Video, "videos/"+name) || filepath.IsAbs(e.Video) {
					t.Errorf("video path %q, want a path relative to the manifest like %q", e.Video, wantVideo)
				}
				c, err := natural.Load(manifest, e)
				if err != nil {
					t.Fatal(err)
				}
				got := c.Trace
				if got.N != want.N || len(got.Events) != want.N || got.Natural.EventAt != or(at, "end") {
					t.Fatalf("%s: trace %+v", e.ID, got)
				}
				for k, ev := range got.Events {
					truth := want.Events[k].T
					switch at {
					case trace.EventAtStart:
						truth -= 1 / (2 * want.F)
					case trace.EventAtMiddle:
						truth -= 1 / (4 * want.F)
					}
					if math.Abs(ev.T-truth) > 1.0/srcFPS+1e-9 {
						t.Errorf("%s: repetition %d's event at %v s, the scene's %v s: more than one source frame apart", e.ID, k+1, ev.T, truth)
					}
				}
				if n, _ := got.Replay(fixtureDuration); n != want.N {
					t.Errorf("%s: replay gives %d", e.ID, n)
				}
			}
		})
	}
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// relTo is path relative to the working directory, so that Import gets a
// relative videos folder.
func relTo(t *testing.T, path string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// TestImportPlainTable: a name,count table gives entries without traces;
// their count trace validates and has no events; an absolute videos
// folder gives absolute video paths.
func TestImportPlainTable(t *testing.T) {
	tmp := t.TempDir()
	ann := filepath.Join(tmp, "counts.csv")
	var b strings.Builder
	b.WriteString("name,count\n")
	for _, name := range names {
		fmt.Fprintf(&b, "%s,%d\n", name, traces[name].N)
	}
	if err := os.WriteFile(ann, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	res, err := natural.Import(context.Background(), natural.Options{Videos: filepath.Join(fixtureDir, "videos"), Annotations: ann, Out: out})
	if err != nil || res.Imported != 3 || res.Traces != 0 || res.Layout != natural.LayoutPlain {
		t.Fatalf("%+v %v", res, err)
	}
	manifest := filepath.Join(out, pipeline.ManifestName)
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Trace != "" || !filepath.IsAbs(e.Video) || e.Natural.Action != "" {
			t.Errorf("entry %+v", e)
		}
		c, err := natural.Load(manifest, e)
		if err != nil {
			t.Fatal(err)
		}
		if c.Trace.N != e.N || len(c.Trace.Events) != 0 || c.Trace.Natural.Repetitions != nil || c.Video != filepath.FromSlash(e.Video) {
			t.Errorf("%s: %+v", e.ID, c.Trace)
		}
	}
	if des, _ := os.ReadDir(filepath.Join(out, "clips")); len(des) != 0 {
		t.Errorf("%d trace files for a table without boundaries", len(des))
	}
}

// TestImportBadInput: every kind of bad row or video is reported on its
// own with a message that says what is wrong; the rest is imported; with
// --strict nothing is written; with nothing importable the import fails.
func TestImportBadInput(t *testing.T) {
	tmp := t.TempDir()
	videos := filepath.Join(tmp, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	good := names[1] // N = 2
	src := filepath.Join(fixtureDir, "videos", good)
	link := func(name string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(videos, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"good.mp4", "count.mp4", "past.mp4", "backwards.mp4", "odd.mp4", "gap.mp4", "unrowed.mp4"} {
		link(n)
	}
	b, _ := os.ReadFile(src)
	if err := os.WriteFile(filepath.Join(videos, "truncated.mp4"), b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(videos, "notes.mp4"), []byte("meeting notes, not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Variable rate: 25 fps for 2 s, then 12.5 fps.
	if err := encode.Remux(filepath.Join(videos, "vfr.mp4"), src, encode.RemuxOptions{Retime: func(t float64) float64 {
		if t <= 2 {
			return t
		}
		return 2 + 2*(t-2)
	}}); err != nil {
		t.Fatal(err)
	}
	if err := encode.Remux(filepath.Join(videos, "portrait.mp4"), src, encode.RemuxOptions{Rotation: 90}); err != nil {
		t.Fatal(err)
	}
	bs := bounds(traces[good]) // two repetitions inside 125 frames
	rows := []row{
		{"blink", "good.mp4", "2", bs},
		{"blink", "missing.mp4", "2", bs},
		{"blink", "count.mp4", "3", bs},
		{"blink", "past.mp4", "2", []int{10, 20, 30, 125}},
		{"blink", "backwards.mp4", "2", []int{10, 40, 30, 60}},
		{"blink", "odd.mp4", "2", []int{10, 40, 50}},
		{"blink", "truncated.mp4", "2", bs},
		{"blink", "notes.mp4", "2", bs},
		{"blink", "vfr.mp4", "2", bs},
		{"blink", "portrait.mp4", "2", bs},
		{"blink", "good.mp4", "2", bs},
		{"blink", "../etc/passwd", "2", nil},
		{"blink", "gap.mp4", "4", nil}, // a hole in the cells: below
		{"blink", "countonly.mp4", "seven", nil},
	}
	ann := filepath.Join(tmp, "test.csv")
	writeRepCount(t, ann, false, rows)
	// gap.mp4's row (line 14): L1, L2 filled, L3 empty, L4 filled.
	data, _ := os.ReadFile(ann)
	lines := strings.Split(string(data), "\n")
	lines[13] = "blink,gap.mp4,2,10,20,,40"
	if err := os.WriteFile(ann, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	res, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 2 || res.Traces != 2 {
		t.Errorf("imported %d (%d traces), want good.mp4 and portrait.mp4", res.Imported, res.Traces)
	}
	want := []string{
		"line 3 (missing.mp4): no file missing.mp4 in the videos folder",
		"line 4 (count.mp4): count 3 but 2 boundary pairs (one pair per repetition)",
		"line 5 (past.mp4): repetition 2: frames 30–125 go past the video's last frame 124 (it has 125 frames)",
		"line 6 (backwards.mp4): boundaries go backwards at L3 = 30 after L2 = 40 (repetition 2)",
		"line 7 (odd.mp4): 3 boundary cells: they come in pairs (start, end), one pair per repetition",
		"line 8 (truncated.mp4): unreadable or truncated video",
		"line 9 (notes.mp4): not a video this program reads (MP4/MOV or WebM/Matroska)",
		"line 10 (vfr.mp4): variable frame rate (its frames are 0.04 to 0.08 s apart",
		"line 12 (good.mp4): the video is already annotated on line 2",
		`line 13 (../etc/passwd): name "../etc/passwd" is not a file name`,
		"line 14 (gap.mp4): L3 is empty but L4 is not",
		`line 15 (countonly.mp4): count "seven" is not a whole number ≥ 0`,
		"unrowed.mp4: a video in the folder without an annotation row",
	}
	if len(res.Problems) != len(want) {
		t.Errorf("%d problems, want %d", len(res.Problems), len(want))
	}
	for i, p := range res.Problems {
		t.Log(p)
		if i < len(want) && !strings.HasPrefix(p.String(), want[i]) {
			t.Errorf("problem %d: %q\n want prefix %q", i, p, want[i])
		}
	}
	entries, err := pipeline.LoadManifest(filepath.Join(out, pipeline.ManifestName))
	if err != nil || len(entries) != 2 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	p := entries[1]
	if p.ID != "portrait" || p.Natural.Rotation != 90 || p.Render.Width != srcH || p.Render.Height != srcW {
		t.Errorf("the portrait video: %+v %+v (want rotation 90, displayed %dx%d)", p, p.Natural, srcH, srcW)
	}

	// --strict: any bad row fails and nothing is written.
	strictOut := filepath.Join(tmp, "strict")
	res, err = natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: strictOut, Strict: true})
	if !errors.Is(err, natural.ErrInput) || len(res.Problems) != len(want) || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("strict: %v, %d problems", err, len(res.Problems))
	}
	if _, err := os.Stat(strictOut); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("strict import wrote %s (%v)", strictOut, err)
	}
	// Nothing importable.
	writeRepCount(t, ann, false, rows[1:2])
	if _, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: filepath.Join(tmp, "none")}); !errors.Is(err, natural.ErrInput) ||
		!strings.Contains(err.Error(), "nothing could be imported") {
		t.Errorf("nothing importable: %v", err)
	}
	// A table of another layout.
	if err := os.WriteFile(ann, []byte("video,reps\na.mp4,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: filepath.Join(tmp, "none")}); !errors.Is(err, natural.ErrInput) ||
		!strings.Contains(err.Error(), "type,name,count,L1,L2") {
		t.Errorf("unknown layout: %v", err)
	}
	// A rendered clip's directory is not an import's.
	writeRepCount(t, ann, false, rows[:1])
	render := filepath.Join(tmp, "render")
	if err := os.MkdirAll(render, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(render, pipeline.ManifestName), []byte(`{"id":"bounce_ball_N01_F1.0_s00","domain":"bounce_ball"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: render}); !errors.Is(err, natural.ErrInput) ||
		!strings.Contains(err.Error(), "directory of its own") {
		t.Errorf("into a render directory: %v", err)
	}
}

// TestTableFPS: a table's fps column must agree with the video's rate
// (the frame indices count that encoding's frames).
func TestTableFPS(t *testing.T) {
	tmp := t.TempDir()
	ann := filepath.Join(tmp, "a.csv")
	var b strings.Builder
	b.WriteString(",type,name,count,L1,L2,fps\n")
	fmt.Fprintf(&b, "0,x,%s,1,10,25,25.0\n1,x,%s,1,10,25,30\n", names[0], names[1])
	if err := os.WriteFile(ann, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := natural.Import(context.Background(), natural.Options{Videos: filepath.Join(fixtureDir, "videos"), Annotations: ann, Out: filepath.Join(tmp, "out")})
	if err != nil || res.Imported != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if len(res.Problems) != 2 || res.Problems[0].String() != "line 3 ("+names[1]+"): the table gives 30 fps, the video is 25 fps: its frame indices count the frames of another encoding" {
		t.Errorf("problems %v", res.Problems)
	}
}

// TestReimportAndChangedVideo: importing again replaces the manifest and
// removes the trace files it no longer names; a video changed after the
// import is refused when the clip is loaded.
func TestReimportAndChangedVideo(t *testing.T) {
	tmp := t.TempDir()
	videos := filepath.Join(tmp, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(fixtureDir, "videos", n))
		if err := os.WriteFile(filepath.Join(videos, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ann := filepath.Join(tmp, "a.csv")
	writeRepCount(t, ann, false, fromTraces())
	out := filepath.Join(tmp, "out")
	if _, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: out}); err != nil {
		t.Fatal(err)
	}
	rows := fromTraces()
	rows[0].bounds = nil // the first video's count alone
	writeRepCount(t, ann, false, rows)
	if _, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: out}); err != nil {
		t.Fatal(err)
	}
	first := strings.TrimSuffix(names[0], ".mp4")
	if _, err := os.Stat(filepath.Join(out, "clips", first+".trace.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous import's trace of %s is still there (%v)", first, err)
	}
	manifest := filepath.Join(out, pipeline.ManifestName)
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil || len(entries) != 3 || entries[0].Trace != "" || entries[1].Trace == "" {
		t.Fatalf("%+v %v", entries, err)
	}
	f, err := os.OpenFile(filepath.Join(videos, names[1]), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	if _, err := natural.Load(manifest, entries[1]); !errors.Is(err, pipeline.ErrManifest) || !strings.Contains(err.Error(), "changed since it was imported") {
		t.Errorf("changed video: %v", err)
	}
	if _, _, err := pipeline.LoadEntry(manifest, entries[0]); !errors.Is(err, pipeline.ErrNoScene) {
		t.Errorf("LoadEntry on an imported video: %v", err)
	}
}

// TestSafeIDs: ids are file names made safe, unique without regard to
// case.
func TestSafeIDs(t *testing.T) {
	for in, want := range map[string]string{"stu1_10.mp4": "stu1_10", "a b (1).mkv": "a_b__1_", "..x.mp4": "x", "été.mp4": "_t_", ".mp4": "video"} {
		if got := natural.SafeID(in); got != want {
			t.Errorf("SafeID(%q) = %q, want %q", in, got, want)
		}
	}
	tmp := t.TempDir()
	videos := filepath.Join(tmp, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(fixtureDir, "videos", names[0]))
	for _, n := range []string{"a b.mp4", "a_b.mp4", "A_B.mov"} {
		if err := os.WriteFile(filepath.Join(videos, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ann := filepath.Join(tmp, "c.csv")
	if err := os.WriteFile(ann, []byte("name,count\na b.mp4,1\na_b.mp4,1\nA_B.mov,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: filepath.Join(tmp, "out")}); err != nil {
		t.Fatal(err)
	}
	entries, err := pipeline.LoadManifest(filepath.Join(tmp, "out", pipeline.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{"a_b", "a_b_2", "A_B_3"}) {
		t.Errorf("ids %v", ids)
	}
}
