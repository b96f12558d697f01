// Package prompts holds the prompt templates of an evaluation as data and
// builds the provider-neutral request (package chat) for one trial.
//
// A template is Go text/template text for a system message (optional), a
// first user turn and, for multi-turn verification, a second user turn.
// The built-in templates live in builtin.yaml (embedded), in the same
// format as a user's templates file, so a researcher reads and overrides
// exactly what is sent. The wording is our own (low-frequency-trap §6 and
// Appendix C name the prompt conditions; we do not reuse its text).
//
// Built-ins: the synthetic-domain conditions of low-frequency-trap §6 —
// direct, structured_trace, multi_turn_verification, thinking,
// role_prompting — the natural-video conditions of §7 — zero_shot,
// natural_direct (the paper's natural "direct"; the name direct is taken
// by the synthetic one) and cot — and CountVideoBench's single prompt,
// countvideobench (§5.1: the question alone). Every template works with
// every domain: the question comes from the clip's domain (Questions) and,
// for the objects domain, its class (QuestionFor); Family only groups
// templates (listing, default output-token estimates).
//
// Every built-in but countvideobench (the benchmark's bare question) asks
// for the final count as \boxed{N}, the first rule of package parse;
// structured_trace and multi_turn_verification ask for one ledger line per
// event, "mm:ss.s — <attribute> — running count k", whose times and
// attributes package parse reads. Times refer to the frame
// labels (chat.FrameLabel, placed before every image) or, for a native
// video, to the time since the video's start. Under the label modes
// position and none (Input.Labels, chat.Labels) the model is told no
// frame's time, and the built-in templates state none either: their
// ledgers name frames ("frame f — … — running count k"), which package
// parse maps back to the frame's sample time.
package prompts

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"

	"gopkg.in/yaml.v3"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/trace"
)

// Families of templates.
const (
	FamilySynthetic = "synthetic"    // the rendered event domains: bounce_ball, blinking, state_machine
	FamilyNatural   = domain.Natural // natural videos: repetition counting
	// FamilyObjects holds the static-object counting prompts of
	// CountVideoBench (domain objects, whose name it bears), whose
	// protocol sends the question alone.
	FamilyObjects = domain.Objects
)

// families lists the valid Template.Family values.
var families = []string{FamilySynthetic, FamilyNatural, FamilyObjects}

// Template is one prompt condition. System, User and FollowUp are Go
// text/template text executed with Data; the rendered text is trimmed of
// surrounding white space, and an empty System sends no system message.
type Template struct {
	// Name is the condition's name, as in a study's conditions and the
	// results' prompt column.
	Name string `yaml:"-" json:"name"`
	// System is the system message; empty for none.
	System string `yaml:"system,omitempty" json:"system,omitempty"`
	// User is the first user turn's instructions, sent before the frames.
	User string `yaml:"user" json:"user"`
	// FollowUp is the second user turn, sent after the model's first
	// reply (multi_turn_verification); empty for single-turn templates.
	FollowUp string `yaml:"follow_up,omitempty" json:"follow_up,omitempty"`
	// Family is "synthetic", "natural" or "objects".
	Family string `yaml:"family" json:"family"`
}

// Data is what a template's text can use.
//
//	{{.Question}}   the clip's question (QuestionFor(domain, class).Text)
//	{{.Domain}}     the domain: bounce_ball, blinking, state_machine, natural, objects
//	{{.EventNoun}}  what one event is called, singular ("wall contact")
//	{{.Attributes}} what to state per event ("the wall it touches: …")
//	{{.Duration}}   the clip's length in seconds (24 prints as 24, 7.5 as 7.5)
//	{{.Frames}}     the number of frames shown (0 with a native video)
//	{{.Video}}      true when the input is the native video, not frames
//	{{.Labels}}     the frames' label mode: "time", "position" or "none" (chat.Labels; "time" with a video)
//	{{.Timed}}      true when the model is told when each frame is: a video, or labels "time"
type Data struct {
	Question   string
	Domain     string
	EventNoun  string
	Attributes string
	Duration   float64
	Frames     int
	Video      bool
	Labels     string
	Timed      bool
}

// Question is a domain's counting question.
type Question struct {
	// Text is the question, one or two sentences.
	Text string `json:"text"`
	// EventNoun names one event, singular.
	EventNoun string `json:"event_noun"`
	// Attributes says what to state for each event in a ledger line, in
	// the words package parse reads (wall names; on/off; FROM → TO).
	Attributes string `json:"attributes"`
}

// Domains with a built-in question (the names of package domain).
const (
	DomainBounceBall   = domain.BounceBall
	DomainBlinking     = domain.Blinking
	DomainStateMachine = domain.StateMachine
	DomainNatural      = domain.Natural
	// DomainObjects is CountVideoBench's static-object counting: the
	// question names the clip's class (domain.Spec.Class), so Input.Class
	// is required.
	DomainObjects = domain.Objects
)

// Questions returns the built-in question of each domain (a new map on
// every call). The synthetic questions describe the scene in one clause
// (docs/scenes.md) and ask for the count of its events; "natural" is the
// repetition-counting question of natural videos (low-frequency-trap §7).
// The objects entry is the question of one sample class (cube-red, "How
// many red cubes are in this video?"): its text depends on the clip's
// class, so use QuestionFor to ask about a clip.
func Questions() map[string]Question {
	return map[string]Question{
		DomainBounceBall: {
			Text:       "A ball moves inside a box. How many times does the ball touch a wall of the box?",
			EventNoun:  "wall contact",
			Attributes: "which wall it touches (top, right, bottom or left)",
		},
		DomainBlinking: {
			Text:       "A shape is dark most of the time and lights up now and then. How many times does it light up?",
			EventNoun:  "light-up",
			Attributes: "the shape's state at that moment (on or off)",
		},
		DomainStateMachine: {
			Text:       "Labelled states are drawn and exactly one of them is highlighted at a time. How many times does the highlight move to a different state?",
			EventNoun:  "highlight change",
			Attributes: "the change written as FROM → TO with the state labels (e.g. A → C)",
		},
		DomainNatural: {
			Text:       "How many times is the action in this video repeated?",
			EventNoun:  "repetition",
			Attributes: "a few words on what is done",
		},
		DomainObjects: objectsQuestion(sampleClass),
	}
}

// sampleClass is the class Questions and Check use for the objects domain.
const sampleClass = "cube-red"

// objectsQuestion is CountVideoBench's question for a valid class (§5.1:
// "How many [color] [shape]s are in this video?"). A ledger lists each
// object once, at the time it is first seen.
func objectsQuestion(class string) Question {
	shape, color, _ := trace.SplitClass(class)
	return Question{
		Text:       "How many " + color + " " + shape + "s are in this video?",
		EventNoun:  "object",
		Attributes: "where it is in the frame where you first see it (e.g. front left)",
	}
}

// CheckClass reports whether class is an objects class "<shape>-<colour>"
// (shapes and colours of trace.ObjectShapes and trace.ObjectColors).
func CheckClass(class string) error {
	if _, _, ok := trace.SplitClass(class); !ok {
		return fmt.Errorf("prompts: unknown object class %s (want <shape>-<colour>, shape %s, colour %s)",
			textin.Quote(class), strings.Join(trace.ObjectShapes, "|"), strings.Join(trace.ObjectColors, "|"))
	}
	return nil
}

// QuestionFor is the question of one clip: its domain's, or for a domain
// whose clips count an object class (domain.Spec.Class: objects) the
// question of its class ("cube-red" → "How many red cubes are in this
// video?"). The class is required there and refused for every other
// domain, whose question does not depend on it.
func QuestionFor(dom, class string) (Question, error) {
	if domain.Of(dom).Class {
		if class == "" {
			return Question{}, fmt.Errorf("prompts: domain %s needs the clip's object class (e.g. %s)", dom, sampleClass)
		}
		if err := CheckClass(class); err != nil {
			return Question{}, err
		}
		return objectsQuestion(class), nil
	}
	q, ok := Questions()[dom]
	if !ok {
		return Question{}, fmt.Errorf("prompts: unknown domain %s (known: %s)", textin.Quote(dom), strings.Join(slices.Sorted(maps.Keys(Questions())), ", "))
	}
	if class != "" {
		classed := domain.Where(func(s domain.Spec) bool { return s.Class })
		return Question{}, fmt.Errorf("prompts: class %s given for domain %s; only the %s domain has classes", textin.Quote(class), dom, strings.Join(classed, ", "))
	}
	return q, nil
}

//go:embed builtin.yaml
var builtinYAML []byte

// builtins parses builtin.yaml once. The file is part of the source and
// the package tests parse it, so its error is a build defect; it is still
// returned (by Default's Get and by Load), never panicked.
var builtins = sync.OnceValues(func() (map[string]Template, error) {
	ts, err := decode(builtinYAML, nil)
	if err != nil {
		return nil, fmt.Errorf("prompts: built-in templates (builtin.yaml): %w", err)
	}
	return ts, nil
})

// Builtin returns the built-in templates by name (a new map on every call;
// empty only if the embedded file were broken, see Default).
func Builtin() map[string]Template {
	ts, _ := builtins()
	return maps.Clone(ts)
}

// Set is the templates a study can use: the built-ins plus a user's
// additions and overrides. A Set is not modified after it is made and is
// safe for concurrent use.
type Set struct {
	templates map[string]Template
	// overridden names the built-ins a user's file replaced.
	overridden []string
	// err is the built-ins' error, returned by Get.
	err error
}

// Default returns the set of built-in templates.
func Default() *Set {
	ts, err := builtins()
	return &Set{templates: maps.Clone(ts), err: err}
}

// Load reads a user's templates file (YAML, a map from name to
// {system, user, follow_up, family}) over the built-ins: a new name adds
// a template, a built-in's name replaces that built-in as a whole. Unknown
// fields are errors, and so is a template whose text does not parse or
// fails to execute for some domain (both named in the error).
func Load(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	s, err := ParseYAML(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseYAML is Load from bytes.
func ParseYAML(b []byte) (*Set, error) {
	base, err := builtins()
	if err != nil {
		return nil, err
	}
	base = maps.Clone(base)
	user, err := decode(b, base)
	if err != nil {
		return nil, err
	}
	s := &Set{templates: base}
	for name, t := range user {
		if _, ok := base[name]; ok {
			s.overridden = append(s.overridden, name)
		}
		s.templates[name] = t
	}
	slices.Sort(s.overridden)
	return s, nil
}

// Get returns the named template.
func (s *Set) Get(name string) (Template, error) {
	if s.err != nil {
		return Template{}, s.err
	}
	if t, ok := s.templates[name]; ok {
		return t, nil
	}
	return Template{}, fmt.Errorf("prompts: unknown prompt %q (known: %s)", name, strings.Join(s.Names(), ", "))
}

// Names lists the set's templates, sorted.
func (s *Set) Names() []string { return slices.Sorted(maps.Keys(s.templates)) }

// Overridden lists the built-ins the user's file replaced, sorted.
func (s *Set) Overridden() []string { return slices.Clone(s.overridden) }

// namePattern is the form of a template name: it keys results rows and
// appears in file names and messages.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// decode reads a templates document and checks every template. base gives
// the family of a built-in that a template without one replaces.
func decode(b []byte, base map[string]Template) (map[string]Template, error) {
	var raw map[string]Template
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]Template{}, nil // an empty file adds nothing
		}
		return nil, fmt.Errorf("prompts: %w", err)
	}
	var errs []error
	out := make(map[string]Template, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		t := raw[name]
		t.Name = name
		if t.Family == "" {
			t.Family = FamilySynthetic
			if b, ok := base[name]; ok {
				t.Family = b.Family
			}
		}
		if err := t.Check(); err != nil {
			errs = append(errs, err)
			continue
		}
		out[name] = t
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Check reports whether the template is usable: a valid name and family,
// non-empty user text, and text that parses and executes for every domain
// (objects with a sample class) with both frames and a native video (so a misspelt field such as
// {{.Qestion}} is found when the file is loaded, not mid-run). Errors name
// the template and the part.
func (t Template) Check() error {
	if !namePattern.MatchString(t.Name) {
		return fmt.Errorf("prompts: template name %q: use letters, digits, '_', '.', '+', '-'", t.Name)
	}
	if !slices.Contains(families, t.Family) {
		return fmt.Errorf("prompts: template %q: family %q (want %s)", t.Name, t.Family, strings.Join(families, ", "))
	}
	if strings.TrimSpace(t.User) == "" {
		return fmt.Errorf("prompts: template %q: user text is empty", t.Name)
	}
	for _, dom := range slices.Sorted(maps.Keys(Questions())) {
		ds := []Data{sampleData(dom, 0, true, chat.LabelsTime), sampleData(dom, 0, false, chat.LabelsTime)}
		for _, l := range chat.LabelModes {
			ds = append(ds, sampleData(dom, 4, false, l))
		}
		for _, d := range ds {
			if _, _, _, err := t.render(d); err != nil {
				return err
			}
		}
	}
	return nil
}

func sampleData(dom string, frames int, video bool, labels chat.Labels) Data {
	q := Questions()[dom]
	return Data{Question: q.Text, Domain: dom, EventNoun: q.EventNoun, Attributes: q.Attributes,
		Duration: 24, Frames: frames, Video: video, Labels: string(labels), Timed: video || labels.Timed()}
}

// render executes the three parts with d.
func (t Template) render(d Data) (system, user, followUp string, err error) {
	part := func(label, text string) (string, error) {
		if text == "" {
			return "", nil
		}
		name := t.Name + "." + label
		tt, err := template.New(name).Option("missingkey=error").Parse(text)
		if err != nil {
			return "", fmt.Errorf("prompts: template %q %s: %w", t.Name, label, err)
		}
		var buf strings.Builder
		if err := tt.Execute(&buf, d); err != nil {
			return "", fmt.Errorf("prompts: template %q %s: %w", t.Name, label, err)
		}
		return strings.TrimSpace(buf.String()), nil
	}
	if system, err = part("system", t.System); err != nil {
		return
	}
	if user, err = part("user", t.User); err != nil {
		return
	}
	if user == "" {
		return "", "", "", fmt.Errorf("prompts: template %q: user text renders empty for domain %s", t.Name, d.Domain)
	}
	followUp, err = part("follow_up", t.FollowUp)
	return
}
