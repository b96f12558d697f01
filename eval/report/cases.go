package report

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
)

// CasesPerClass is how many trials the Cases section shows per outcome
// class and model × condition (low-frequency-trap Appendix F shows five per
// category over a whole study; three per condition keep the page short).
const CasesPerClass = 3

// Case is one card of the Cases section (Appendix F): a trial chosen as an
// example of its outcome class. summary.json lists the key fields; the page
// also shows the reply, its parsed events and the alignment.
type Case struct {
	Class  score.Outcome `json:"class"`
	Model  string        `json:"model"`
	Clip   string        `json:"clip"`
	Policy string        `json:"policy"`
	Prompt string        `json:"prompt"`
	Labels string        `json:"labels"`
	Repeat int           `json:"repeat"`
	// Sheet is the contact sheet of exactly the frames the model was
	// shown, true events marked, relative to the report directory
	// ("cases/<name>.png"); empty when no sheet could be drawn (no sheet
	// maker, a native video, or an error, which SheetError holds).
	Sheet      string `json:"sheet"`
	SheetError string `json:"sheet_error,omitempty"`

	trial *scored
}

// caseKey orders the candidates of one class: a hash of clip and
// repetition spreads the picks over the grid (the first clips of a
// manifest are not always the examples), the clip and repetition break
// ties, so the choice is deterministic.
func caseKey(s *scored) (uint64, string, int) {
	h := fnv.New64a()
	h.Write([]byte(s.src.Clip + "\x00" + strconv.Itoa(s.src.Repeat)))
	return h.Sum64(), s.src.Clip, s.src.Repeat
}

// addCases picks, for one model × condition, up to CasesPerClass trials
// of every outcome class of eligible trials (score.Outcomes), in the
// deterministic caseKey order.
func (r *Report) addCases(k rowKey, trials []*scored) {
	byClass := map[score.Outcome][]*scored{}
	for _, s := range trials {
		o := s.trial.Score.Outcome()
		byClass[o] = append(byClass[o], s)
	}
	for _, o := range score.Outcomes() {
		cands := byClass[o]
		slices.SortFunc(cands, func(a, b *scored) int {
			ha, ca, ra := caseKey(a)
			hb, cb, rb := caseKey(b)
			return cmp.Or(cmp.Compare(ha, hb), cmp.Compare(ca, cb), cmp.Compare(ra, rb))
		})
		for _, s := range cands[:min(CasesPerClass, len(cands))] {
			r.Cases = append(r.Cases, Case{Class: o, Model: k.model, Clip: s.src.Clip, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt,
				Repeat: s.src.Repeat, trial: s})
		}
	}
}

// caseFile names a case's sheet: unique per trial, safe in a file name.
func caseFile(c Case) string {
	return "cases/" + fileSafe(fmt.Sprintf("%s_%s_%s_%s_%s_%s_r%d", c.Class, c.Model, c.Policy, c.Labels, c.Prompt, c.Clip, c.Repeat)) + ".png"
}

// SheetMaker draws the contact sheet of a trial: the frames it showed the
// model (results.Trial.FrameTimes, in the order shown) with the true events
// marked, as `tracegrid frames --sheet` draws them, as PNG bytes. The
// report package renders nothing itself (it links no GL): the command that
// writes a report passes one.
type SheetMaker interface {
	Sheet(t *results.Trial) ([]byte, error)
}

// replySegment is a piece of a reply shown in a case card: plain text, a
// parsed event (Mark) or a line the parser kept but did not count
// (Excluded).
type replySegment struct {
	Text     string
	Mark     bool
	Excluded bool
}

// maxReplyShown bounds the reply text on a card: the first part and the
// end (where the final answer is) are kept around an ellipsis.
const (
	maxReplyShown = 2400
	replyTail     = 600
)

// replySegments splits the final reply into segments with its parsed
// events marked (each event's source snippet, found in order), then trims
// the middle of a long reply.
func replySegments(t *results.Trial) []replySegment {
	if len(t.Responses) == 0 {
		return nil
	}
	reply := t.Responses[len(t.Responses)-1]
	var segs []replySegment
	pos := 0
	for _, e := range t.Events {
		snip := strings.TrimSpace(e.Text)
		if snip == "" {
			continue
		}
		i := strings.Index(reply[pos:], snip)
		if i < 0 {
			continue
		}
		if i > 0 {
			segs = append(segs, replySegment{Text: reply[pos : pos+i]})
		}
		segs = append(segs, replySegment{Text: snip, Mark: e.Excluded == "", Excluded: e.Excluded != ""})
		pos += i + len(snip)
	}
	if pos < len(reply) {
		segs = append(segs, replySegment{Text: reply[pos:]})
	}
	if len(reply) <= maxReplyShown {
		return segs
	}
	head := trimSegments(segs, maxReplyShown-replyTail, false)
	tail := trimSegments(segs, replyTail, true)
	return append(append(head, replySegment{Text: "\n… (" + strconv.Itoa(len(reply)-maxReplyShown) + " characters left out) …\n"}), tail...)
}

// trimSegments keeps the first (or, fromEnd, the last) n bytes of the
// segments, cutting at a rune boundary.
func trimSegments(segs []replySegment, n int, fromEnd bool) []replySegment {
	var out []replySegment
	if fromEnd {
		for i := len(segs) - 1; i >= 0 && n > 0; i-- {
			s := segs[i]
			if len(s.Text) > n {
				cut := len(s.Text) - n
				for cut < len(s.Text) && !utf8Start(s.Text[cut]) {
					cut++
				}
				s.Text = s.Text[cut:]
			}
			n -= len(s.Text)
			out = append([]replySegment{s}, out...)
		}
		return out
	}
	for _, s := range segs {
		if n <= 0 {
			break
		}
		if len(s.Text) > n {
			cut := n
			for cut > 0 && !utf8Start(s.Text[cut]) {
				cut--
			}
			s.Text = s.Text[:cut]
		}
		n -= len(s.Text)
		out = append(out, s)
	}
	return out
}

func utf8Start(b byte) bool { return b&0xc0 != 0x80 }

// alignmentCells is a case's alignment as table rows: true time, reported
// time, deviation, class.
func alignmentCells(s *scored) [][]string {
	rows := score.AlignmentTable(s.input.Trace, s.input.Reports, s.trial.Score)
	sec := func(v *float64) string {
		if v == nil {
			return "–"
		}
		return strconv.FormatFloat(*v, 'f', 2, 64)
	}
	out := make([][]string, 0, len(rows))
	for _, a := range rows {
		dev := "–"
		if a.Deviation != nil {
			dev = strconv.FormatFloat(*a.Deviation, 'f', 2, 64)
			if *a.Deviation > 0 {
				dev = "+" + dev
			}
		}
		class := a.Class
		if a.Excluded != "" {
			class += " (" + a.Excluded + ")"
		}
		out = append(out, []string{sec(a.TruthT), sec(a.ReportT), dev, class})
	}
	return out
}
