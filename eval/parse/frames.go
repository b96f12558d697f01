package parse

import (
	"math"
	"regexp"
	"sort"
)

// kFrame is a time read from a frame reference ("frame 5") through
// Options.FrameTimes.
const kFrame kind = kTable + 1

var (
	// A frame cue right before an integer: "frame 5", "Frame #5", "frames
	// 5", "frame no. 5", JSON "frame": 5.
	reFrameCue = regexp.MustCompile(`(?:^|[^a-z0-9_])(frames?)"?\s*(?:#|no\.|number|:|=)?\s*$`)
	// What joins the two ends of a frame range: "frames 5-7", "frames 5 to
	// 7", "frames 5 through 7", "frame 5 – frame 7".
	reFrameRangeConn = regexp.MustCompile(`^\s*(?:-|–|—|to|through|thru|until|till)\s*(?:frames?\s*#?\s*)?$`)
	reFrameAndConn   = regexp.MustCompile(`^\s*and\s*(?:frames?\s*#?\s*)?$`)
	reFrameBetween   = regexp.MustCompile(`(?:^|[^a-z])between\s*(?:the\s+)?$`)
	// What joins the items of a frame list: "frames 3, 7 and 12".
	reFrameListSep = regexp.MustCompile(`^\s*(?:,|,?\s*and|,?\s*&)\s*$`)
	// Text allowed between a frame reference and the time the reply states
	// for it ("frame 12 (t = 6.0 s)", "Frame 3 of 96 at t = 1.000 s",
	// "00:06.0 — frame 12", "at 6.0 s (frame 12)"): then the stated time is
	// the event's and the frame reference gives none.
	reFrameTie = regexp.MustCompile(`^[\s(\[\]),:;=|—–-]*(?:of\s+\d+[\s(\[\]),:;=|—–-]*)?(?:(?:at|@|around|about|approximately|approx\.?|~|≈)\s*)?$`)
)

// frameRefs adds the frame references as times when the frames are known
// (Options.FrameTimes): "frame k" is the time of the k-th shown frame,
// "frames k–l" (and "between frames k and l") the time of frame k, the
// first of the range, like a range of times; each item of "frames 3, 7 and
// 12" is one time. A number outside 1…len(FrameTimes) gives no time and is
// flagged (a range with either end outside gives none). A frame reference
// tied to a time the reply states for it ("frame 12 (t = 6.0 s)") gives no
// time of its own: the stated time stands. Numbers already part of a time
// are never frame references.
func (d *doc) frameRefs() {
	if len(d.frameTimes) == 0 {
		return
	}
	used := map[int]bool{}
	for _, t := range d.times {
		used[t.num] = true
		if t.rng {
			used[t.num+1] = true
		}
	}
	for k := range d.listNum {
		used[k] = true
	}
	var frames []stamp
	listOK := -1 // the number that may continue a "frames 3, 7 and 12" list
	for i := 0; i < len(d.nums); i++ {
		n := d.nums[i]
		if used[i] || !n.isInt || n.glued || n.neg || n.unit != "" {
			listOK = -1
			continue
		}
		ls, le := d.line(n.start)
		st := stamp{start: n.start, end: n.end, num: i, kind: kFrame}
		if m := reFrameCue.FindStringSubmatchIndex(d.w[max(ls, n.start-24):n.start]); m != nil {
			st.cue = max(ls, n.start-24) + m[2]
			if m[3]-m[2] == len("frames") {
				listOK = i + 1
			} else {
				listOK = -1
			}
		} else if d.frameColumn(n) {
			st.cue = n.start
			listOK = -1
		} else if i == listOK && i > 0 && reFrameListSep.MatchString(d.w[d.nums[i-1].end:n.start]) {
			st.cue = n.start
			listOK = i + 1
		} else {
			listOK = -1
			continue
		}
		ok := d.frameIndexOK(n.plain)
		// A range: "frames 5-7", "frames 5 to 7", "between frames 5 and 6".
		if i+1 < len(d.nums) {
			nx := d.nums[i+1]
			gap := d.w[n.end:nx.start]
			_, nle := d.line(nx.start)
			rangeConn := reFrameRangeConn.MatchString(gap) ||
				(reFrameAndConn.MatchString(gap) && reFrameBetween.MatchString(d.w[max(ls, st.cue-12):st.cue]))
			if nle == le && rangeConn && nx.isInt && !nx.glued && nx.unit == "" && !used[i+1] && nx.plain >= n.plain {
				ok = ok && d.frameIndexOK(nx.plain)
				st.end, st.rng = nx.end, true
				i++
				listOK = -1
			}
		}
		if !ok {
			d.flag(FlagFrameOutOfRange)
			continue
		}
		if d.frameTied(st) {
			continue
		}
		st.t = d.frameTimes[int(n.plain)-1]
		frames = append(frames, st)
	}
	if len(frames) == 0 {
		return
	}
	d.times = append(d.times, frames...)
	sort.SliceStable(d.times, func(a, b int) bool { return d.times[a].start < d.times[b].start })
	d.timeNum = nil
}

// frameIndexOK reports whether v is a shown position 1…len(FrameTimes)
// whose time is usable.
func (d *doc) frameIndexOK(v float64) bool {
	if v < 1 || v > float64(len(d.frameTimes)) {
		return false
	}
	t := d.frameTimes[int(v)-1]
	return t >= 0 && !math.IsNaN(t) && !math.IsInf(t, 0)
}

// frameColumn reports whether n is the number of a table cell in a column
// headed "Frame".
func (d *doc) frameColumn(n num) bool {
	row := d.rowAt(n.start)
	if row == nil {
		return false
	}
	c, ok := row.roles["frame"]
	return ok && c[0] <= n.start && n.end <= c[1] && d.numsIn(c[0], n.start) == 0
}

// numsIn counts the numbers starting in [s, e).
func (d *doc) numsIn(s, e int) int {
	lo := sort.Search(len(d.nums), func(i int) bool { return d.nums[i].start >= s })
	hi := sort.Search(len(d.nums), func(i int) bool { return d.nums[i].start >= e })
	return hi - lo
}

// frameTied reports whether a time the reply states sits right next to the
// frame reference on its line, so that the reference names that time's
// frame rather than a time of its own.
func (d *doc) frameTied(f stamp) bool {
	ls, le := d.line(f.start)
	// d.times holds no frame stamps yet and is sorted by start: the
	// candidates are the time right after the reference and the one right
	// before it.
	k := sort.Search(len(d.times), func(i int) bool { return d.times[i].start >= f.start })
	if k < len(d.times) {
		if t := d.times[k]; t.start < le && t.cue >= f.end && t.cue-f.end <= 30 && reFrameTie.MatchString(d.w[f.end:t.cue]) {
			return true
		}
	}
	if k > 0 {
		if t := d.times[k-1]; t.start >= ls && t.end <= f.cue && f.cue-t.end <= 30 && reFrameTie.MatchString(d.w[t.end:f.cue]) {
			return true
		}
	}
	return false
}
