package preview

import (
	"fmt"
	"strings"
)

// Key is a player command: what a key press in the window does.
type Key int

// Keys. KeyNone is a script's "tick": no key, one clip frame of time
// passes.
const (
	KeyNone        Key = iota
	KeyPause           // space: pause, resume (from the start once at the end)
	KeyStepBack        // left: one clip frame back, paused
	KeyStepForward     // right: one clip frame on, paused
	KeyPrevEvent       // shift+left: the previous true event, paused
	KeyNextEvent       // shift+right: the next true event, paused
	KeyFaster          // +: double the speed, up to 4×
	KeySlower          // -: halve the speed, down to ¼×
	KeyOverlay         // o: overlay on or off
	KeyQuit            // q, Esc
)

// keyNames are the names a script uses, in documentation order.
var keyNames = []struct {
	name string
	key  Key
}{
	{"tick", KeyNone}, {"space", KeyPause}, {"left", KeyStepBack}, {"right", KeyStepForward},
	{"shift+left", KeyPrevEvent}, {"shift+right", KeyNextEvent}, {"+", KeyFaster}, {"-", KeySlower},
	{"o", KeyOverlay}, {"q", KeyQuit}, {"esc", KeyQuit},
}

// String is the key's script name.
func (k Key) String() string {
	for _, n := range keyNames {
		if n.key == k {
			return n.name
		}
	}
	return fmt.Sprintf("Key(%d)", int(k))
}

// MaxScript bounds a script's length: each token is one presented frame,
// and a test needs a handful.
const MaxScript = 10000

// ParseScript reads a key script: comma-separated key names (tick, space,
// left, right, shift+left, shift+right, +, -, o, q, esc), e.g.
// "space,right,shift+right".
func ParseScript(s string) ([]Key, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("key script is empty: give comma-separated keys (%s)", scriptNames())
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxScript {
		return nil, fmt.Errorf("key script has %d keys, more than %d", len(parts), MaxScript)
	}
	keys := make([]Key, 0, len(parts))
	for i, p := range parts {
		name := strings.ToLower(strings.TrimSpace(p))
		k, ok := lookupKey(name)
		if !ok {
			return nil, fmt.Errorf("key script: key %d %q is not one of %s", i+1, p, scriptNames())
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func lookupKey(name string) (Key, bool) {
	for _, n := range keyNames {
		if n.name == name {
			return n.key, true
		}
	}
	return 0, false
}

func scriptNames() string {
	names := make([]string, len(keyNames))
	for i, n := range keyNames {
		names[i] = n.name
	}
	return strings.Join(names, ", ")
}
