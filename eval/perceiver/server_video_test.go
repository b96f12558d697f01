package perceiver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/prompts"
)

// videoRequest is a chat request asking for the blinks of the video at
// dataURL.
func videoRequest(dataURL string) []byte {
	q := prompts.Questions()[prompts.DomainBlinking].Text + " Give the final count as \\boxed{N}."
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": q},
		map[string]any{"type": "video_url", "video_url": map[string]any{"url": dataURL}},
	}}}})
	return b
}

func videoDataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// TestVideoPlaylistRefused reproduces finding 1 of issue 12: a video_url
// holding an HLS playlist that names a real local segment (an absolute
// file:// URL to an MPEG-TS copy of a clip; the MP4 without the ffmpeg
// CLI) is refused with 400 invalid_video, and the reply names no
// server path; the same MP4 sent as the video itself is counted (so the
// segment is a video the server would read); a Matroska copy of it is
// accepted too (and a WebM re-encode), when the ffmpeg CLI is there to
// make them. Also with the playlist's lines broken by CRLF, with a BOM,
// and with its base64 wrapped across lines.
func TestVideoPlaylistRefused(t *testing.T) {
	dir := t.TempDir()
	clip := newClip(t, "blinking", 6, 1, 0, testW, testH)
	mp4 := filepath.Join(dir, "segment.mp4")
	if err := os.WriteFile(mp4, writeMP4(t, clip), 0o644); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(Handler(Options{Token: "tok", Limits: Limits{VideoRate: 16}}))
	defer hs.Close()
	url := hs.URL + "/v1/chat/completions"
	_, noFFmpeg := exec.LookPath("ffmpeg")
	ffmpeg := func(args ...string) {
		if out, err := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
		}
	}

	// The segment: an MPEG-TS copy of the MP4, as in the issue (libav's
	// hls demuxer reads it whole; the server before the fix answered 200
	// with its count), or the MP4 itself without the ffmpeg CLI.
	segment := mp4
	if noFFmpeg == nil {
		segment = filepath.Join(dir, "segment.ts")
		ffmpeg("-i", mp4, "-c", "copy", segment)
	}
	playlist := fmt.Sprintf("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:24\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:24.0,\nfile://%s\n#EXT-X-ENDLIST\n", segment)
	wrapped := base64.StdEncoding.EncodeToString([]byte(playlist))
	wrapped = wrapped[:8] + "\r\n" + wrapped[8:]
	for name, dataURL := range map[string]string{
		"playlist":              videoDataURL("video/mp4", []byte(playlist)),
		"playlist as mpegurl":   videoDataURL("video/x-mpegurl", []byte(playlist)),
		"playlist, CRLF":        videoDataURL("video/mp4", []byte(strings.ReplaceAll(playlist, "\n", "\r\n"))),
		"playlist with BOM":     videoDataURL("video/mp4", []byte("\xef\xbb\xbf"+playlist)),
		"playlist, wrapped b64": "data:video/mp4;base64," + wrapped,
		"MPEG-TS-like data":     videoDataURL("video/mp2t", append([]byte{0x47, 0x40, 0, 0x10}, make([]byte, 184)...)),
	} {
		status, _, v := call(t, "POST", url, "tok", videoRequest(dataURL))
		if status != 400 {
			t.Errorf("%s: status %d, want 400: %v", name, status, v)
		}
		checkError(t, name, v, "invalid_request_error", "invalid_video", "messages[0].content[1]")
		raw, _ := json.Marshal(v)
		if strings.Contains(string(raw), dir) || strings.Contains(string(raw), os.TempDir()+"/") {
			t.Errorf("%s: the reply names a server path: %s", name, raw)
		}
	}

	count := func(name, mediaType, path string) int {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		status, _, v := call(t, "POST", url, "tok", videoRequest(videoDataURL(mediaType, data)))
		if status != 200 {
			t.Errorf("%s: status %d: %v", name, status, v)
			return -1
		}
		reply := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
		pr := parse.Parse(reply, "blinking")
		if pr.Count == nil {
			t.Errorf("%s: no count in %q", name, reply)
			return -1
		}
		return *pr.Count
	}
	if n := count("the MP4", "video/mp4", mp4); n != 6 {
		t.Errorf("the MP4 itself: count %d, want 6", n)
	}
	if noFFmpeg != nil {
		t.Log("ffmpeg not on PATH: Matroska and WebM not tried")
		return
	}
	mkv := filepath.Join(dir, "segment.mkv")
	webm := filepath.Join(dir, "segment.webm")
	ffmpeg("-i", mp4, "-c", "copy", mkv)
	ffmpeg("-i", mp4, "-c:v", "libvpx-vp9", "-crf", "10", "-b:v", "0", "-deadline", "realtime", "-cpu-used", "8", webm)
	if n := count("Matroska", "video/x-matroska", mkv); n != 6 {
		t.Errorf("Matroska: count %d, want 6", n)
	}
	if n := count("WebM", "video/webm", webm); n != 6 {
		t.Errorf("WebM: count %d, want 6", n)
	}
}

// TestVideoNamesNoServerPath: a video part is decoded from memory, so no
// reply names a server path — not for data in an accepted container that
// does not decode, through the server — and the detector refuses a
// playlist naming a real local MP4 on its own too (Detector.Answer, used
// in-process without the server's container check).
func TestVideoNamesNoServerPath(t *testing.T) {
	hs := httptest.NewServer(Handler(Options{}))
	defer hs.Close()
	broken := videoDataURL("video/mp4", []byte("\x00\x00\x00\x18ftypmp42 and then nothing a demuxer can read"))
	status, _, v := call(t, "POST", hs.URL+"/v1/chat/completions", "", videoRequest(broken))
	checkError(t, "broken MP4", v, "invalid_request_error", "invalid_video", "messages[0].content[1]")
	raw, _ := json.Marshal(v)
	if status != 400 || strings.Contains(string(raw), os.TempDir()+"/") || strings.Contains(string(raw), "tracegrid-perceiver") {
		t.Errorf("broken MP4: %d %s; want 400 naming no server path", status, raw)
	}

	dir := t.TempDir()
	mp4 := filepath.Join(dir, "segment.mp4")
	if err := os.WriteFile(mp4, writeMP4(t, newClip(t, "blinking", 2, 1, 0, testW, testH)), 0o644); err != nil {
		t.Fatal(err)
	}
	playlist := fmt.Sprintf("#EXTM3U\n#EXT-X-TARGETDURATION:24\n#EXTINF:24.0,\nfile://%s\n#EXT-X-ENDLIST\n", mp4)
	parsed, e := parseRequest(videoRequest(videoDataURL("video/mp4", []byte(playlist))))
	if e != nil {
		t.Fatal(e)
	}
	reply, err := (&Detector{}).Answer(parsed.msgs)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Code != "invalid_video" || strings.Contains(ie.Msg, dir) {
		t.Errorf("detector given the playlist: reply %q, error %v; want invalid_video naming no path", reply, err)
	}
}
