package prompts

import (
	"testing"

	"github.com/tracegrid/tracegrid/domain"
)

// TestDomainPrompts: every prompt a domain declares for its own protocol
// is a built-in of that domain's family (countvideobench, objects), and
// every registered domain has a question.
func TestDomainPrompts(t *testing.T) {
	found := 0
	for _, s := range domain.Specs() {
		class := ""
		if s.Class {
			class = sampleClass
		}
		if _, err := QuestionFor(s.Name, class); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if s.Prompt == "" {
			continue
		}
		found++
		tmpl, ok := Builtin()[s.Prompt]
		if !ok || tmpl.Family != s.Name {
			t.Errorf("%s declares prompt %q: built-in %v, family %q", s.Name, s.Prompt, ok, tmpl.Family)
		}
	}
	if found != 1 || domain.Of(domain.Objects).Prompt != "countvideobench" {
		t.Errorf("%d domains declare a prompt; objects declares %q", found, domain.Of(domain.Objects).Prompt)
	}
}
