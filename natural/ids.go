package natural

import (
	"path/filepath"
	"strconv"
	"strings"
)

// MaxIDLength caps a clip id derived from a file name (it names the trace
// file clips/<id>.trace.json and keys the results).
const MaxIDLength = 96

// SafeID is the clip id derived from a video's file name: the name without
// its extension, every character but ASCII letters, digits, '_', '-' and
// '.' replaced by '_', leading dots and dashes dropped, at most
// MaxIDLength bytes; "video" when nothing is left. It never holds a path
// separator.
func SafeID(name string) string {
	base := strings.TrimSuffix(name, filepath.Ext(name))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	id := strings.TrimLeft(b.String(), ".-")
	if len(id) > MaxIDLength {
		id = id[:MaxIDLength]
	}
	if id == "" {
		id = "video"
	}
	return id
}

// idSet hands out unique ids: a name whose SafeID is taken (compared
// without case, as case-insensitive file systems would) gets "_2", "_3", …
type idSet struct{ used map[string]bool }

func newIDs() *idSet { return &idSet{used: map[string]bool{}} }

func (s *idSet) add(name string) string {
	base := SafeID(name)
	id := base
	for k := 2; s.used[strings.ToLower(id)]; k++ {
		id = base + "_" + strconv.Itoa(k)
	}
	s.used[strings.ToLower(id)] = true
	return id
}

func (s *idSet) remove(id string) { delete(s.used, strings.ToLower(id)) }
