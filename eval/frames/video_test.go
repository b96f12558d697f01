package frames

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
)

// TestOpenVideoPlaylist: `frames --video` given an HLS playlist that names
// a real local MP4 by an absolute file:// URL is refused with an error
// that names the playlist, says what it is and lists the accepted
// containers, and never the segment; the MP4 itself opens.
func TestOpenVideoPlaylist(t *testing.T) {
	dir := t.TempDir()
	mp4 := filepath.Join(dir, "segment.mp4")
	w, err := encode.Create(mp4, encode.Options{Width: 64, Height: 48, FPS: 10, Preset: "ultrafast"})
	if err != nil {
		t.Fatal(err)
	}
	img := encode.Image{Width: 64, Height: 48, Stride: 256, Pix: make([]byte, 256*48)}
	for range 20 {
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	playlist := filepath.Join(dir, "list.m3u8")
	pl := fmt.Sprintf("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nfile://%s\n#EXT-X-ENDLIST\n", mp4)
	if err := os.WriteFile(playlist, []byte(pl), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := OpenVideo(playlist)
	if err == nil {
		v.Close()
		t.Fatal("the playlist opened")
	}
	msg := err.Error()
	if !errors.Is(err, encode.ErrContainer) || !strings.Contains(msg, playlist) || !strings.Contains(msg, "HLS playlist") ||
		!strings.Contains(msg, "MP4/MOV or WebM/Matroska") || strings.Contains(msg, mp4) {
		t.Errorf("playlist: %v; want ErrContainer naming the playlist and the accepted containers, not the segment", err)
	}
	t.Log(err)
	v, err = OpenVideo(mp4)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if info := v.Info(); info.Frames != 20 || info.Width != 64 {
		t.Errorf("the MP4: %+v", info)
	}
}
