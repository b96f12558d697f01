// Package chat holds the provider-neutral shape of a model request — a
// list of messages made of text, image and video parts — and the frame
// label convention: the contract between the prompt builder (which writes
// it), the API client (which sends it) and the reference perceiver (which,
// like a model, reads only the text and pixels it is given).
package chat

import (
	"fmt"
	"regexp"
	"strconv"
)

// Part types.
const (
	TypeText  = "text"
	TypeImage = "image_url"
	TypeVideo = "video_url"
)

// Part is one piece of a message's content.
type Part struct {
	Type   string `json:"type"`
	Text   string `json:"text,omitempty"`
	URL    string `json:"url,omitempty"`    // data URL (image/jpeg, image/png, video/mp4) or https URL
	Detail string `json:"detail,omitempty"` // image detail hint: low, high, auto
}

// Roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat message.
type Message struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Text makes a text part.
func Text(s string) Part { return Part{Type: TypeText, Text: s} }

// FrameLabel is the text part placed immediately before each frame's image:
// its place in the shown sequence (1-based) and its timestamp in seconds
// with millisecond precision, e.g. "Frame 3 of 96 at t = 0.500 s".
func FrameLabel(position, total int, t float64) string {
	return fmt.Sprintf("Frame %d of %d at t = %.3f s", position+1, total, t)
}

// FrameLabelPattern matches FrameLabel; groups: position (1-based), total,
// seconds.
var FrameLabelPattern = regexp.MustCompile(`Frame (\d+) of (\d+) at t = (\d+(?:\.\d+)?) s`)

// ParseFrameLabel reads a frame label back: position (0-based), total and
// time. ok is false when s holds no label.
func ParseFrameLabel(s string) (position, total int, t float64, ok bool) {
	m := FrameLabelPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, 0, false
	}
	p, err1 := strconv.Atoi(m[1])
	n, err2 := strconv.Atoi(m[2])
	v, err3 := strconv.ParseFloat(m[3], 64)
	if err1 != nil || err2 != nil || err3 != nil || p < 1 {
		return 0, 0, 0, false
	}
	return p - 1, n, v, true
}

// VideoLabel is the text part placed before a native video part.
func VideoLabel(duration float64) string {
	return fmt.Sprintf("Video, %.3f s long, starting at t = 0.000 s", duration)
}
