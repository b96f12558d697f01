package sampling

import (
	"testing"

	"github.com/tracegrid/tracegrid/domain"
)

// TestDomainPolicies: a domain's declared protocol policy is a valid
// policy written the way Parse writes it (objects: uniform:10), and a
// domain without event policies declares a protocol that is not one.
func TestDomainPolicies(t *testing.T) {
	for _, s := range domain.Specs() {
		if s.Policy == "" {
			continue
		}
		p, err := Parse(s.Policy)
		if err != nil || p.String() != s.Policy {
			t.Errorf("%s: policy %q: %v, %v", s.Name, s.Policy, p, err)
		}
		if _, isKeyframes := p.(keyframes); isKeyframes && !s.EventPolicies {
			t.Errorf("%s: protocol policy %q places frames at events, which the domain has not", s.Name, s.Policy)
		}
	}
	if got := domain.Of(domain.Objects).Policy; got != "uniform:10" {
		t.Errorf("objects policy %q, want uniform:10", got)
	}
}
