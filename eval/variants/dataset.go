package variants

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fsutil"
)

// DefaultPrompt is the prompt of dataset.jsonl without DatasetOptions.Prompts.
const DefaultPrompt = "structured_trace"

// TracesDir holds the trace copies dataset rows of frame variants point to.
const TracesDir = "traces"

// Row is one line of dataset.jsonl: one clip × policy × prompt, the
// request as `tracegrid eval` would send it, and the answer. Paths are
// relative to the directory of dataset.jsonl (the output directory).
// Only Messages (or System, Text, FrameLabels and the images) go to a
// model; FrameTimes, Trace and Answer are for scoring.
type Row struct {
	Index    int     `json:"index"` // 0-based line number
	ID       string  `json:"id"`    // "<policy dir>/<clip>/<prompt>"
	Clip     string  `json:"clip"`
	Domain   string  `json:"domain"`
	Class    string  `json:"class,omitempty"` // objects clips
	N        int     `json:"n"`
	F        float64 `json:"f"`
	Seed     int     `json:"seed"`
	Duration float64 `json:"duration"`
	Policy   string  `json:"policy"`
	As       string  `json:"as"`
	Prompt   string  `json:"prompt"`
	Labels   string  `json:"labels,omitempty"` // frames: time, position or none
	// Frames are the image files in the order shown; FrameTimes their
	// sample times (for scoring "frame k" replies; never shown).
	Frames     []string  `json:"frames,omitempty"`
	FrameTimes []float64 `json:"frame_times,omitempty"`
	Video      string    `json:"video,omitempty"`
	Trace      string    `json:"trace"`
	// System is the system message ("" for none); Text the instructions
	// of the user turn, sent before the frames; FrameLabels the text part
	// before each frame ("" under labels none); VideoLabel the text part
	// before a video.
	System      string   `json:"system,omitempty"`
	Text        string   `json:"text"`
	FrameLabels []string `json:"frame_labels,omitempty"`
	VideoLabel  string   `json:"video_label,omitempty"`
	// Messages is the whole request in order, images and videos as file
	// paths (chat.Part.URL).
	Messages []chat.Message `json:"messages"`
	// PromptHash is prompts.Hash of Messages: ingest stores it with the
	// trial.
	PromptHash string `json:"prompt_hash"`
	Bytes      int64  `json:"bytes"` // of the images or the video
	Answer     int    `json:"answer"`
}

func (d *DatasetOptions) check() error {
	if d.Set == nil {
		d.Set = prompts.Default()
	}
	if len(d.Prompts) == 0 {
		d.Prompts = []string{DefaultPrompt}
	}
	if d.Labels != "" {
		if _, err := chat.ParseLabels(string(d.Labels)); err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	var ps []string
	for _, name := range d.Prompts {
		if slices.Contains(ps, name) {
			continue
		}
		t, err := d.Set.Get(name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		if t.Turns() != 1 {
			return fmt.Errorf("%w: prompt %s takes %d turns (its second asks about the model's first reply); a dataset row is one request, so other harnesses can run only single-turn prompts", ErrInput, name, t.Turns())
		}
		ps = append(ps, name)
	}
	d.Prompts = ps
	return nil
}

// labelsFor is the label mode of a policy's rows: the one given, or the
// policy's default in a study (study.DefaultLabels).
func (d *DatasetOptions) labelsFor(p sampling.Policy) chat.Labels {
	if d.Labels != "" {
		return d.Labels
	}
	return study.DefaultLabels(p.String())
}

// writeDataset writes dataset.jsonl atomically from the variants on disk
// (this run's clips × policies × prompts) and returns its row count.
// A variant without frames — keyframes on an N = 0 control, or on an
// objects clip — has no row: eval records that condition as not
// applicable and never sends it, and a row would let another harness
// score a text-only guess as a trial of it.
func writeDataset(opt Options, jobs []*clipJob) (int, error) {
	d := opt.Dataset
	var rows []Row
	for _, j := range jobs {
		tracePath := ""
		for _, p := range opt.Policies {
			if j.tr.IsObjects() && study.EventPolicy(p) {
				continue
			}
			rec := opt.record(j, p)
			base := Row{Clip: j.entry.ID, Domain: j.tr.Domain, Class: j.tr.Class, N: j.tr.N, F: j.tr.F, Seed: j.tr.Seed,
				Duration: j.clip.P.Duration, Policy: rec.Policy, As: rec.As, Answer: j.tr.N}
			in := prompts.Input{Domain: j.tr.Domain, Class: j.tr.Class, Duration: j.clip.P.Duration}
			if rec.As == AsVideo {
				base.Video = rec.Path
				base.Trace = rec.Path[:len(rec.Path)-len(".mp4")] + ".trace.json"
				fi, err := os.Stat(filepath.Join(opt.Out, filepath.FromSlash(rec.Path)))
				if err != nil {
					return 0, fmt.Errorf("%w: dataset: %w", ErrOutput, err)
				}
				base.Bytes = fi.Size()
				in.VideoURL = rec.Path
			} else {
				idx, err := readIndex(filepath.Join(opt.Out, filepath.FromSlash(rec.Path), frames.IndexName))
				if err != nil {
					return 0, fmt.Errorf("%w: dataset: %w", ErrOutput, err)
				}
				if len(idx.Frames) == 0 {
					continue // not applicable, as in eval
				}
				if tracePath == "" {
					if tracePath, err = writeTraceCopy(opt.Out, j); err != nil {
						return 0, err
					}
				}
				base.Trace = tracePath
				labels := d.labelsFor(p)
				base.Labels = string(labels)
				in.Labels = labels
				for _, f := range idx.Frames {
					path := rec.Path + "/" + f.File
					fi, err := os.Stat(filepath.Join(opt.Out, filepath.FromSlash(path)))
					if err != nil {
						return 0, fmt.Errorf("%w: dataset: %w", ErrOutput, err)
					}
					base.Bytes += fi.Size()
					base.Frames = append(base.Frames, path)
					base.FrameTimes = append(base.FrameTimes, f.T)
					in.Frames = append(in.Frames, prompts.Frame{Position: f.Position, T: f.T, DataURL: path})
				}
			}
			for _, name := range d.Prompts {
				t, err := d.Set.Get(name)
				if err != nil {
					return 0, fmt.Errorf("%w: %w", ErrInput, err)
				}
				msgs, err := t.Build(in)
				if err != nil {
					return 0, fmt.Errorf("%w: dataset: clip %s, policy %s: %w", ErrInput, j.entry.ID, rec.Policy, err)
				}
				r := base
				r.Index = len(rows)
				r.ID = PolicyDir(rec.Policy) + "/" + j.entry.ID + "/" + name
				r.Prompt = name
				r.Messages = msgs
				r.PromptHash = prompts.Hash(msgs)
				fillText(&r, msgs)
				rows = append(rows, r)
			}
		}
	}
	err := fsutil.WriteFileAtomic(filepath.Join(opt.Out, DatasetName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("%w: writing %s: %w", ErrOutput, DatasetName, err)
	}
	return len(rows), nil
}

// fillText copies the text parts of the built request into the row's
// flat fields: the system message, the instructions, the label before
// each frame and the video label.
func fillText(r *Row, msgs []chat.Message) {
	for _, m := range msgs {
		if m.Role == chat.RoleSystem {
			for _, p := range m.Parts {
				r.System += p.Text
			}
			continue
		}
		if m.Role != chat.RoleUser {
			continue
		}
		pending := ""
		for i, p := range m.Parts {
			switch p.Type {
			case chat.TypeText:
				if i == 0 {
					r.Text = p.Text
				} else {
					pending = p.Text
				}
			case chat.TypeImage:
				r.FrameLabels = append(r.FrameLabels, pending)
				pending = ""
			case chat.TypeVideo:
				r.VideoLabel = pending
				pending = ""
			}
		}
	}
	if len(r.FrameLabels) > 0 && !slices.ContainsFunc(r.FrameLabels, func(s string) bool { return s != "" }) {
		r.FrameLabels = nil // labels none
	}
}

// writeTraceCopy writes the clip's trace into traces/ (when it is not
// already there, byte for byte) and returns its path relative to out.
func writeTraceCopy(out string, j *clipJob) (string, error) {
	rel := TracesDir + "/" + j.entry.ID + ".trace.json"
	path := filepath.Join(out, filepath.FromSlash(rel))
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, j.trace) {
		return rel, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if err := fsutil.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(j.trace); return err }); err != nil {
		return "", fmt.Errorf("%w: writing %s: %w", ErrOutput, path, err)
	}
	return rel, nil
}

// readIndex reads a frames.json.
func readIndex(path string) (frames.Index, error) {
	var idx frames.Index
	b, err := os.ReadFile(path)
	if err != nil {
		return idx, err
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return idx, fmt.Errorf("%s: %w", path, err)
	}
	if idx.Frames == nil {
		return idx, errors.New(path + ": no frames list")
	}
	return idx, nil
}
