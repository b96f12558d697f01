package perceiver

import (
	"math"
	"unicode/utf8"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// Token usage is reported the way OpenAI's chat API reports it (prompt,
// completion and total tokens), counted by rules that need no tokenizer:
//
//   - text: one token per 4 characters (runes), rounded up — OpenAI's own
//     rule of thumb for English;
//   - each message: 3 tokens of framing, and 3 more for the reply's
//     priming (OpenAI's published per-message overhead);
//   - each image: OpenAI's published vision rule — detail "low" costs 85
//     tokens; otherwise the image is scaled to fit 2048×2048, then its
//     shorter side to at most 768, and costs 85 + 170 per 512×512 tile;
//   - each frame sampled from a video part: an image at detail "low" (85).
const (
	tokensPerMessage = 3
	tokensReply      = 3
	tokensImageBase  = 85
	tokensImageTile  = 170
)

// textTokens counts the tokens of a text: ⌈runes/4⌉.
func textTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// truncateTokens cuts s to at most n tokens (4n runes).
func truncateTokens(s string, n int) string {
	k := 0
	for i := range s {
		if k == 4*n {
			return s[:i]
		}
		k++
	}
	return s
}

// imageTokens is OpenAI's vision cost of a w×h image at a detail level.
func imageTokens(w, h int, detail string) int {
	if detail == "low" || w <= 0 || h <= 0 {
		return tokensImageBase
	}
	fw, fh := float64(w), float64(h)
	if s := math.Min(1, 2048/math.Max(fw, fh)); s < 1 {
		fw, fh = fw*s, fh*s
	}
	if s := math.Min(1, 768/math.Min(fw, fh)); s < 1 {
		fw, fh = fw*s, fh*s
	}
	tiles := int(math.Ceil(fw/512)) * int(math.Ceil(fh/512))
	return tokensImageBase + tokensImageTile*tiles
}

// promptTokens counts a request's prompt: every message's framing and
// text (assistant turns included, as they are part of the prompt) and
// every picture in. Frame labels are text like any other.
func promptTokens(msgs []chat.Message, in *Input) int {
	n := tokensReply
	for _, m := range msgs {
		n += tokensPerMessage
		for _, p := range m.Parts {
			if p.Type == chat.TypeText {
				n += textTokens(p.Text)
			}
		}
	}
	for _, f := range in.frames {
		n += imageTokens(f.w, f.h, f.detail)
	}
	return n
}
