package study

import (
	"errors"
	"strings"
	"testing"
)

// TestShortAPIKeyRefused (issue 31 item 4): a key shorter than
// client.MinAPIKeyLength is bad input (ErrNoAPIKey, exit 2): the error
// names the variable and the minimum, never the value. White space
// around the value does not count.
func TestShortAPIKeyRefused(t *testing.T) {
	m := Model{Name: "local", APIKeyEnv: "TRACEGRID_TEST_KEY"}
	for _, v := range []string{"6", "EMPTY", "  ollama\n", "abcdefg"} {
		t.Setenv("TRACEGRID_TEST_KEY", v)
		k, err := m.APIKey()
		if !errors.Is(err, ErrNoAPIKey) || k != "" {
			t.Errorf("%q: key %q, %v; want ErrNoAPIKey", v, k, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "environment variable TRACEGRID_TEST_KEY holds a key shorter than 8 characters") ||
			strings.Contains(msg, strings.TrimSpace(v)) {
			t.Errorf("%q: %s", v, msg)
		}
	}
	t.Setenv("TRACEGRID_TEST_KEY", " abcdefgh ")
	if k, err := m.APIKey(); err != nil || k != "abcdefgh" {
		t.Errorf("8 characters: %q %v", k, err)
	}
}
