package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// completeArgs runs the shell's completion request (`tracegrid __complete
// ARGS…`, what the generated bash/zsh/fish scripts call) and returns the
// candidates and the directive number.
func completeArgs(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, code := runStdout(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %q: no directive line: %q", args, out)
	}
	return lines[:len(lines)-1], last
}

// TestFlagCompletion: flags with closed sets of values complete to the
// sets their packages check against (issue 31, item 19).
func TestFlagCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"render", "--grid", ""}, pipeline.Grids},
		{[]string{"run", "--grid", "p"}, []string{"paper"}},
		{[]string{"eval", "--prompt", ""}, prompts.Default().Names()},
		{[]string{"eval", "--labels", ""}, []string{"time", "position", "none"}},
		{[]string{"variants", "--labels", "po"}, []string{"position"}},
		{[]string{"variants", "--as", ""}, []string{"frames", "video"}},
		{[]string{"variants", "--format", ""}, []string{"jpg", "png"}},
		{[]string{"frames", "--format", ""}, []string{"jpg", "png"}},
		{[]string{"export", "--format", ""}, []string{"jsonl", "csv"}},
		{[]string{"import", "--event-at", ""}, trace.EventAts},
		{[]string{"frames", "--policy", ""}, []string{"native", "native:", "fps:", "keyframes", "keyframes:", "adaptive:", "single:random", "single:best", "uniform:", "shuffled:"}},
		{[]string{"eval", "--policy", "s"}, []string{"single:random", "single:best", "shuffled:"}},
		// A comma-separated list completes its last item.
		{[]string{"variants", "--policies", "fps:4,k"}, []string{"fps:4,keyframes", "fps:4,keyframes:"}},
		{[]string{"variants", "--prompts", "x,"}, prefixed("x,", prompts.Default().Names())},
	}
	for _, c := range cases {
		got, _ := completeArgs(t, c.args...)
		if !slices.Equal(got, c.want) {
			t.Errorf("complete %q: %q, want %q", c.args, got, c.want)
		}
	}
	// No space after fps: (its rate follows) nor in a list (a comma may).
	for _, args := range [][]string{{"frames", "--policy", "fp"}, {"variants", "--policies", "fps:4,"}} {
		if _, dir := completeArgs(t, args...); dir != ":6" { // NoSpace|NoFileComp
			t.Errorf("complete %q: directive %s, want :6", args, dir)
		}
	}
	if _, dir := completeArgs(t, "render", "--grid", ""); dir != ":4" { // NoFileComp
		t.Errorf("complete --grid: directive %s, want :4", dir)
	}
}

func prefixed(p string, s []string) []string {
	var out []string
	for _, v := range s {
		out = append(out, p+v)
	}
	return out
}
