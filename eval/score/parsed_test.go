package score

import (
	"testing"

	"github.com/tracegrid/tracegrid/eval/parse"
)

func TestFromParsedMapsPhaseAndDropsUnknownKeys(t *testing.T) {
	got := FromParsed([]parse.Event{{T: 1, Attrs: map[string]string{"phase": "on"}}, {T: 2, Attrs: map[string]string{"wall": "left", "from": "A", "colour": "red"}}, {T: 3}})
	if got[0].Attrs["after"] != "on" || got[0].Attrs["phase"] != "" || got[1].Attrs["wall"] != "left" || got[1].Attrs["from"] != "A" ||
		got[1].Attrs["colour"] != "" || got[2].Attrs != nil || got[2].T != 3 {
		t.Errorf("FromParsed: %+v", got)
	}
}

// TestFromParsedKeepsExcluded: excluded events stay, flagged, so that
// report indices match event indices.
func TestFromParsedKeepsExcluded(t *testing.T) {
	got := FromParsed([]parse.Event{{T: 1, Attrs: map[string]string{"phase": "on"}}, {T: 1.2, Attrs: map[string]string{"phase": "off"}, Excluded: parse.ExcludedOffPhase}})
	if len(got) != 2 || got[0].Excluded != "" || got[1].Excluded != parse.ExcludedOffPhase || got[1].Attrs["after"] != "off" {
		t.Errorf("FromParsed: %+v", got)
	}
}
