package fakemodel

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// DefaultVideoFrames is how many frames of a video vLLM's loader keeps
// when neither its start flags nor the request say otherwise
// (VideoMediaIO(num_frames=32) in vllm/multimodal/media/video.py).
const DefaultVideoFrames = 32

// VLLM answers chat requests as a vLLM server with a Qwen-style model
// does by default, so that the input audit can be tested without a GPU:
// the video loader keeps NumFrames frames of a video (spread evenly; 32 by
// default) unless the request asks for every frame
// (media_io_kwargs.video.num_frames: -1) and the server honours request
// kwargs; the processor then samples what was loaded at
// mm_processor_kwargs.fps (2 when unset) unless do_sample_frames is false.
// Images are counted one by one. The reported prompt tokens are
// TokensPerFrame per video frame kept, TokensPerImage per image, and a
// text count that deliberately differs from tracegrid's own estimate
// (bytes/3 + 6 per message + 20), as a real tokenizer does.
//
// Use it as the respond function: fakemodel.New(t, v.Respond).
type VLLM struct {
	// NumFrames is the server's start flag --media-io-kwargs
	// '{"video": {"num_frames": N}}': 0 is vLLM's default
	// (DefaultVideoFrames), -1 keeps every frame.
	NumFrames int
	// IgnoreRequestKwargs makes the server ignore media_io_kwargs sent in
	// a request (a server that reads them only from its start flags).
	IgnoreRequestKwargs bool
	// TokensPerFrame per video frame kept (default 64); TokensPerImage per
	// image (default 256).
	TokensPerFrame, TokensPerImage int
	// CompletionTokens of every reply (default 20); Text its content
	// (DefaultText when empty).
	CompletionTokens int
	Text             string

	mu   sync.Mutex
	seen []Seen
}

// Seen is what the VLLM stand-in made of one request's media.
type Seen struct {
	VideoFrames  int     // frames in the video file sent (0 without a video)
	Duration     float64 // the video's length in seconds
	Loaded       int     // frames the loader kept
	Frames       int     // video frames the processor kept (the model's input)
	Images       int
	PromptTokens int
}

// Seen lists what the stand-in saw of each answered request, in order.
func (v *VLLM) Seen() []Seen {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Seen(nil), v.seen...)
}

// Respond answers one request (see VLLM); a video it cannot read is a 400,
// as vLLM answers.
func (v *VLLM) Respond(r Request) Reply {
	s, err := v.look(r)
	if err != nil {
		return Reply{Status: 400, Body: `{"error":{"message":"` + jsonEscape(err.Error()) + `","type":"BadRequestError"}}`}
	}
	v.mu.Lock()
	v.seen = append(v.seen, s)
	v.mu.Unlock()
	return Reply{PromptTokens: s.PromptTokens, CompletionTokens: orInt(v.CompletionTokens, 20), Text: v.Text}
}

func (v *VLLM) look(r Request) (Seen, error) {
	s := Seen{Images: r.Images}
	tokens := (len(r.Text)+2)/3 + 6*r.Messages + 20 + s.Images*orInt(v.TokensPerImage, 256)
	for _, url := range videoURLs(r.Body) {
		b64, ok := strings.CutPrefix(url[strings.Index(url, ";")+1:], "base64,")
		if !ok || !strings.HasPrefix(url, "data:video/") {
			return s, errors.New("only data:video/…;base64 URLs are read")
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return s, fmt.Errorf("video is not base64: %v", err)
		}
		n, dur, err := MP4Frames(data)
		if err != nil {
			return s, err
		}
		s.VideoFrames, s.Duration = s.VideoFrames+n, s.Duration+dur
		keep := v.NumFrames
		if !v.IgnoreRequestKwargs {
			if k, ok := num(dig(r.Body, "media_io_kwargs", "video", "num_frames")); ok {
				keep = int(k)
			}
		}
		if keep == 0 {
			keep = DefaultVideoFrames
		}
		loaded := n
		if keep > 0 && n > keep {
			loaded = keep
		}
		frames := loaded
		if sample, ok := dig(r.Body, "mm_processor_kwargs", "do_sample_frames").(bool); !ok || sample {
			fps, ok := num(dig(r.Body, "mm_processor_kwargs", "fps"))
			if !ok {
				fps = 2
			}
			frames = min(loaded, max(1, int(dur*fps+0.5)))
		}
		s.Loaded += loaded
		s.Frames += frames
		tokens += frames * orInt(v.TokensPerFrame, 64)
	}
	s.PromptTokens = tokens
	return s, nil
}

// videoURLs are the URLs of the video_url parts of a request body.
func videoURLs(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		parts, _ := dig(m, "content").([]any)
		for _, p := range parts {
			if u, ok := dig(p, "video_url", "url").(string); ok {
				out = append(out, u)
			}
		}
	}
	return out
}

// dig is the value at a path of object keys, or nil.
func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func num(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

func orInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// MP4Frames reads the frame count (the sample count of the first video
// track's stsz box) and the duration (its mdhd) of an MP4 or MOV file,
// without decoding it.
func MP4Frames(b []byte) (frames int, seconds float64, err error) {
	var walk func(b []byte) bool
	var inVideo bool
	var timescale, duration uint64
	found := false
	walk = func(b []byte) bool {
		for len(b) >= 8 {
			size := uint64(binary.BigEndian.Uint32(b))
			typ := string(b[4:8])
			hdr := uint64(8)
			if size == 1 && len(b) >= 16 {
				size, hdr = binary.BigEndian.Uint64(b[8:]), 16
			} else if size == 0 {
				size = uint64(len(b))
			}
			if size < hdr || size > uint64(len(b)) {
				return false
			}
			body := b[hdr:size]
			switch typ {
			case "moov", "mdia", "minf", "stbl":
				if walk(body) {
					return true
				}
			case "trak":
				inVideo, timescale, duration = false, 0, 0
				if walk(body) {
					return true
				}
			case "mdhd":
				if len(body) >= 32 && body[0] == 1 {
					timescale, duration = uint64(binary.BigEndian.Uint32(body[20:])), binary.BigEndian.Uint64(body[24:])
				} else if len(body) >= 20 {
					timescale, duration = uint64(binary.BigEndian.Uint32(body[12:])), uint64(binary.BigEndian.Uint32(body[16:]))
				}
			case "hdlr":
				inVideo = len(body) >= 12 && string(body[8:12]) == "vide"
			case "stsz":
				if inVideo && len(body) >= 12 {
					frames = int(binary.BigEndian.Uint32(body[8:]))
					found = true
					return true
				}
			}
			b = b[size:]
		}
		return false
	}
	walk(b)
	if !found || timescale == 0 {
		return 0, 0, errors.New("not an MP4 with a video track (no stsz/mdhd)")
	}
	return frames, float64(duration) / float64(timescale), nil
}
