// Package variants batch-produces sampling-density variants of rendered
// clips for other harnesses (`tracegrid variants`, docs/variants.md):
// every clip × policy of a manifest as the frames `tracegrid frames`
// writes, or, for constant-rate policies, as a resampled MP4; an index
// with the sha256 of every file (variants.jsonl); and optionally a
// dataset (dataset.jsonl) of the requests `tracegrid eval` would send,
// whose answers from another harness Ingest records as trials.
//
// It lives under eval because it is a frame stream of the evaluation side
// (sampling plans, eval/frames, prompts), not part of rendering clips.
//
// Speed. One GL context serves the whole run and each worker makes one
// clip at a time with one image encoder. The frame shown at t is clip
// frame ⌊t·fps⌋, so the variants of a clip share clip frames (fps:1, 2, 4
// and 8 show subsets of fps:16's): each distinct clip frame is rendered
// and encoded once and every file that shows it is written from the same
// bytes, and consecutive clip frames whose draw lists are equal (the
// static spans before and after the events, a lamp that stays off, a held
// highlight) are one picture. A video repeats its last frame without
// converting it again.
//
// Atomicity. A variant's images go into a staging directory that is
// renamed into place when complete (an MP4 and its trace copy are renamed
// into place), and only then is its record appended to variants.jsonl
// with one write; a rerun skips every recorded variant whose files still
// have their hashes and removes the staging left by a killed run. The
// output directory is locked for the run.
package variants
