package encode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asticode/go-astiav"
)

// hlsPlaylist is an HLS playlist whose one segment is the local file at
// path, named by an absolute file:// URL: what finding 1 of issue 12 sent.
func hlsPlaylist(path string) []byte {
	return []byte(fmt.Sprintf("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:3.0,\nfile://%s\n#EXT-X-ENDLIST\n", path))
}

func TestSniffContainer(t *testing.T) {
	dir := t.TempDir()
	mp4 := filepath.Join(dir, "clip.mp4")
	writeIndexClip(t, mp4, indexScene{64, 48}, clipFPS, 10, clipGOP)
	head, err := os.ReadFile(mp4)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret-segment.ts")
	cases := []struct {
		name string
		data []byte
		want Container // "" → refused
	}{
		{"Writer's MP4", head[:16], ContainerMP4},
		{"QuickTime starting with wide", []byte("\x00\x00\x00\x08wide\x00\x00\x00\x00mdat"), ContainerMP4},
		{"Matroska/WebM EBML magic", []byte{0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81}, ContainerMatroska},
		{"HLS playlist", hlsPlaylist(secret), ""},
		{"HLS playlist with BOM", append([]byte("\xef\xbb\xbf"), hlsPlaylist(secret)...), ""},
		{"ffconcat script", []byte("ffconcat version 1.0\nfile " + secret + "\n"), ""},
		{"MPEG-TS", []byte{0x47, 0x40, 0x11, 0x10, 0, 0x42, 0xf0, 0x25}, ""},
		{"box of impossible size", []byte("\x00\x00\x00\x04ftypisom"), ""},
		{"text", []byte("this is not a video"), ""},
		{"empty", nil, ""},
	}
	for _, c := range cases {
		got, err := SniffContainer(c.data)
		switch {
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		case c.want == "" && (err == nil || !errors.Is(err, ErrContainer)):
			t.Errorf("%s: %q, %v; want an error matching ErrContainer", c.name, got, err)
		case c.want == "" && (strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), AcceptedContainers)):
			t.Errorf("%s: message %q quotes the data or does not name the accepted containers", c.name, err)
		}
	}
	if _, err := SniffContainer(hlsPlaylist(secret)); !strings.Contains(fmt.Sprint(err), "HLS playlist") {
		t.Errorf("playlist: %v; want it called an HLS playlist", err)
	}
}

// TestOpenVideoData: MP4, MOV, Matroska and WebM open from memory and from
// a file through the custom I/O context and show every frame at its time,
// forwards and after backward seeks; MPEG-TS, a raw H.264 stream and an
// HLS playlist naming a real local MP4 are refused, and the playlist's
// segment is never named in the message.
func TestOpenVideoData(t *testing.T) {
	s := indexScene{64, 48}
	dir := t.TempDir()
	const n = 45
	mp4 := filepath.Join(dir, "writer.mp4")
	writeIndexClip(t, mp4, s, clipFPS, n, clipGOP)
	accepted := map[string]string{"writer.mp4": mp4}
	var refused []string
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		for _, ext := range []string{"mov", "mkv"} {
			p := filepath.Join(dir, "copy."+ext)
			ffmpeg(t, "-i", mp4, "-c", "copy", p)
			accepted["copy."+ext] = p
		}
		webm := filepath.Join(dir, "vp9.webm")
		ffmpeg(t, "-i", mp4, "-c:v", "libvpx-vp9", "-lossless", "1", "-deadline", "realtime", "-cpu-used", "8", "-g", "12", webm)
		accepted["vp9.webm"] = webm
		for _, ext := range []string{"ts", "h264"} {
			p := filepath.Join(dir, "copy."+ext)
			ffmpeg(t, "-i", mp4, "-c", "copy", p)
			refused = append(refused, p)
		}
	} else {
		t.Log("ffmpeg not on PATH: only Writer's MP4 and the playlist")
	}
	for name, path := range accepted {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		open := map[string]func() (*Video, error){
			"data": func() (*Video, error) { return OpenVideoData(data) },
			"file": func() (*Video, error) { return OpenVideoFile(path) },
		}
		for how, fn := range open {
			v, err := fn()
			if err != nil {
				t.Errorf("%s from %s: %v", name, how, err)
				continue
			}
			if info := v.Info(); info.Width != s.w || info.Height != s.h || info.Frames != n {
				t.Errorf("%s from %s: info %+v; want %dx%d, %d frames", name, how, info, s.w, s.h, n)
			}
			img := Image{Width: s.w, Height: s.h, Stride: 4 * s.w, Pix: make([]byte, 4*s.w*s.h)}
			// Forwards over every frame, then backwards (a seek each).
			order := make([]int, 0, 2*n)
			for k := range n {
				order = append(order, k)
			}
			for k := n - 1; k >= 0; k -= 7 {
				order = append(order, k)
			}
			for _, k := range order {
				// Mid-frame: Matroska's timestamps are whole milliseconds.
				if err := v.FrameAt((float64(k)+0.5)/clipFPS, img); err != nil {
					t.Fatalf("%s from %s: frame %d: %v", name, how, k, err)
				}
				if got := readIndex(img); got != k {
					t.Errorf("%s from %s: at t = %d.5/%d shows frame %d", name, how, k, clipFPS, got)
					break
				}
			}
			v.Close()
		}
	}
	for _, path := range refused {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := OpenVideoData(data); !errors.Is(err, ErrContainer) {
			v.Close()
			t.Errorf("%s from data: %v; want ErrContainer", filepath.Base(path), err)
		}
		if v, err := OpenVideoFile(path); !errors.Is(err, ErrContainer) || !strings.Contains(err.Error(), path) {
			v.Close()
			t.Errorf("%s from a file: %v; want ErrContainer naming the file", filepath.Base(path), err)
		}
	}

	// The playlist names the real MP4 above, which libav's probing would
	// follow (TestNoProtocolsHolds shows it).
	playlist := filepath.Join(dir, "list.mp4")
	if err := os.WriteFile(playlist, hlsPlaylist(mp4), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := OpenVideoData(hlsPlaylist(mp4)); !errors.Is(err, ErrContainer) || strings.Contains(err.Error(), dir) {
		v.Close()
		t.Errorf("playlist from data: %v; want ErrContainer without a path", err)
	}
	if v, err := OpenVideoFile(playlist); !errors.Is(err, ErrContainer) || strings.Contains(err.Error(), mp4) || !strings.Contains(err.Error(), "HLS playlist") {
		v.Close()
		t.Errorf("playlist file: %v; want ErrContainer naming the playlist, not the segment", err)
	} else {
		t.Log(err)
	}

	// Broken data in an accepted container: an error that names no path.
	if v, err := OpenVideoData([]byte("\x00\x00\x00\x18ftypmp42 and nothing else")); err == nil || errors.Is(err, ErrContainer) || strings.Contains(err.Error(), "/") {
		v.Close()
		t.Errorf("broken MP4 data: %v; want a decoding error without a path", err)
	} else {
		t.Log(err)
	}
	if v, err := OpenVideoFile(filepath.Join(dir, "missing.mp4")); err == nil || !strings.Contains(err.Error(), "missing.mp4") {
		v.Close()
		t.Errorf("missing file: %v", err)
	}
	if v, err := OpenVideoFile(dir); err == nil {
		v.Close()
		t.Error("a directory opened")
	}
}

// TestWhitelistsHold: each of the custom I/O context's whitelists stops,
// on its own, a demuxer that opens the files a playlist names. Forced to
// the hls demuxer (which openSource never uses), a playlist naming a real
// local MP4 yields no packet with no protocol allowed, nor with "file"
// allowed but only the hls format; with both allowed, as libav's own file
// input would allow, the same playlist yields the MP4's packets — the
// control that shows the test can fail.
func TestWhitelistsHold(t *testing.T) {
	dir := t.TempDir()
	mp4 := filepath.Join(dir, "segment.mp4")
	writeIndexClip(t, mp4, indexScene{64, 48}, clipFPS, 20, clipGOP)
	data := hlsPlaylist(mp4)
	packets := func(protocols, formats string) (int, error) {
		src := &source{name: "the playlist", r: strings.NewReader(string(data)), size: int64(len(data)), c: ContainerMP4}
		in, err := openSourceWith(src, openRules{demuxer: "hls", protocols: protocols, formats: formats, url: filepath.Join(dir, "list.m3u8")})
		if err != nil {
			return 0, err
		}
		defer in.close()
		k := 0
		for {
			err := in.next()
			if errors.Is(err, astiav.ErrEof) {
				return k, nil
			}
			if err != nil {
				return k, err
			}
			k++
		}
	}
	k, err := packets("file", "hls,mov")
	if err != nil || k != 20 {
		t.Fatalf("control, file and mov allowed: %d packets, %v; want the segment's 20 (libav here cannot follow the playlist, so the test shows nothing)", k, err)
	}
	for _, c := range [][2]string{{noProtocols, "hls,mov"}, {"file", "hls"}, {noProtocols, "hls"}} {
		k, err := packets(c[0], c[1])
		if k != 0 {
			t.Errorf("protocols %q, formats %q: %d packets read from the local segment", c[0], c[1], k)
		}
		t.Logf("protocols %q, formats %q: %d packets, %v", c[0], c[1], k, err)
	}
}
