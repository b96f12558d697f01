package domain

import (
	"slices"
	"testing"
)

// TestRegistry: the names, order and declarations every consumer relies
// on.
func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{BounceBall, Blinking, StateMachine, Objects}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i, s := range Specs() {
		if r, ok := Rank(s.Name); !ok || r != i {
			t.Errorf("Rank(%s) = %d, %v; want %d", s.Name, r, ok, i)
		}
		if l, ok := Lookup(s.Name); !ok || l.Name != s.Name || Of(s.Name).Title != s.Title {
			t.Errorf("Lookup(%s) = %+v, %v", s.Name, l, ok)
		}
		events := s.Truth == TruthEvents
		if events != (s.EventType != "") || events == s.CountOnly || events != s.EventPolicies || !s.Scene {
			t.Errorf("%s: inconsistent declaration %+v", s.Name, s)
		}
	}
	o := Of(Objects)
	if o.Truth != TruthObjects || !o.CountOnly || o.EventPolicies || !o.Class || o.Prompt != "countvideobench" || o.Policy != "uniform:10" ||
		o.SingleBest != BestMostInView || !o.ViewStats {
		t.Errorf("objects: %+v", o)
	}
	if got := Where(func(s Spec) bool { return s.CountOnly }); !slices.Equal(got, []string{Objects}) {
		t.Errorf("count-only domains %v", got)
	}
	if got := Of(BounceBall).EventType; got != "wall_contact" {
		t.Errorf("bounce_ball event type %q", got)
	}
}

// TestUnregistered: natural (foreseen, not registered) and unknown names
// are not found, and Of gives them the event defaults.
func TestUnregistered(t *testing.T) {
	for _, name := range []string{Natural, "juggling", ""} {
		if _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) found", name)
		}
		if _, ok := Rank(name); ok {
			t.Errorf("Rank(%q) found", name)
		}
		s := Of(name)
		if s.Name != name || s.Truth != TruthEvents || s.CountOnly || !s.EventPolicies || s.Class || s.ViewStats || s.Scene ||
			s.SingleBest != BestMiddleEvent || s.Prompt != "" {
			t.Errorf("Of(%q) = %+v", name, s)
		}
	}
}

// TestSpecsIsACopy: changing the returned slice does not change the
// registry.
func TestSpecsIsACopy(t *testing.T) {
	s := Specs()
	s[0].CountOnly = true
	if Of(BounceBall).CountOnly {
		t.Error("Specs shares the registry")
	}
}
