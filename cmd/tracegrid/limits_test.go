package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLimitsExitCodeTable checks docs/limits.md's exit-code table against
// the commands: every input the "bad input" row names, in prose or as a
// command in backquotes, is run and must exit with that row's code. An
// input the row names without a case here fails the test (so the table
// and this test change together); inputs too costly to build here name
// the test that checks them.
func TestLimitsExitCodeTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "limits.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| 2 \\| bad input: (.*) \\|$").FindSubmatch(doc)
	if row == nil {
		t.Fatal("docs/limits.md: no exit-code row `| 2 | bad input: … |`")
	}
	const code = 2
	items := splitTableItems(string(row[1]))

	manifest := renderSmall(t)
	dir := t.TempDir()
	file := writeFile(t, "plain.txt", "not a video, not a table\n")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	evalFlags := []string{"--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--policy", "fps:1", "--prompt", "direct", "--db", filepath.Join(dir, "r.db"), "--dry-run"}
	evalOn := func(m string, extra ...string) []string {
		return append(append([]string{"eval", "--manifest", m}, evalFlags...), extra...)
	}
	// Each case: a phrase of the row (matched as a substring of an item)
	// and the command it runs.
	cases := []struct {
		phrase string
		args   []string
	}{
		{"flags", []string{"render", "--bogus"}},
		{"a missing required flag", []string{"frames", "--manifest", manifest}},
		{"an unknown command", []string{"nosuchcommand"}},
		{"spec", []string{"render", "--spec", writeFile(t, "bad.yaml", "domains: [juggling]\n"), "--out", dir}},
		{"study", []string{"eval", "--config", writeFile(t, "study.yaml", "no_such_field: 1\n")}},
		{"manifest", evalOn(writeFile(t, "m.jsonl", "{not json\n"))},
		{"trace", []string{"trace", "replay", writeFile(t, "t.json", `{"schema":"tracegrid/trace/v0"}`)}},
		{"policy", []string{"frames", "--manifest", manifest, "--clip", "state_machine_N02_F1.0_s00", "--policy", "bogus:1", "--out", filepath.Join(dir, "f")}},
		// Not under --dry-run, which sends nothing and needs no key; the
		// key is checked before any request (port 9 has no server anyway).
		{"an unset API key variable", slices.DeleteFunc(evalOn(manifest, "--api-key-env", "TRACEGRID_TEST_UNSET_KEY_P7"), func(a string) bool { return a == "--dry-run" })},
		{"a plan above a limit", []string{"frames", "--manifest", manifest, "--clip", "state_machine_N02_F1.0_s00", "--policy", "uniform:10001", "--out", filepath.Join(dir, "f2")}},
		{"an output path that is an input", []string{"export", "--db", filepath.Join(dir, "x.db"), "--out", filepath.Join(dir, "x.db")}},
		{"eval --manifest DIR", evalOn(dir)},
		{"a manifest video that is a FIFO", evalOn(naturalManifest(t, fifo))},
		{"/dev/zero", evalOn(naturalManifest(t, "/dev/zero"))},
		{"frames --video", []string{"frames", "--video", file, "--policy", "fps:1", "--out", filepath.Join(dir, "f3")}},
		{"import --annotations DIR", []string{"import", "--videos", dir, "--annotations", dir, "--out", filepath.Join(dir, "imp")}},
		{"variants --out", []string{"variants", "--manifest", manifest, "--policies", "fps:1", "--out", manifest}},
		{"merge --render", []string{"merge", "--render", t.TempDir()}},
		{"an empty `--shard`", []string{"render", "--grid", "default", "--shard", "", "--out", filepath.Join(dir, "sh")}},
	}
	// Inputs of the row checked by other tests (they need a study with
	// stored trials or several shard databases).
	elsewhere := map[string]string{
		"a prompt template changed since a condition's stored trials": "eval/runner TestPromptChangedRefused",
		"an eval shard beside the databases of a split":               "cmd/tracegrid TestEvalShardsCLI",
	}

	covered := map[string]bool{}
	for _, item := range items {
		found := false
		for _, c := range cases {
			if strings.Contains(item, c.phrase) {
				found = true
				covered[c.phrase] = true
			}
		}
		for k := range elsewhere {
			if strings.HasPrefix(item, k) {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/limits.md names %q as exit %d, and this test has no case for it", item, code)
		}
	}
	for _, c := range cases {
		msg, got := run(t, c.args...)
		if !covered[c.phrase] {
			// Bad input the issue lists (31, item 14) that the table does
			// not name yet: reported, not asserted.
			t.Logf("not named in the table, not checked: %q exits %d", c.phrase, got)
			continue
		}
		if got != code {
			t.Errorf("docs/limits.md: %q is exit %d; tracegrid %s exits %d:\n%s", c.phrase, code, strings.Join(c.args, " "), got, msg)
		}
		if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
			t.Errorf("tracegrid %s panicked: %s", strings.Join(c.args, " "), msg)
		}
	}
	t.Logf("exit %s: %d items of the table, %d run", strconv.Itoa(code), len(items), len(covered))
}

// splitTableItems splits a table cell's list at commas outside
// parentheses and backquotes, dropping a leading "and"/"or".
func splitTableItems(s string) []string {
	var items []string
	depth, quoted, start := 0, false, 0
	for i, r := range s {
		switch {
		case r == '`':
			quoted = !quoted
		case quoted:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			items = append(items, s[start:i])
			start = i + 1
		}
	}
	items = append(items, s[start:])
	var out []string
	for _, it := range items {
		it = strings.TrimSpace(it)
		for _, p := range []string{"and ", "or "} {
			it = strings.TrimPrefix(it, p)
		}
		if it != "" {
			out = append(out, it)
		}
		// Parenthesised examples name inputs too: each backquoted
		// command in them is an item of its own.
		for _, m := range regexp.MustCompile("`([a-z]+ --[a-z-]+(?: [A-Z]+)?)`|a manifest video that is a FIFO|`/dev/zero`").FindAllString(it, -1) {
			out = append(out, strings.Trim(m, "`"))
		}
	}
	return out
}
