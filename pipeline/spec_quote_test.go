package pipeline

import (
	"strings"
	"testing"
)

// TestSpecQuotesBounded: a spec that is one huge scalar is refused with a
// message quoting 200 bytes of it, not all of it.
func TestSpecQuotesBounded(t *testing.T) {
	_, err := ParseSpec([]byte(strings.Repeat("x", 500<<10)))
	if err == nil || len(err.Error()) > 600 || !strings.Contains(err.Error(), `not the value "xxx`) || !strings.Contains(err.Error(), `"… (512000 bytes)`) {
		t.Errorf("%.400v", err)
	}
}
