package scene

import (
	"slices"
	"testing"

	"github.com/tracegrid/tracegrid/domain"
)

// TestRegistryMatchesDomains: package scene registers exactly the domains
// package domain declares with a scene, each the same way, and its lists
// follow the declarations.
func TestRegistryMatchesDomains(t *testing.T) {
	want := domain.Where(func(s domain.Spec) bool { return s.Scene })
	if got := sortedDomains(); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("registered scenes %v, domains with a scene %v", got, want)
	}
	for name, r := range domains {
		if r.check == nil || r.id == nil || r.build == nil || r.truth == nil {
			t.Errorf("%s: incomplete registration", name)
		}
		if r.world != (domain.Of(name).Truth == domain.TruthObjects) {
			t.Errorf("%s: world %v", name, r.world)
		}
	}
	if got, want := Domains(), []string{"blinking", "bounce_ball", "state_machine"}; !slices.Equal(got, want) {
		t.Errorf("Domains() = %v, want %v", got, want)
	}
	if got, want := AllDomains(), []string{"blinking", "bounce_ball", "state_machine", "objects"}; !slices.Equal(got, want) {
		t.Errorf("AllDomains() = %v, want %v", got, want)
	}
}

// TestEventTypesFromDomain: an event clip's trace types its events as its
// domain declares.
func TestEventTypesFromDomain(t *testing.T) {
	for d, typ := range map[string]string{"bounce_ball": "wall_contact", "blinking": "pulse_on", "state_machine": "transition"} {
		c, err := New(Params{Domain: d, N: 2, F: 1, Duration: 4, FPS: 30, Width: 64, Height: 64})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range c.Trace().Events {
			if e.Type != typ {
				t.Errorf("%s: event type %q, want %q", d, e.Type, typ)
			}
		}
	}
}
