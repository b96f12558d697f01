package study

import (
	"errors"
	"strings"
	"testing"
)

// TestCappedPolicyInStudy: fps:K,max:M (issue 26 §3) in a study file. A
// YAML flow list splits at every comma, so `policies: [fps:2,max:10]`
// reaches the study as "fps:2" and "max:10"; the cap goes back to its
// policy (sampling.SplitList). In a block list or a block condition the
// comma is plain text.
func TestCappedPolicyInStudy(t *testing.T) {
	doc := `
manifest: m.jsonl
models: [{name: m1, base_url: "http://localhost:8000/v1"}]
policies: [fps:2,max:10, fps:4, "fps:1,max:5"]
prompts: [direct]
conditions:
  - {policy: "fps:2,max:20", prompt: thinking}
  - policy: fps:3,max:30
    prompt: thinking
`
	s, err := Load(write(t, t.TempDir(), "s.yaml", doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fps:2,max:20 time thinking", "fps:3,max:30 time thinking", "fps:2,max:10 time direct", "fps:4 time direct", "fps:1,max:5 time direct"}
	var got []string
	for _, c := range s.Conditions {
		got = append(got, c.Policy+" "+c.Labels+" "+c.Prompt)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("conditions %q, want %q", got, want)
	}

	for _, c := range []struct{ doc, want string }{
		{"policies: [fps:2,max:0]\nprompts: [direct]\n", "max:0: M is not a positive whole number"},
		{"policies: [keyframes,max:5]\nprompts: [direct]\n", "keyframes:0.1 takes no frame cap"},
		{"policies: [\"uniform:8,max:4\"]\nprompts: [direct]\n", "uniform:8 takes no frame cap"},
		{"conditions:\n  - policy: fps:2,max:-1\n    prompt: direct\n", "max:-1: M is not a positive whole number"},
		{"policies: [max:10, fps:2]\nprompts: [direct]\n", "max:M is a frame cap: write it after its policy"},
	} {
		doc := "manifest: m.jsonl\nmodels: [{name: m1, base_url: \"http://localhost:8000/v1\"}]\n" + c.doc
		_, err := Load(write(t, t.TempDir(), "s.yaml", doc))
		if err == nil || !errors.Is(err, ErrStudy) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrStudy containing %q", c.doc, err, c.want)
		}
	}
}
