package study

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
)

// TemplateHash identifies what a template makes a model read: the SHA-256
// (hex) of prompts.Hash over the messages the template builds — its system
// message, instructions with every domain's question, frame labels in
// every label mode, the video label and the follow-up turn — for a fixed
// reference input per domain (two frames at 0 s and 1 s of a 24 s clip,
// and a native video; objects asks about red cubes). Media are fixed
// placeholders, so the hash depends on the wording only, never on pixels
// or on the machine that renders them: two templates with the same hash
// send the same text in every trial. A results database stores it with
// every trial (results.Trial.TemplateHash), and a run refuses to add
// trials of a changed template to a condition whose stored trials were
// asked with another one (runner.ErrPromptChanged).
func TemplateHash(t prompts.Template) string {
	h := sha256.New()
	write := func(msgs []chat.Message) {
		h.Write([]byte(prompts.Hash(msgs)))
		h.Write([]byte{'\n'})
	}
	domains := slices.Sorted(maps.Keys(prompts.Questions()))
	for _, dom := range domains {
		class := ""
		if dom == prompts.DomainObjects {
			class = "cube-red"
		}
		var inputs []prompts.Input
		for _, l := range chat.LabelModes {
			inputs = append(inputs, prompts.Input{Domain: dom, Class: class, Duration: 24, Labels: l,
				Frames: []prompts.Frame{{Position: 0, T: 0, DataURL: placeholderImage}, {Position: 1, T: 1, DataURL: placeholderImage}}})
		}
		inputs = append(inputs, prompts.Input{Domain: dom, Class: class, Duration: 24, VideoURL: placeholderVideo})
		for _, in := range inputs {
			msgs, err := t.Build(in)
			if err != nil {
				// Not expected of a checked template; the error text still
				// tells two templates apart.
				h.Write([]byte("error: " + err.Error() + "\n"))
				continue
			}
			if fu, ok := t.FollowUpMessage(in); ok {
				msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Parts: []chat.Part{chat.Text("")}}, fu)
			}
			write(msgs)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Snapshot is what a results database keeps of a study when a run starts
// (results.DB.PutSnapshot): the models as configured (a model holds the
// NAME of its key's environment variable, never a key), with the decoding
// each is sent, the conditions, the study's decoding, the hashes of the
// templates the conditions use (TemplateHash) and the tool's version.
type Snapshot struct {
	Name        string            `json:"name"`
	Manifest    string            `json:"manifest"`
	Clips       []string          `json:"clips,omitempty"`
	Repetitions int               `json:"repetitions"`
	MaxUSD      float64           `json:"max_usd,omitempty"`
	Decoding    Decoding          `json:"decoding"`
	Models      []SnapshotModel   `json:"models"`
	Conditions  []Condition       `json:"conditions"`
	Templates   map[string]string `json:"templates"`
	ToolVersion string            `json:"tool_version"`
}

// SnapshotModel is a model with what follows from it.
type SnapshotModel struct {
	Model
	// Sent is the decoding its requests carry (Study.DecodingFor).
	Sent Decoding `json:"sent_decoding"`
	// SendsTemperature is Model.SendsTemperature.
	SendsTemperature bool `json:"sends_temperature"`
}

// Snapshot builds the study's snapshot with the templates of set.
func (s *Study) Snapshot(set *prompts.Set, toolVersion string) (Snapshot, error) {
	snap := Snapshot{Name: s.Name, Manifest: s.Manifest, Clips: s.Clips, Repetitions: s.Repetitions, MaxUSD: s.MaxUSD,
		Decoding: s.Decoding, Conditions: s.Conditions, Templates: map[string]string{}, ToolVersion: toolVersion}
	for _, m := range s.Models {
		snap.Models = append(snap.Models, SnapshotModel{Model: m, Sent: s.DecodingFor(m), SendsTemperature: m.SendsTemperature()})
	}
	for _, c := range s.Conditions {
		t, err := set.Get(c.Prompt)
		if err != nil {
			return Snapshot{}, fmt.Errorf("study snapshot: %w", err)
		}
		snap.Templates[c.Prompt] = TemplateHash(t)
	}
	return snap, nil
}

// JSON is the snapshot's JSON text (keys in a fixed order, so that equal
// snapshots have equal text).
func (s Snapshot) JSON() ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("study snapshot: %w", err)
	}
	return b, nil
}
