package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneConditionKey: report code matches a row to a model × condition
// (× domain) by comparing rowKeys, never field by field: a comparison of
// two condition fields in one expression ("x.Policy == y.Policy && x.Labels
// == …") is the kind of match that silently misses a field when one is
// added (label modes were). The golden test shows that the keys select the
// same rows.
func TestOneConditionKey(t *testing.T) {
	field := regexp.MustCompile(`\.(Policy|Labels|Prompt)\s*==\s*\w+(\.\w+)*\.(Policy|Labels|Prompt)\b`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if len(field.FindAllString(line, -1)) >= 2 {
				t.Errorf("%s:%d matches a condition field by field (use rowKey): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	// A key is the row's model, condition and domain, nothing else.
	s := SurfaceCell{Model: "m", Policy: "fps:4", Labels: "time", Prompt: "direct", Domain: "blinking", N: 3}
	w := WilsonRow{Model: "m", Policy: "fps:4", Labels: "time", Prompt: "direct", Domain: "blinking", Trials: 9}
	c := CountRow{Model: "m", Policy: "fps:4", Labels: "time", Prompt: "direct"}
	if s.key() != w.key() || s.key() != (rowKey{"m", Condition{"fps:4", "time", "direct"}, "blinking"}) || s.key().condition() != c.key() {
		t.Errorf("keys %v %v %v", s.key(), w.key(), c.key())
	}
	if w2 := (WilsonRow{Model: "m", Policy: "fps:4", Labels: "position", Prompt: "direct", Domain: "blinking"}); w2.key() == s.key() {
		t.Error("keys of two label modes are equal")
	}
}
