package variants

import (
	"fmt"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/internal/rgba"
)

// Picture is one distinct clip frame on its way to the sinks: the encoded
// image (image sinks) or the pixels (video sinks). A picture is rendered
// and encoded once, however many frames of however many variants show it.
type Picture struct {
	// ClipFrame is the clip frame shown (the frame of the MP4 at the
	// sample time).
	ClipFrame int
	// ID names the picture: two pictures with the same ID hold the same
	// pixels (a static span renders once).
	ID int
	// Data is the encoded image (JPEG or PNG file), shared between sinks:
	// never modify it.
	Data []byte
	// Pixels are the RGBA pixels, valid only during the Write call.
	Pixels rgba.Image
}

// FrameSink consumes the frames of one variant in time order. Write takes
// the next frame, Repeat(n) shows the last written picture as the next n
// frames (an image sink writes its bytes again, the MP4 writer re-sends
// its last converted frame), Close finishes the output. The consumer owns
// this seam: the image directory and the MP4 writer satisfy it, and so
// can any later destination of frames (a stream to a model, a network
// sink).
type FrameSink interface {
	Write(p Picture) error
	Repeat(n int) error
	Close() error
}

// imageSink writes a plan's frames as image files through frames.Dir; the
// frames arrive in time order (by index), each written under its own name
// and recorded with the clip frame it shows.
type imageSink struct {
	dir        *frames.Dir
	frames     []sampling.Frame // time order
	clipFrames []int            // the clip frame each shows
	next       int
	last       Picture
	have       bool
}

func newImageSink(dir *frames.Dir, timeOrder []sampling.Frame, clipFrames []int) *imageSink {
	return &imageSink{dir: dir, frames: timeOrder, clipFrames: clipFrames}
}

func (s *imageSink) add(p Picture) error {
	if s.next >= len(s.frames) {
		return fmt.Errorf("variants: image sink: more frames than the plan's %d", len(s.frames))
	}
	f, k := s.frames[s.next], s.clipFrames[s.next]
	s.next++
	return s.dir.Add(f, k, p.Data)
}

func (s *imageSink) Write(p Picture) error {
	s.last, s.have = p, true
	return s.add(p)
}

func (s *imageSink) Repeat(n int) error {
	if !s.have && n > 0 {
		return fmt.Errorf("variants: image sink: repeat before the first frame")
	}
	for range n {
		if err := s.add(s.last); err != nil {
			return err
		}
	}
	return nil
}

// Close writes frames.json; it fails when frames of the plan are missing.
func (s *imageSink) Close() error {
	if s.next != len(s.frames) {
		return fmt.Errorf("variants: image sink: %d of %d frames written", s.next, len(s.frames))
	}
	_, err := s.dir.Close()
	return err
}

// videoSink encodes frames into an MP4 at a constant rate.
type videoSink struct {
	w      *encode.Writer
	frames int
}

func (s *videoSink) Write(p Picture) error {
	if err := s.w.WriteRGBA(p.Pixels); err != nil {
		return err
	}
	s.frames++
	return nil
}

func (s *videoSink) Repeat(n int) error {
	for range n {
		if err := s.w.Repeat(); err != nil {
			return err
		}
		s.frames++
	}
	return nil
}

func (s *videoSink) Close() error { return s.w.Close() }
