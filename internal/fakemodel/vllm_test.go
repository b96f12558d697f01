package fakemodel

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// box is an MP4 box of type typ around body.
func box(typ string, body ...[]byte) []byte {
	n := 8
	for _, b := range body {
		n += len(b)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(n))
	out = append(out, typ...)
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

// fakeMP4 is the box skeleton of an MP4 with one video track of frames
// samples over seconds (timescale 1000) after an audio-like track, enough
// for MP4Frames.
func fakeMP4(frames int, seconds float64) []byte {
	mdhd := make([]byte, 24)
	binary.BigEndian.PutUint32(mdhd[12:], 1000)
	binary.BigEndian.PutUint32(mdhd[16:], uint32(seconds*1000))
	hdlr := func(kind string) []byte {
		return append(make([]byte, 8), kind+"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"...)
	}
	stsz := make([]byte, 12)
	binary.BigEndian.PutUint32(stsz[8:], uint32(frames))
	other := make([]byte, 12)
	binary.BigEndian.PutUint32(other[8:], 999)
	trak := func(kind string, sz []byte) []byte {
		return box("trak", box("mdia", box("mdhd", mdhd), box("hdlr", hdlr(kind)), box("minf", box("stbl", box("stsz", sz)))))
	}
	return append(box("ftyp", []byte("isom\x00\x00\x02\x00")), box("moov", trak("soun", other), trak("vide", stsz))...)
}

func videoBody(mp4 []byte, extra string) string {
	url := "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(mp4)
	return fmt.Sprintf(`{"model":"q","messages":[{"role":"user","content":[{"type":"text","text":"Video, 24.000 s long"},{"type":"video_url","video_url":{"url":%q}}]}]%s}`, url, extra)
}

// TestMP4Frames reads the video track's sample count and duration.
func TestMP4Frames(t *testing.T) {
	n, d, err := MP4Frames(fakeMP4(720, 24))
	if err != nil || n != 720 || d != 24 {
		t.Fatalf("%d frames, %v s, %v", n, d, err)
	}
	if _, _, err := MP4Frames([]byte("not a video")); err == nil {
		t.Error("garbage read as MP4")
	}
}

// TestVLLMDefaults: vLLM's loader keeps 32 of a 24 s, 720-frame video and
// the processor samples those at 2 FPS (32 frames, not 48); every frame is
// loaded when the request asks (media_io_kwargs.video.num_frames: -1) or
// the server was started so — unless the server ignores request kwargs;
// do_sample_frames false keeps what was loaded; images count one by one.
func TestVLLMDefaults(t *testing.T) {
	mp4 := fakeMP4(720, 24)
	const fps2 = `,"mm_processor_kwargs":{"fps":2}`
	const all = `,"media_io_kwargs":{"video":{"num_frames":-1}}`
	text := (len("Video, 24.000 s long")+2)/3 + 6 + 20
	cases := []struct {
		name   string
		v      *VLLM
		extra  string
		loaded int
		frames int
	}{
		{"defaults", &VLLM{}, fps2, 32, 32},
		{"request kwargs", &VLLM{}, fps2 + all, 720, 48},
		{"start flag", &VLLM{NumFrames: -1}, fps2, 720, 48},
		{"request kwargs ignored", &VLLM{IgnoreRequestKwargs: true}, fps2 + all, 32, 32},
		{"no resampling", &VLLM{NumFrames: 48}, `,"mm_processor_kwargs":{"fps":2,"do_sample_frames":false}`, 48, 48},
		{"processor default 2 FPS", &VLLM{NumFrames: -1}, "", 720, 48},
	}
	for _, c := range cases {
		s := New(t, c.v.Respond)
		code, body := post(t, s.URL(), videoBody(mp4, c.extra))
		seen := c.v.Seen()
		want := fmt.Sprintf(`"prompt_tokens":%d,`, text+c.frames*64)
		if code != 200 || len(seen) != 1 || seen[0].VideoFrames != 720 || seen[0].Loaded != c.loaded || seen[0].Frames != c.frames || !strings.Contains(body, want) {
			t.Errorf("%s: %d %+v %s (want %s)", c.name, code, seen, body, want)
		}
	}
	v := &VLLM{TokensPerImage: 100}
	s := New(t, v.Respond)
	img := `{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AA"}}`
	code, body := post(t, s.URL(), `{"messages":[{"role":"user","content":[`+img+`,`+img+`,`+img+`]}]}`)
	if want := fmt.Sprintf(`"prompt_tokens":%d,`, 3*100+6+20); code != 200 || !strings.Contains(body, want) || v.Seen()[0].Images != 3 {
		t.Errorf("images: %d %s, want %s", code, body, want)
	}
	if code, body := post(t, s.URL(), videoBody([]byte("junk"), "")); code != 400 || !strings.Contains(body, "not an MP4") {
		t.Errorf("bad video: %d %s", code, body)
	}
}
