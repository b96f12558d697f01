package domain

import (
	"slices"
	"testing"
)

// TestRegistry: the names, order and declarations every consumer relies
// on.
func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{BounceBall, Blinking, StateMachine, Objects, Natural}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i, s := range Specs() {
		if r, ok := Rank(s.Name); !ok || r != i {
			t.Errorf("Rank(%s) = %d, %v; want %d", s.Name, r, ok, i)
		}
		if l, ok := Lookup(s.Name); !ok || l.Name != s.Name || Of(s.Name).Title != s.Title {
			t.Errorf("Lookup(%s) = %+v, %v", s.Name, l, ok)
		}
		if !s.Scene {
			continue // natural: below
		}
		events := s.Truth == TruthEvents
		if events != (s.EventType != "") || events == s.CountOnly || events != s.EventPolicies || s.EventsOptional {
			t.Errorf("%s: inconsistent declaration %+v", s.Name, s)
		}
	}
	// Natural videos: no scene, events where annotated (optional), scored
	// on the count in the shared tables, keyframes where a trace exists.
	n := Of(Natural)
	if n.Scene || n.Truth != TruthEvents || n.EventType != "repetition" || !n.CountOnly || !n.EventPolicies || !n.EventsOptional ||
		n.Class || n.ViewStats || n.Prompt != "" || n.Policy != "" || n.SingleBest != BestMiddleEvent || n.Title != "Natural videos" {
		t.Errorf("natural: %+v", n)
	}
	if got := Where(func(s Spec) bool { return !s.Scene }); !slices.Equal(got, []string{Natural}) {
		t.Errorf("domains without a scene %v", got)
	}
	o := Of(Objects)
	if o.Truth != TruthObjects || !o.CountOnly || o.EventPolicies || !o.Class || o.Prompt != "countvideobench" || o.Policy != "uniform:10" ||
		o.SingleBest != BestMostInView || !o.ViewStats {
		t.Errorf("objects: %+v", o)
	}
	if got := Where(func(s Spec) bool { return s.CountOnly }); !slices.Equal(got, []string{Objects, Natural}) {
		t.Errorf("count-only domains %v", got)
	}
	// Only a contact is an instant that a frame between two contacts
	// misses; blinks and transitions are states a later frame still shows.
	if got := Where(func(s Spec) bool { return s.EventsOnFrames }); !slices.Equal(got, []string{BounceBall}) {
		t.Errorf("domains with events on frames %v", got)
	}
	if got := Of(BounceBall).EventType; got != "wall_contact" {
		t.Errorf("bounce_ball event type %q", got)
	}
}

// TestMissingEvents: only a domain whose events are optional lacks a
// trace of them, and only when it lists fewer events than its count.
func TestMissingEvents(t *testing.T) {
	n := Of(Natural)
	for _, c := range []struct {
		n, events int
		want      bool
	}{{5, 0, true}, {5, 5, false}, {0, 0, false}, {3, 2, true}} {
		if got := n.MissingEvents(c.n, c.events); got != c.want {
			t.Errorf("natural MissingEvents(%d, %d) = %v", c.n, c.events, got)
		}
	}
	if Of(BounceBall).MissingEvents(5, 0) || Of(Objects).MissingEvents(5, 0) {
		t.Error("a domain whose events are not optional reports missing events")
	}
}

// TestUnregistered: unknown names are not found, and Of gives them the
// event defaults.
func TestUnregistered(t *testing.T) {
	if _, ok := Lookup(Natural); !ok {
		t.Error("natural is not registered")
	}
	for _, name := range []string{"juggling", ""} {
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
