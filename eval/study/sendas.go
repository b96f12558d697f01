package study

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/sampling"
)

// How a condition's frames reach the model (Condition.SendAs, YAML "as").
const (
	// SendImages: one image part per sampled frame, each after its label
	// (the default; "" means the same).
	SendImages = "images"
	// SendVideo: the sampled frames as one constant-rate MP4 at the
	// policy's rate, every frame exactly once (runner/video.go).
	SendVideo = "video"
)

// LabelsVideo is the label mode a condition sent as one video is stored
// under (results.Key.Labels): a video has no text label per frame; its
// frames are placed by the video's own timestamps. It keeps the trials of
// fps:2 as video apart from those of fps:2 as images.
const LabelsVideo = "video"

// Server kinds of an openai model (Model.Server): what a request with a
// video carries so that the server keeps every frame it is sent.
const (
	// ServerVLLM: vLLM. A video request carries media_io_kwargs
	// {"video": {"num_frames": -1}} (vLLM's loader keeps 32 frames of a
	// video otherwise) and mm_processor_kwargs {"fps": rate,
	// "do_sample_frames": false} for frames tracegrid sampled (true for
	// a clip's own MP4, which the processor samples at the rate).
	ServerVLLM = "vllm"
	// ServerSGLang: SGLang documents no request field for a video's frames;
	// it takes them at start (--mm-process-config), so nothing is added.
	ServerSGLang = "sglang"
	// ServerOther: any other server (the default): nothing is added.
	ServerOther = "other"
)

// ServerKinds are the server kinds a model may name.
var ServerKinds = []string{ServerVLLM, ServerSGLang, ServerOther}

// MaxVideoRate is the highest frame rate a condition sent as video may
// have: the MP4 writer's (encode.MaxFPS).
const MaxVideoRate = 240

// Video reports whether the condition's frames are sent as one video.
func (c Condition) Video() bool { return c.SendAs == SendVideo }

// ServerName is the model's server kind with its default.
func (m Model) ServerName() string {
	if m.Server == "" {
		return ServerOther
	}
	return m.Server
}

// VideoBody is what a request with a video part carries at its top level
// for m's server (ServerVLLM); nil for other servers. presampled says the
// video holds exactly the frames to be seen, at rate frames per second
// (a condition sent as video); otherwise it is a clip's own MP4, which the
// server's processor samples at rate (native:R).
func (m Model) VideoBody(rate float64, presampled bool) map[string]any {
	if m.ProviderName() != ProviderOpenAI || m.ServerName() != ServerVLLM {
		return nil
	}
	return map[string]any{
		"media_io_kwargs":     map[string]any{"video": map[string]any{"num_frames": -1}},
		"mm_processor_kwargs": map[string]any{"fps": rate, "do_sample_frames": !presampled},
	}
}

// serverKeys are the extra_body fields a vllm model may not set: the
// client writes them on every video request (VideoBody).
var serverKeys = []string{"media_io_kwargs", "mm_processor_kwargs.fps", "mm_processor_kwargs.do_sample_frames"}

// checkServer returns the problems of the model's server field.
func (m Model) checkServer() []error {
	var errs []error
	switch m.Server {
	case "", ServerOther, ServerSGLang:
	case ServerVLLM:
		kw, _ := m.ExtraBody["mm_processor_kwargs"].(map[string]any)
		var set []string
		for _, k := range serverKeys {
			top, sub, nested := strings.Cut(k, ".")
			if _, ok := m.ExtraBody[top]; ok && !nested {
				set = append(set, k)
			} else if _, ok := kw[sub]; ok && nested {
				set = append(set, k)
			}
		}
		if len(set) > 0 {
			errs = append(errs, fmt.Errorf("extra_body sets %s, which a server: vllm model is sent with every video by tracegrid (every frame kept, the processor at the video's rate); leave them out", strings.Join(set, ", ")))
		}
	default:
		errs = append(errs, fmt.Errorf("server %q: want %s", m.Server, strings.Join(ServerKinds, ", ")))
	}
	if m.Server != "" && m.ProviderName() != ProviderOpenAI {
		errs = append(errs, fmt.Errorf("server %q: only an openai model has a server kind (a gemini model is Google's API)", m.Server))
	}
	return errs
}

// checkSendAs returns the problems of condition c (defaults applied)
// sent as c.SendAs to the study's models, each naming what is wrong and
// why; pol is c's parsed policy.
func (s *Study) checkSendAs(c Condition, pol sampling.Policy) []error {
	switch c.SendAs {
	case "":
		return nil
	case SendVideo:
	default:
		return []error{fmt.Errorf("as %q: want images (one image part per frame, the default) or video (the frames as one MP4)", c.SendAs)}
	}
	var errs []error
	name := pol.String()
	kind, _, _ := strings.Cut(name, ":")
	switch kind {
	case "fps", "uniform", "native":
	default:
		why := map[string]string{
			"keyframes": "it places frames around the true events",
			"adaptive":  "it places frames where the pixels change",
			"shuffled":  "it shows the frames out of time order",
			"single":    "it shows one frame",
		}[kind]
		errs = append(errs, fmt.Errorf("as: video needs evenly spaced samples in time order (one constant-rate video, every frame once), and %s does not: %s; send it as images", name, why))
	}
	if c.Labels != LabelsVideo {
		errs = append(errs, fmt.Errorf("as: video with labels %s: a video carries its own timestamps, which no label mode can hide; leave labels out (or time)", c.Labels))
	}
	if r, ok := policyRate(name); ok && len(errs) == 0 {
		if err := videoRateOK(r); err != nil {
			errs = append(errs, fmt.Errorf("as: video at %s: %w", name, err))
		}
	}
	for _, m := range s.Models {
		if !m.Video.Supported {
			errs = append(errs, fmt.Errorf("as: video for model %s, which takes no video (video.supported is false); set video.supported if its server takes a video_url part, or send as images", m.Name))
			continue
		}
		if fps, ok := m.VideoFPSParam(); ok && m.ProviderName() == ProviderOpenAI {
			if r, known := policyRate(name); !known || r != fps {
				errs = append(errs, fmt.Errorf("as: video for model %s, whose extra_body.mm_processor_kwargs.fps %v would make the server resample the video: the model would not see every frame sent; leave it out (server: vllm sends the video's own rate)", m.Name, fps))
			}
		}
		if r, ok := policyRate(name); ok && m.ProviderName() == ProviderGemini && r > client.MaxGeminiVideoFPS {
			errs = append(errs, fmt.Errorf("as: video at %v frames per second for model %s: Gemini's videoMetadata.fps must be in (0, %d]", r, m.Name, client.MaxGeminiVideoFPS))
		}
	}
	return errs
}

// policyRate is K of fps:K (with or without a frame cap: the uncapped
// rate) and R of native[:R]; ok is false for other policies, whose rate
// depends on the clip.
func policyRate(name string) (float64, bool) {
	kind, arg, _ := strings.Cut(name, ":")
	if kind != "fps" && kind != "native" {
		return 0, false
	}
	arg, _, _ = strings.Cut(arg, ",")
	v, err := strconv.ParseFloat(arg, 64)
	return v, err == nil
}

// videoRateOK accepts a rate an MP4 sent as video can have: above 0 (a
// fraction such as uniform:10's 10/24 is fine) and at most MaxVideoRate.
func videoRateOK(r float64) error {
	if !(r > 0) || r > MaxVideoRate {
		return fmt.Errorf("the video's constant frame rate would be %s per second; an MP4 sent as video has at most %d frames per second: choose a slower policy, or send as images", strconv.FormatFloat(r, 'f', -1, 64), MaxVideoRate)
	}
	return nil
}

// Rate is a video's constant frame rate, Num/Den frames a second: the
// MP4 writer's (encode.Rate), exact where a float is not (uniform:10 over
// 24 s is 5/12).
type Rate struct{ Num, Den int }

// Float is the rate in frames a second.
func (r Rate) Float() float64 { return float64(r.Num) / float64(r.Den) }

// MaxRateDen bounds a Rate's denominator (encode.MaxRateDen).
const MaxRateDen = 1 << 20

// rational is the fraction nearest x with a denominator of at most
// MaxRateDen (continued fractions): the exact rate where x is one, e.g.
// M/D for a duration D of whole frames.
func rational(x float64) Rate {
	// Convergents h/k of x's continued fraction.
	h0, h1, k0, k1 := 0, 1, 1, 0
	f := x
	for range 64 {
		a := math.Floor(f)
		if a > 1<<30 {
			break
		}
		h2, k2 := int(a)*h1+h0, int(a)*k1+k0
		if k2 > MaxRateDen {
			break
		}
		h0, h1, k0, k1 = h1, h2, k1, k2
		if frac := f - a; frac < 1e-12 || math.Abs(float64(h1)/float64(k1)-x) < 1e-15*x {
			break
		} else {
			f = 1 / frac
		}
	}
	if k1 == 0 {
		return Rate{}
	}
	return Rate{h1, k1}
}

// ErrVideoPlan is wrapped by VideoRate's errors.
var ErrVideoPlan = errors.New("frames cannot be sent as one video")

// VideoRate is the constant frame rate of a plan sent as one video:
// frames in time order (positions equal indices), evenly spaced from t = 0
// (within a microsecond), at most MaxVideoRate a second, as the fraction
// the frame times give (uniform:10 over 24 s: 5/12). A one-frame plan
// takes the policy's own rate (fps:K, native:R), else 1/duration. The
// error wraps ErrVideoPlan and ErrStudy (bad input) and says why.
func VideoRate(plan sampling.Plan, duration float64) (Rate, error) {
	fail := func(format string, a ...any) (Rate, error) {
		return Rate{}, fmt.Errorf("%w: %w: %s: %s", ErrStudy, ErrVideoPlan, plan.Policy, fmt.Sprintf(format, a...))
	}
	fs := plan.Frames
	if len(fs) == 0 {
		return fail("no frames")
	}
	var rate float64
	if len(fs) == 1 {
		if r, ok := policyRate(plan.Policy); ok {
			rate = r
		} else {
			rate = 1 / duration
		}
	} else {
		// The whole span over the frames between: the nearest a float
		// gets to the grid's step.
		rate = float64(len(fs)-1) / (fs[len(fs)-1].T - fs[0].T)
	}
	if err := videoRateOK(rate); err != nil {
		return fail("%v", err)
	}
	r := rational(rate)
	if r.Num <= 0 {
		return fail("no frame rate for a step of %g s", 1/rate)
	}
	for j, f := range fs {
		if f.Position != j || f.Index != j {
			return fail("frame %d is shown at position %d: a video shows frames in time order", f.Index, f.Position)
		}
		if math.Abs(f.T-float64(j)*float64(r.Den)/float64(r.Num)) > 1e-6 {
			return fail("frame %d at t = %.6f s is not on the grid j·%d/%d s: a video needs evenly spaced frames", j, f.T, r.Den, r.Num)
		}
	}
	return r, nil
}

// chatLabelsOK says whether a label mode is one a condition sent as
// images may have (chat.ParseLabels), for Validate.
func chatLabelsOK(c Condition) error {
	if c.Video() {
		return nil // checkSendAs says what is wrong
	}
	_, err := chat.ParseLabels(c.Labels)
	return err
}
