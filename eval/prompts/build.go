package prompts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// Frame is one image of the request, in the order shown.
type Frame struct {
	// Position is the frame's place in the shown sequence, from 0; it must
	// equal the frame's index in Input.Frames.
	Position int
	// T is the sample time in seconds from the start of the clip.
	T float64
	// DataURL is the image (data:image/jpeg;base64,… or an https URL).
	DataURL string
}

// Input is what one trial shows the model: frames, or the native video.
type Input struct {
	// Domain selects the question: bounce_ball, blinking, state_machine,
	// natural or objects.
	Domain string
	// Class is the objects domain's "<shape>-<colour>" (trace.Trace.Class,
	// e.g. "cube-red"), which the question names; required for objects and
	// an error for every other domain.
	Class string
	// Duration of the clip in seconds.
	Duration float64
	// Frames in the order shown; empty with VideoURL (and for a policy
	// that gives no frames, e.g. keyframes on an N=0 clip).
	Frames []Frame
	// VideoURL is the native video (data:video/mp4;base64,…), sent
	// instead of frames.
	VideoURL string
	// Detail is the image detail hint copied to every image part (low,
	// high, auto; empty sends none).
	Detail string
	// Labels is how each frame is introduced (chat.Labels): its time,
	// its position only, or nothing; empty means chat.LabelsTime.
	Labels chat.Labels
}

// labels is in.Labels with its default.
func (in Input) labels() chat.Labels {
	if in.Labels == "" {
		return chat.LabelsTime
	}
	return in.Labels
}

// data checks in and makes the template data.
func (in Input) data() (Data, error) {
	q, err := QuestionFor(in.Domain, in.Class)
	if err != nil {
		return Data{}, err
	}
	if !(in.Duration > 0) || math.IsInf(in.Duration, 0) {
		return Data{}, fmt.Errorf("prompts: duration %v s is not a positive number", in.Duration)
	}
	if in.VideoURL != "" && len(in.Frames) > 0 {
		return Data{}, fmt.Errorf("prompts: both a video and %d frames given; send one or the other", len(in.Frames))
	}
	for i, f := range in.Frames {
		if f.Position != i {
			return Data{}, fmt.Errorf("prompts: frame %d has position %d; give frames in shown order, positions 0…%d", i, f.Position, len(in.Frames)-1)
		}
		if !(f.T >= 0) || math.IsInf(f.T, 0) {
			return Data{}, fmt.Errorf("prompts: frame %d: time %v s is not a time in the clip", i, f.T)
		}
		if f.DataURL == "" {
			return Data{}, fmt.Errorf("prompts: frame %d (t = %.3f s) has no image", i, f.T)
		}
	}
	labels := in.labels()
	if _, err := chat.ParseLabels(string(labels)); err != nil {
		return Data{}, fmt.Errorf("prompts: %w", err)
	}
	video := in.VideoURL != ""
	return Data{Question: q.Text, Domain: in.Domain, EventNoun: q.EventNoun, Attributes: q.Attributes,
		Duration: in.Duration, Frames: len(in.Frames), Video: video, Labels: string(labels), Timed: video || labels.Timed()}, nil
}

// Build makes the first turn's messages: the system message when the
// template has one, then one user message holding the instructions text
// and, for every frame in the given order, the text part of its label
// (in.Labels: chat.FrameLabel(position, total, t), chat.PositionLabel or,
// for chat.LabelsNone, no text part) followed by the image part {URL:
// DataURL, Detail}; with a native video, a text part chat.VideoLabel and
// the video part instead. Build also renders the follow-up turn, so a
// template that builds has a FollowUpMessage that cannot fail.
func (t Template) Build(in Input) ([]chat.Message, error) {
	d, err := in.data()
	if err != nil {
		return nil, fmt.Errorf("%w (prompt %s)", err, t.Name)
	}
	system, user, _, err := t.render(d)
	if err != nil {
		return nil, err
	}
	var msgs []chat.Message
	if system != "" {
		msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Parts: []chat.Part{chat.Text(system)}})
	}
	parts := make([]chat.Part, 0, 1+2*len(in.Frames)+2)
	parts = append(parts, chat.Text(user))
	if in.VideoURL != "" {
		parts = append(parts, chat.Text(chat.VideoLabel(in.Duration)), chat.Part{Type: chat.TypeVideo, URL: in.VideoURL})
	}
	labels := in.labels()
	for _, f := range in.Frames {
		if l := labels.Label(f.Position, len(in.Frames), f.T); l != "" {
			parts = append(parts, chat.Text(l))
		}
		parts = append(parts, chat.Part{Type: chat.TypeImage, URL: f.DataURL, Detail: in.Detail})
	}
	return append(msgs, chat.Message{Role: chat.RoleUser, Parts: parts}), nil
}

// FollowUpMessage is the second turn's user message of a two-turn template
// (multi_turn_verification): the follow-up text for the same input. The
// caller sends it after the first turn's messages and the model's reply
// (as an assistant message). ok is false for single-turn templates, and
// for an input that Build rejects.
func (t Template) FollowUpMessage(in Input) (chat.Message, bool) {
	if strings.TrimSpace(t.FollowUp) == "" {
		return chat.Message{}, false
	}
	d, err := in.data()
	if err != nil {
		return chat.Message{}, false
	}
	_, _, follow, err := t.render(d)
	if err != nil || follow == "" {
		return chat.Message{}, false
	}
	return chat.Message{Role: chat.RoleUser, Parts: []chat.Part{chat.Text(follow)}}, true
}

// Turns is the number of requests one trial makes: 2 with a follow-up,
// else 1.
func (t Template) Turns() int {
	if strings.TrimSpace(t.FollowUp) != "" {
		return 2
	}
	return 1
}

// hashVersion names the hashed layout; change it when the layout changes.
const hashVersion = "tracegrid-prompt-hash/1"

// Hash identifies a request's prompt for the results' prompt_hash: the
// SHA-256 (hex) of an unambiguous, length-prefixed encoding of the
// messages: per message its role and number of parts; per part its type,
// its text (instructions, frame labels with their times, the video label),
// its detail hint and, for image and video parts, the URL's media header
// (the part of a data: URL before the comma, e.g. "data:image/jpeg;base64";
// a URL that is not a data: URL whole) and the URL's length in bytes — not
// the image or video bytes themselves. Equal hashes mean the same wording,
// roles, order, frame times and detail, the same number and kind of images
// and the same encoded sizes; the pixels are identified by the clip,
// policy and frame times stored beside the hash.
func Hash(msgs []chat.Message) string {
	h := sha256.New()
	str := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	str(hashVersion)
	str(strconv.Itoa(len(msgs)))
	for _, m := range msgs {
		str(m.Role)
		str(strconv.Itoa(len(m.Parts)))
		for _, p := range m.Parts {
			str(p.Type)
			str(p.Text)
			str(p.Detail)
			media := p.URL
			if strings.HasPrefix(p.URL, "data:") {
				media, _, _ = strings.Cut(p.URL, ",")
			}
			str(media)
			str(strconv.Itoa(len(p.URL)))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
