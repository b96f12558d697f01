package chat

import (
	"fmt"
	"regexp"
	"strconv"
)

// Labels is how the text part before each frame's image introduces it:
// the label mode of a condition. The mode decides what the model is told
// besides the pixels, so it is part of every condition's key: a label
// that states a frame's time also states when the events are under a
// policy that places frames at the events (keyframes), or the true order
// under one that shuffles them (shuffled:M).
type Labels string

// Label modes.
const (
	// LabelsTime: "Frame k of M at t = T s", the frame's place in the
	// shown order and its sample time to the millisecond.
	LabelsTime Labels = "time"
	// LabelsPosition: "Frame k of M", the place in the shown order only.
	LabelsPosition Labels = "position"
	// LabelsNone: no text part before the images at all.
	LabelsNone Labels = "none"
)

// LabelModes lists the label modes in documentation order.
var LabelModes = []Labels{LabelsTime, LabelsPosition, LabelsNone}

// ParseLabels reads a label mode name (time, position or none).
func ParseLabels(s string) (Labels, error) {
	for _, l := range LabelModes {
		if s == string(l) {
			return l, nil
		}
	}
	return "", fmt.Errorf("labels %q: want time, position or none", s)
}

// Timed reports whether the mode tells the model each frame's time.
func (l Labels) Timed() bool { return l == LabelsTime }

// Label is the text placed before the frame at position (0-based) of
// total shown frames sampled at t seconds; "" for LabelsNone, when no
// text part is sent.
func (l Labels) Label(position, total int, t float64) string {
	switch l {
	case LabelsTime:
		return FrameLabel(position, total, t)
	case LabelsPosition:
		return PositionLabel(position, total)
	}
	return ""
}

// PositionLabel is the LabelsPosition label: the frame's place in the
// shown sequence (1-based) without its time, e.g. "Frame 3 of 96".
func PositionLabel(position, total int) string {
	return fmt.Sprintf("Frame %d of %d", position+1, total)
}

// AnyFrameLabelPattern matches a label of either mode; groups: position
// (1-based), total and, for a time label, seconds ("" otherwise).
var AnyFrameLabelPattern = regexp.MustCompile(`Frame (\d+) of (\d+)(?: at t = (\d+(?:\.\d+)?) s)?`)

// ParseAnyFrameLabel reads the last frame label in s, of either mode:
// position (0-based), total and, when timed, the time. ok is false when s
// holds no label.
func ParseAnyFrameLabel(s string) (position, total int, t float64, timed, ok bool) {
	all := AnyFrameLabelPattern.FindAllStringSubmatch(s, -1)
	if all == nil {
		return 0, 0, 0, false, false
	}
	m := all[len(all)-1]
	p, err1 := strconv.Atoi(m[1])
	n, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || p < 1 {
		return 0, 0, 0, false, false
	}
	if m[3] == "" {
		return p - 1, n, 0, false, true
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return 0, 0, 0, false, false
	}
	return p - 1, n, v, true, true
}
