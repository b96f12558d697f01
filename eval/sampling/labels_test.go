package sampling

import "testing"

func TestTimesReveal(t *testing.T) {
	for s, want := range map[string]bool{
		"keyframes": true, "keyframes:0.2": true, "shuffled:8": true, "single:random": true, "single:best": true,
		"fps:4": false, "native": false, "native:2": false, "uniform:10": false, "adaptive:16": false,
	} {
		p, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := TimesReveal(p); got != want {
			t.Errorf("TimesReveal(%s) = %v, want %v", s, got, want)
		}
	}
}
