package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// TestManifestBOMCRLFAndBoundedID: a manifest saved again with a byte
// order mark and CRLF line ends reads as the plain one, for render resume
// and for use; a repeated id of 300 KB (a line holds at most 1 MiB) is
// named by 200 bytes of it.
func TestManifestBOMCRLFAndBoundedID(t *testing.T) {
	p := writeManifestText(t, "\ufeff"+entryLine(t, "a")+"\r\n"+entryLine(t, "b")+"\r\n")
	entries, err := LoadManifest(p)
	if err != nil || len(entries) != 2 || entries[0].ID != "a" || entries[1].ID != "b" {
		t.Errorf("LoadManifest: %+v %v", entries, err)
	}
	if entries, skipped, err := ReadManifest(p); err != nil || skipped != 0 || len(entries) != 2 {
		t.Errorf("ReadManifest: %d entries, %d skipped, %v", len(entries), skipped, err)
	}
	long := entryLine(t, strings.Repeat("i", 300<<10))
	_, err = LoadManifest(writeManifestText(t, long+"\n"+long+"\n"))
	if !errors.Is(err, ErrManifest) || len(err.Error()) > 600 || !strings.Contains(err.Error(), `iii"… (307200 bytes) already on line 1`) {
		t.Errorf("%d bytes: %.300v", len(err.Error()), err)
	}
}
