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
	if !errors.Is(err, ErrManifest) || len(err.Error()) > 600 || !strings.Contains(err.Error(), `field id is 307200 bytes, longer than 255`) || !strings.Contains(err.Error(), `iii"… (307200 bytes)`) {
		t.Errorf("%d bytes: %.300v", len(err.Error()), err)
	}
	// The longest id a file name allows is an id; a repeated one is named.
	id := strings.Repeat("i", MaxIDBytes)
	_, err = LoadManifest(writeManifestText(t, entryLine(t, id)+"\n"+entryLine(t, id)+"\n"))
	if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), `already on line 1`) || len(err.Error()) > 600 {
		t.Errorf("repeated %d-byte id: %.300v", MaxIDBytes, err)
	}
	// A clip asked for by a 10 MB id is named by 200 bytes of it.
	_, _, _, err = LoadClip(p, strings.Repeat("x", 10<<20))
	if !errors.Is(err, ErrNoClip) || len(err.Error()) > 600 || !strings.Contains(err.Error(), `(10485760 bytes) is not in`) {
		t.Errorf("LoadClip: %d bytes: %.300v", len(err.Error()), err)
	}
}
