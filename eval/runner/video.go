package runner

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image/draw"
	"image/png"
	"os"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/rgba"
)

// The encoder of a condition sent as video (as: video). libx264 at CRF 10
// in its default High profile, yuv420p: near-lossless on rendered scenes
// (every frame ≥ 40 dB PSNR against the rendered frame, tested) and
// decodable by every server's video loader. Lossless qp 0 would need the
// High 4:4:4 Predictive profile, which many decoders refuse. One thread:
// the run already encodes one video per worker, and x264's output is then
// the same bytes on every run (the prompt hash records the length).
const (
	VideoCodec  = "libx264"
	VideoCRF    = 10
	VideoPreset = "veryfast"
)

// checkVideoConditions plans every clip under every condition sent as
// video and refuses, before anything is sent, a plan that is not one
// constant whole rate (uniform:M whose M/duration is not whole, a rate
// above Gemini's videoMetadata.fps range). The error wraps study.ErrStudy
// (bad input) and names the condition and clip.
func checkVideoConditions(st *study.Study, clips []*clipData) error {
	var errs []error
	for _, cond := range st.Conditions {
		if !cond.Video() {
			continue
		}
		pol, err := sampling.Parse(cond.Policy)
		if err != nil {
			return err
		}
		for _, c := range clips {
			plan, err := pol.Plan(sampling.Clip{ID: c.clip.ID, Duration: c.clip.Duration, FPS: c.clip.FPS, Seed: c.clip.Seed})
			if err != nil || len(plan.Frames) == 0 {
				continue // the trial reports it (not applicable, a plan error)
			}
			rate, err := study.VideoRate(plan, c.clip.Duration)
			if err != nil {
				errs = append(errs, fmt.Errorf("condition %s as video on clip %s: %w", cond.Policy, c.entry.ID, err))
				continue
			}
			for _, m := range st.Models {
				if m.ProviderName() == study.ProviderGemini && rate.Float() > client.MaxGeminiVideoFPS {
					errs = append(errs, fmt.Errorf("%w: condition %s as video on clip %s: %g frames per second for model %s, above Gemini's videoMetadata.fps range (0, %d]",
						study.ErrStudy, cond.Policy, c.entry.ID, rate.Float(), m.Name, client.MaxGeminiVideoFPS))
				}
			}
		}
		if len(errs) >= 5 {
			break
		}
	}
	return errors.Join(errs...)
}

// videoInput sends plan's frames as one MP4 (the input of a condition
// sent as video): each frame rendered (or decoded) exactly as for images,
// as PNG so that nothing is lost before the video encoder, then encoded
// at the plan's constant rate (a fraction where M/duration is one), every
// frame once, in time order. The trial's
// frame times stay the plan's: they are the video's frames.
func videoInput(ctx context.Context, src FrameSource, c *Clip, m study.Model, in prompts.Input, plan sampling.Plan) (prompts.Input, sampling.Plan, int64, error) {
	rate, err := study.VideoRate(plan, c.Duration)
	if err != nil {
		return in, plan, 0, err
	}
	w, h := m.ImageWidth, m.ImageHeight
	if w <= 0 || h <= 0 {
		w, h = c.Width, c.Height
	}
	w, h = w&^1, h&^1 // yuv420p needs an even size; an odd clip is letterboxed by a pixel
	mp4, err := encodeVideo(ctx, src, c, plan, w, h, rate)
	if err != nil {
		return in, plan, 0, fmt.Errorf("clip %s as video: %w", c.ID, err)
	}
	in.VideoURL = "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(mp4)
	// A video is introduced by its own label (chat.VideoLabel); the
	// frames' label mode does not apply.
	in.Labels = ""
	return in, plan, int64(len(mp4)), nil
}

// encodeVideo writes the plan's frames at rate into a temporary MP4 and
// returns its bytes.
func encodeVideo(ctx context.Context, src FrameSource, c *Clip, plan sampling.Plan, w, h int, rate study.Rate) ([]byte, error) {
	f, err := fsutil.CreateTemp("", "tracegrid-video-*.mp4")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	wr, err := encode.Create(path, encode.Options{Width: w, Height: h, Rate: encode.Rate{Num: rate.Num, Den: rate.Den}, Codec: VideoCodec, Preset: VideoPreset, CRF: VideoCRF, Threads: 1})
	if err != nil {
		return nil, err
	}
	n := 0
	for img, err := range src.Frames(ctx, c, plan, frames.Options{Format: encode.ImagePNG, Width: w, Height: h, Workers: 1}) {
		if err == nil {
			var px rgba.Image
			if px, err = decodePNG(img.Data); err == nil {
				err = wr.WriteRGBA(px)
			}
		}
		if err != nil {
			wr.Abort()
			return nil, err
		}
		n++
	}
	if err := wr.Close(); err != nil {
		return nil, err
	}
	if n != len(plan.Frames) {
		return nil, fmt.Errorf("%d of %d frames came from the frame source", n, len(plan.Frames))
	}
	return os.ReadFile(path)
}

// decodePNG reads a frame source's PNG into an RGBA image.
func decodePNG(b []byte) (rgba.Image, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return rgba.Image{}, fmt.Errorf("frame PNG: %w", err)
	}
	r := img.Bounds()
	out := rgba.New(r.Dx(), r.Dy())
	dst := out.RGBA()
	draw.Draw(dst, dst.Bounds(), img, r.Min, draw.Src)
	return out, nil
}

// videoRequest adds to req what a video part needs besides its bytes: the
// rate (Gemini's videoMetadata.fps) and, for a server that documents them,
// the request fields that keep every frame (study.Model.VideoBody). A
// condition sent as video gives its plan's rate (presampled); a native:R
// condition sending the clip's own MP4 gives R (the server samples it).
func videoRequest(req *client.Request, m study.Model, cond study.Condition, plan sampling.Plan, duration float64) {
	if cond.Video() {
		rate, err := study.VideoRate(plan, duration)
		if err != nil {
			return // the input was refused already
		}
		req.VideoFPS = rate.Float()
		req.Body = m.VideoBody(rate.Float(), true)
		return
	}
	if !m.Video.Supported {
		return
	}
	if pol, err := sampling.Parse(cond.Policy); err == nil {
		if r, ok := study.NativeRate(pol); ok {
			req.VideoFPS = r
			req.Body = m.VideoBody(r, false)
		}
	}
}
