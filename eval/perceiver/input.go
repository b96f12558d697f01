package perceiver

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // registers the JPEG decoder for image.Decode
	_ "image/png"  // registers the PNG decoder for image.Decode
	"math"
	"regexp"
	"strings"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
)

// InputError is a request the perceiver cannot read: a data URL that is
// not an image or video, broken base64, an undecodable picture, a limit
// exceeded. The server answers it with HTTP 400 and Code. Param names the
// offending part ("messages[1].content[3]") when known.
type InputError struct {
	Param string
	Code  string // invalid_image_url, invalid_base64, invalid_image, invalid_video, too_many_frames, image_too_large, unsupported_content
	Msg   string
}

func (e *InputError) Error() string {
	if e.Param != "" {
		return e.Param + ": " + e.Msg
	}
	return e.Msg
}

// ErrInput is matched (errors.Is) by every *InputError.
var ErrInput = errors.New("perceiver: invalid input")

// Is makes errors.Is(err, ErrInput) true for input errors.
func (e *InputError) Is(target error) bool { return target == ErrInput }

func inputErr(param, code, format string, args ...any) *InputError {
	return &InputError{Param: param, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Limits bound what one request may ask the perceiver to decode.
type Limits struct {
	// MaxFrames is the most pictures (images plus sampled video frames) of
	// one request; default 4096.
	MaxFrames int
	// MaxPixels is the most pixels of one image or video frame; default
	// 4096×4096. Larger pictures are refused before they are decoded.
	MaxPixels int
	// VideoRate is the rate, frames per second, at which a video part is
	// sampled (t_j = j/VideoRate); default 2.
	VideoRate float64
	// VideoMaxWidth scales decoded video frames down to at most this
	// width (aspect kept); default 1280.
	VideoMaxWidth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFrames <= 0 {
		l.MaxFrames = 4096
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = 4096 * 4096
	}
	if !(l.VideoRate > 0) || math.IsInf(l.VideoRate, 0) {
		l.VideoRate = 2
	}
	if l.VideoMaxWidth <= 0 {
		l.VideoMaxWidth = 1280
	}
	return l
}

// frameRef is one picture of the request, not yet decoded: its encoded
// bytes, or a time in a video.
type frameRef struct {
	pos      int     // place in the shown order
	t        float64 // seconds, from its label (or the video sampling)
	labelled bool
	data     []byte // PNG or JPEG; nil for a video frame
	video    *videoRef
	w, h     int    // picture size
	detail   string // the image part's detail hint (low, high, auto, "")
}

type videoRef struct {
	v    *encode.Video
	w, h int // decode size
}

// Input is a request as the perceiver reads it: the question (the text of
// the system and user messages without the frame and video labels) and the
// pictures in the order shown, each with the time its label states. Close
// releases decoded videos.
type Input struct {
	Question string
	frames   []frameRef
	videos   []*videoRef
	// Unlabelled counts pictures with no frame label before them.
	Unlabelled int
}

// Frames returns how many pictures the input shows.
func (in *Input) Frames() int { return len(in.frames) }

// Close frees the decoders of video parts. It is idempotent and nil-safe.
func (in *Input) Close() {
	if in == nil {
		return
	}
	for _, v := range in.videos {
		v.v.Close()
	}
	in.videos = nil
}

// videoLabelPattern matches chat.VideoLabel.
var videoLabelPattern = regexp.MustCompile(`Video, \d+(?:\.\d+)? s long, starting at t = \d+(?:\.\d+)? s`)

// ReadMessages turns chat messages into an Input: it checks and
// base64-decodes every data URL, reads the frame label (chat.FrameLabel,
// or chat.PositionLabel, which gives no time) of the text part just before
// each image, and opens video parts for
// sampling at lim.VideoRate. Errors are *InputError. Assistant messages
// add neither question text nor pictures (a multi-turn conversation is
// answered from the pictures again, not from the earlier reply).
func ReadMessages(msgs []chat.Message, lim Limits) (*Input, error) {
	lim = lim.withDefaults()
	in := &Input{}
	var q []string
	pos := 0
	for mi, m := range msgs {
		if m.Role == chat.RoleAssistant {
			continue
		}
		// The time of the frame label in the text part just before, for
		// the image that follows it.
		labelT, labelled := 0.0, false
		for pi, p := range m.Parts {
			param := fmt.Sprintf("messages[%d].content[%d]", mi, pi)
			switch p.Type {
			case chat.TypeText:
				rest := p.Text
				labelled = false
				// A time label ("Frame k of M at t = T s") gives the
				// image its time; a position label ("Frame k of M", label
				// mode position) gives none, so the image is untimed
				// like one with no label (chat.Labels).
				if _, _, t, timed, ok := chat.ParseAnyFrameLabel(rest); ok {
					labelT, labelled = t, timed
					rest = chat.AnyFrameLabelPattern.ReplaceAllString(rest, "")
				}
				rest = videoLabelPattern.ReplaceAllString(rest, "")
				if s := strings.TrimSpace(rest); s != "" {
					q = append(q, s)
				}
			case chat.TypeImage:
				data, cfg, err := imageData(p.URL, param, lim)
				if err != nil {
					in.Close()
					return nil, err
				}
				f := frameRef{pos: pos, data: data, w: cfg.Width, h: cfg.Height, detail: p.Detail, t: labelT, labelled: labelled}
				if !labelled {
					f.t = 0
					in.Unlabelled++
				}
				labelled = false
				in.frames = append(in.frames, f)
				pos++
			case chat.TypeVideo:
				labelled = false
				v, err := openVideo(p.URL, param, lim)
				if err != nil {
					in.Close()
					return nil, err
				}
				in.videos = append(in.videos, v)
				dur := v.v.Info().Duration
				n := max(1, int(math.Ceil(dur*lim.VideoRate-1e-9)))
				if len(in.frames)+n > lim.MaxFrames {
					in.Close()
					return nil, inputErr(param, "too_many_frames", "the video gives %d frames at %g frames/s, over the limit of %d frames per request", n, lim.VideoRate, lim.MaxFrames)
				}
				for j := range n {
					in.frames = append(in.frames, frameRef{pos: pos, t: float64(j) / lim.VideoRate, labelled: true, video: v, w: v.w, h: v.h, detail: "low"})
					pos++
				}
			default:
				in.Close()
				return nil, inputErr(param+".type", "unsupported_content", "content part type %q is not supported (text, image_url, video_url)", p.Type)
			}
			if len(in.frames) > lim.MaxFrames {
				in.Close()
				return nil, inputErr(param, "too_many_frames", "more than %d pictures in one request", lim.MaxFrames)
			}
		}
	}
	in.Question = strings.Join(q, "\n")
	return in, nil
}

// dataURL splits "data:<media type>[;params][;base64],<payload>" and
// decodes the payload.
func dataURL(url, param string) (mediaType string, data []byte, err error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		scheme := url
		if i := strings.Index(url, ":"); i >= 0 && i < 16 {
			scheme = url[:i]
		} else if len(scheme) > 16 {
			scheme = scheme[:16] + "…"
		}
		return "", nil, inputErr(param, "invalid_image_url", "only data: URLs are accepted (the server fetches nothing); got %q", scheme)
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, inputErr(param, "invalid_image_url", "malformed data URL: no comma before the payload")
	}
	fields := strings.Split(meta, ";")
	mediaType = strings.ToLower(strings.TrimSpace(fields[0]))
	b64 := false
	for _, f := range fields[1:] {
		if strings.EqualFold(strings.TrimSpace(f), "base64") {
			b64 = true
		}
	}
	if !b64 {
		return mediaType, nil, inputErr(param, "invalid_image_url", "data URL of type %q is not base64-encoded", mediaType)
	}
	data, err = decodeBase64(payload)
	if err != nil {
		return mediaType, nil, inputErr(param, "invalid_base64", "the data URL's base64 payload is broken: %v", err)
	}
	if len(data) == 0 {
		return mediaType, nil, inputErr(param, "invalid_base64", "the data URL's payload is empty")
	}
	return mediaType, data, nil
}

// decodeBase64 accepts standard base64 with or without padding.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "=") || len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// imageData checks an image_url part: a base64 data URL of a PNG or JPEG
// picture, within the size limit (read from the header, before decoding).
func imageData(url, param string, lim Limits) ([]byte, image.Config, error) {
	var none image.Config
	mt, data, err := dataURL(url, param)
	if err != nil {
		return nil, none, err
	}
	switch mt {
	case "image/png", "image/jpeg", "image/jpg":
	default:
		return nil, none, inputErr(param, "invalid_image_url", "data URL of type %q is not an image this server reads (image/png, image/jpeg)", mt)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, none, inputErr(param, "invalid_image", "the %s data is not a readable PNG or JPEG image: %v", mt, err)
	}
	if format != "png" && format != "jpeg" {
		return nil, none, inputErr(param, "invalid_image", "the image is %s, not PNG or JPEG", format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > lim.MaxPixels {
		return nil, none, inputErr(param, "image_too_large", "image of %dx%d pixels is over the limit of %d pixels", cfg.Width, cfg.Height, lim.MaxPixels)
	}
	return data, cfg, nil
}

// openVideo opens a video_url's data for sampling, from memory: only
// MP4/MOV and WebM/Matroska are accepted (encode.OpenVideoData forces the
// demuxer and lets libav open no file, URL or other input, whatever the
// data names), and no error names a server path.
func openVideo(url, param string, lim Limits) (*videoRef, error) {
	mt, data, err := dataURL(url, param)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(mt, "video/") {
		return nil, inputErr(param, "invalid_video", "data URL of type %q is not a video", mt)
	}
	v, err := encode.OpenVideoData(data)
	if err != nil {
		return nil, inputErr(param, "invalid_video", "the video cannot be decoded: %s", strings.TrimPrefix(err.Error(), "encode: "))
	}
	info := v.Info()
	if info.Width <= 0 || info.Height <= 0 || !(info.Duration > 0) {
		v.Close()
		return nil, inputErr(param, "invalid_video", "the video has no usable frames (%dx%d, %.3f s)", info.Width, info.Height, info.Duration)
	}
	w, h := info.Width, info.Height
	if w > lim.VideoMaxWidth {
		h = max(2, int(math.Round(float64(h)*float64(lim.VideoMaxWidth)/float64(w)))/2*2)
		w = lim.VideoMaxWidth
	}
	if w*h > lim.MaxPixels {
		v.Close()
		return nil, inputErr(param, "image_too_large", "video frames of %dx%d pixels are over the limit of %d pixels", w, h, lim.MaxPixels)
	}
	return &videoRef{v: v, w: w, h: h}, nil
}
