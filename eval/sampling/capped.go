package sampling

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// capped is fps:K,max:M: K frames a second, or M evenly spaced frames when
// K would give more ("2 fps, at most 768 frames", VLMEvalKit issue 876).
// Either way the frames follow the time convention of the package: j/K
// uncapped, j·D/M capped (as uniform:M), so the plan is always evenly
// spaced and can be sent as one constant-rate video.
type capped struct {
	k float64
	m int
}

func (p capped) String() string { return "fps:" + fmtNum(p.k) + ",max:" + strconv.Itoa(p.m) }

// bites reports whether fps:K alone would give more than M frames on c
// (the same frame count as rate.Plan computes).
func (p capped) bites(c Clip) bool {
	return math.Ceil(c.Duration*p.k-1e-9) > float64(p.m)
}

func (p capped) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	// K is bounded by the clip's rate as for fps:K, cap or not: then a
	// biting cap (M < K·D ≤ the clip's frame count) never repeats frames
	// either, and a policy is refused or accepted for a clip by one rule.
	if !c.Exact && p.k > c.FPS*(1+1e-9) {
		return Plan{}, planError(p, c, "%s samples/s is faster than the clip's own %s fps: the extra samples would repeat clip frames (at most %s here; a rendered clip can be sampled between its frames with --exact)",
			fmtNum(p.k), fmtNum(c.FPS), fmtNum(c.FPS))
	}
	if !p.bites(c) {
		n := int(math.Ceil(c.Duration*p.k - 1e-9)) // ≤ M ≤ MaxPlanFrames
		ts := make([]float64, n)
		for j := range ts {
			ts[j] = float64(j) / p.k
		}
		return inOrder(p.String(), ts), nil
	}
	ts := make([]float64, p.m)
	for j := range ts {
		ts[j] = float64(j) * c.Duration / float64(p.m)
	}
	plan := inOrder(p.String(), ts)
	plan.Note = fmt.Sprintf("fps:%s gives %s frames over %s s, more than max %d: %d evenly spaced frames, one every %s s",
		fmtNum(p.k), fmtCount(math.Ceil(c.Duration*p.k-1e-9)), fmtNum(c.Duration), p.m, p.m, fmtNum(c.Duration/float64(p.m)))
	return plan, nil
}

// parseCapped reads "BASE,max:M" (s is the whole policy string, for
// errors). Only fps:K takes a cap: the other policies fix their frame
// count (uniform:M, shuffled:M, adaptive:B, single:*), follow the events
// (keyframes) or the model's native rate (native:R).
func parseCapped(s, base, limit string) (Policy, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s (accepted: %s)", ErrPolicy, s, fmt.Sprintf(format, a...), Policies)
	}
	name, arg, hasArg := strings.Cut(strings.TrimSpace(limit), ":")
	if strings.Contains(arg, ",") {
		return nil, bad("a policy takes one frame cap, one comma: fps:K,max:M")
	}
	if name != "max" {
		return nil, bad("only a frame cap max:M may follow the comma, as in fps:2,max:768 (a list of policies is split only before a policy name)")
	}
	if !hasArg {
		return nil, bad("max needs a frame count, e.g. fps:2,max:768")
	}
	m, err := strconv.Atoi(arg)
	if err != nil && errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(arg, "-") {
		return nil, bad("max:%s is above the limit of %d frames per plan", arg, MaxPlanFrames)
	}
	if err != nil || m <= 0 {
		return nil, bad("max:%s: M is not a positive whole number", arg)
	}
	if m > MaxPlanFrames {
		return nil, bad("max:%d is above the limit of %d frames per plan", m, MaxPlanFrames)
	}
	p, err := Parse(base)
	if err != nil {
		return nil, err
	}
	r, ok := p.(rate)
	if !ok || r.name != "fps" {
		return nil, bad("%s takes no frame cap: max:M goes with fps:K only (fps:K,max:M)", p)
	}
	return capped{k: r.k, m: m}, nil
}

// kinds are the policy names Parse knows; SplitList splits a list before
// them only.
var kinds = []string{"native", "fps", "keyframes", "adaptive", "single", "uniform", "shuffled"}

func isKind(item string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(item), ":")
	for _, k := range kinds {
		if name == k {
			return true
		}
	}
	return false
}

// SplitList splits comma-separated lists of policies (a flag such as
// `variants --policies`, a study's `policies`, whose items a flag or YAML
// parser may already have split at every comma) into policy strings. A
// comma separates two policies only when a policy name follows it
// (native, fps, keyframes, …); anything else after a comma stays with the
// policy before it, so "fps:1,fps:2,max:768" is fps:1 and fps:2,max:768,
// and ["fps:2", "max:768"] becomes "fps:2,max:768" again. Items are
// trimmed and empty ones dropped; Parse judges what is left.
func SplitList(items []string) []string {
	var out []string
	for _, it := range items {
		for _, s := range strings.Split(it, ",") {
			s = strings.TrimSpace(s)
			switch {
			case s == "":
			case len(out) > 0 && !isKind(s):
				out[len(out)-1] += "," + s
			default:
				out = append(out, s)
			}
		}
	}
	return out
}

// Evenly reports whether p's frames are evenly spaced in time and shown in
// time order on every clip, so that they can be sent as one video at a
// constant frame rate: fps:K, fps:K,max:M, native:R and uniform:M.
// keyframes, adaptive, single:* and shuffled:M (evenly spaced but shown
// out of order) are not.
func Evenly(p Policy) bool {
	switch p := p.(type) {
	case rate, capped:
		return true
	case uniform:
		return !p.shuffled
	}
	return false
}

// ConstantRate is the rate, in frames per second, of p's evenly spaced
// frames on clip c: K for fps:K and native:K; M/D for uniform:M; for
// fps:K,max:M, K where the cap does not bite and M/D where it does. ok is
// false for a policy that is not Evenly and for a clip without a positive
// finite duration.
func ConstantRate(p Policy, c Clip) (float64, bool) {
	if !(c.Duration > 0) || math.IsInf(c.Duration, 0) {
		return 0, false
	}
	switch p := p.(type) {
	case rate:
		return p.k, true
	case capped:
		if p.bites(c) {
			return float64(p.m) / c.Duration, true
		}
		return p.k, true
	case uniform:
		if !p.shuffled {
			return float64(p.m) / c.Duration, true
		}
	}
	return 0, false
}
