package study

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

const limitsBase = `manifest: m.jsonl
models:
  - name: a
    base_url: http://127.0.0.1:8089/v1
    timeout_seconds: 2.5
conditions:
  - {policy: "fps:1", prompt: direct}
max_usd: 5.5
`

// TestFloatInIntegerFieldRefused (issue 12, finding 10): YAML would
// truncate a float into an integer field; every such value is refused with
// its line and field, at any depth.
func TestFloatInIntegerFieldRefused(t *testing.T) {
	if _, err := parse([]byte(limitsBase)); err != nil {
		t.Fatalf("floats in float fields: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"max_usd: 5.5", "max_usd: 5.5\nrepetitions: 2.9", "line 9: repetitions: 2.9 is not a whole number"},
		{"max_usd: 5.5", "max_usd: 5.5\nrepetitions: 2.0", "line 9: repetitions: 2.0 is not a whole number"},
		{"    timeout_seconds: 2.5", "    timeout_seconds: 2.5\n    concurrency: 1.5", "line 6: models[0].concurrency: 1.5 is not a whole number"},
		{"    timeout_seconds: 2.5", "    timeout_seconds: 2.5\n    max_images: 1e3", "line 6: models[0].max_images: 1e3 is not a whole number"},
		{"    timeout_seconds: 2.5", "    timeout_seconds: 2.5\n    image_tokens: {rule: fixed, fixed: 258.5}", "line 6: models[0].image_tokens.fixed: 258.5"},
		{"max_usd: 5.5", "max_usd: 5.5\ndecoding: {max_tokens: 100.5, seed: 7.5}", "line 9: decoding.max_tokens: 100.5 is not a whole number"},
		{"max_usd: 5.5", "max_usd: 5.5\ndecoding: {max_tokens: 100.5, seed: 7.5}", "line 9: decoding.seed: 7.5 is not a whole number"},
	} {
		_, err := parse([]byte(strings.Replace(limitsBase, c.from, c.to, 1)))
		if !errors.Is(err, ErrStudy) || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	// Through Load the message names the file too.
	path := write(t, t.TempDir(), "s.yaml", limitsBase+"repetitions: 2.9\n")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "study "+path+": invalid study: line 9: repetitions: 2.9") {
		t.Errorf("Load: %v", err)
	}
}

// TestStudyFileSizeCapped (finding 12): a study file above MaxStudyBytes,
// or an endless one, is refused without being read whole.
func TestStudyFileSizeCapped(t *testing.T) {
	big := write(t, t.TempDir(), "big.yaml", limitsBase+"# "+strings.Repeat("x", MaxStudyBytes)+"\n")
	for _, path := range []string{big, "/dev/zero"} {
		if _, err := Load(path); !errors.Is(err, ErrStudy) || !strings.Contains(err.Error(), "larger than 1024 KiB") {
			t.Errorf("%s: %v", path, err)
		}
	}
	ok := write(t, t.TempDir(), "ok.yaml", limitsBase)
	if fi, _ := os.Stat(ok); fi.Size() > MaxStudyBytes {
		t.Fatal("base too large")
	}
	if _, err := Load(ok); err != nil {
		t.Error(err)
	}
}

// TestPositionAndFieldError: a loaded study knows the line of each field;
// FieldError puts file, line and field in the message.
func TestPositionAndFieldError(t *testing.T) {
	path := write(t, t.TempDir(), "p.yaml", limitsBase+"clips:\n  - a\n  - b\n")
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Position("clips[1]"); got != path+":11" {
		t.Errorf("Position(clips[1]) = %q", got)
	}
	if got := s.Position("models[0].timeout_seconds"); got != path+":5" {
		t.Errorf("Position(models[0].timeout_seconds) = %q", got)
	}
	err = s.FieldError("clips[1]", errors.New("not in the manifest"))
	if !errors.Is(err, ErrStudy) || err.Error() != "invalid study: "+path+":11: clips[1]: not in the manifest" {
		t.Errorf("FieldError: %v", err)
	}
	if err := valid().FieldError("clips[0]", errors.New("x")); err.Error() != "invalid study: clips[0]: x" {
		t.Errorf("FieldError without a file: %v", err)
	}
}

// TestRetryWaitAndDeadline: the defaults and the validation of
// max_retry_wait_seconds and deadline_seconds.
func TestRetryWaitAndDeadline(t *testing.T) {
	m := valid().Models[0]
	if m.RetryWait() != 60*time.Second || m.Deadline() != 300*time.Second*time.Duration(m.MaxRetries+1) {
		t.Errorf("defaults: wait %v, deadline %v", m.RetryWait(), m.Deadline())
	}
	m.MaxRetryWaitSeconds, m.DeadlineSeconds, m.MaxRetries = 0.5, 90, 3
	if m.RetryWait() != 500*time.Millisecond || m.Deadline() != 90*time.Second {
		t.Errorf("set: wait %v, deadline %v", m.RetryWait(), m.Deadline())
	}
	for _, c := range []struct {
		edit func(m *Model)
		want string
	}{
		{func(m *Model) { m.MaxRetryWaitSeconds = -1 }, "max_retry_wait_seconds -1"},
		{func(m *Model) { m.MaxRetryWaitSeconds = 3601 }, "at most 3600"},
		{func(m *Model) { m.DeadlineSeconds = -2 }, "deadline_seconds -2"},
	} {
		s := valid()
		c.edit(&s.Models[0])
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}
