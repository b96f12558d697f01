// Package natural brings natural videos into a study (low-frequency-trap
// §7: the count-pattern check on TransRAC / RepCount-A): Import reads a
// folder of videos and an annotation table and writes a manifest of
// domain natural entries that point at the videos where they are, with
// each video's probed duration, frame rate, displayed size, rotation,
// frame count and SHA-256, the annotated count and, where the table gives
// every repetition's start and end frame, a trace with one event per
// repetition (trace.Natural). Load reads such an entry back for the
// evaluation, checking that the video is still the one imported.
//
// The videos are read as videos from outside (encode.ProbeVideoFile: MP4/MOV
// or WebM/Matroska only, nothing they name is opened). A frame index k of
// the annotation is the k-th frame in presentation order, counted from 0
// (as OpenCV's and the ffmpeg CLI's decoders number them), and its time is
// that frame's presentation time; Video.FrameAt shows frame k from that
// time until the next frame's.
//
// Every problem with one row or one video — an unreadable or truncated
// video, a row for a missing file, a video without a row, a count that
// disagrees with the number of boundary pairs, a boundary past the last
// frame, boundaries that go backwards, a variable frame rate — is reported
// for that row and the import goes on with the others; it fails only when
// nothing could be imported, or, with Options.Strict, when any row is bad
// (then nothing is written). The rules and the table layouts are in
// docs/natural.md.
package natural
