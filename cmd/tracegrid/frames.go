package main

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

func newFramesCmd() *cobra.Command {
	var (
		manifest, clipID, video, policy, out, format, size, limitMode string
		quality, maxImages                                            int
		sheet, exact                                                  bool
	)
	cmd := &cobra.Command{
		Use:   "frames (--manifest DIR/manifest.jsonl --clip ID | --video FILE) --policy P --out DIR",
		Short: "Write the frames a sampling policy shows a model, with frames.json and an optional contact sheet",
		Long: `frames renders the frames of a sampling policy for one clip straight from its scene (no
decoding; the frame shown at t is the clip frame at or before t, or t itself with --exact), or
decodes them from any video with --video. It writes one image per frame named by index and time,
frames.json ({"frames": [{"index", "position", "t", "file"}, …]}: index in time order, position
as shown to the model), and with --sheet a contact sheet (sheet.png) with the true events marked.

Policies: ` + sampling.Policies,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (video == "") == (manifest == "" && clipID == "") || (video == "" && (manifest == "" || clipID == "")) {
				return usageError{fmt.Errorf("give --manifest and --clip, or --video")}
			}
			if out == "" {
				return usageError{fmt.Errorf("--out is empty: name the output directory")}
			}
			if quality < 1 || quality > 100 {
				return usageError{fmt.Errorf("--quality %d out of range: JPEG quality is 1–100", quality)}
			}
			if maxImages < 0 {
				return usageError{fmt.Errorf("--max-images %d: give a positive cap, or 0 for none", maxImages)}
			}
			pol, err := sampling.Parse(policy)
			if err != nil {
				return usageError{err}
			}
			imgFormat, err := encode.ParseImageFormat(format)
			if err != nil {
				return usageError{err}
			}
			w, h, err := parseSize(size)
			if err != nil {
				return usageError{err}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("output directory %s: %w", out, err)
			}
			r, err := gpu.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			src, err := frames.NewSource(r, frames.Options{Format: imgFormat, Quality: quality, Width: w, Height: h, Exact: exact})
			if err != nil {
				return usageError{err}
			}
			idx := frames.Index{Policy: pol.String(), Format: string(imgFormat), Exact: exact, Generator: pipeline.ToolVersion()}
			var stream iter.Seq2[frames.Image, error]
			var sheetOpt frames.SheetOptions
			if video != "" {
				v, err := frames.OpenVideo(video)
				if err != nil {
					return usageError{err}
				}
				defer v.Close()
				info := v.Info()
				// The displayed size: frames come out upright, as eval
				// sends an imported clip's (StreamVideo).
				_, dw, dh, err := frames.Upright(v)
				if err != nil {
					return usageError{fmt.Errorf("%s: %w", video, err)}
				}
				sc := sampling.Clip{ID: filepath.Base(video), Duration: info.Duration, FPS: info.FPS, Pixels: frames.NewVideoLowRes(v)}
				plan, err := planWithLimit(pol, sc, maxImages, limitMode)
				if err != nil {
					return err
				}
				idx.Video, idx.Source, idx.Note, idx.Limit = video, "video", plan.Note, plan.Limit
				idx.Width, idx.Height = pick(w, dw), pick(h, dh)
				stream = src.StreamVideo(cmd.Context(), v, plan)
				sheetOpt = frames.SheetOptions{Title: fmt.Sprintf("%s — %s", filepath.Base(video), plan.Policy), Duration: info.Duration}
			} else {
				clip, tr, _, err := pipeline.LoadClip(manifest, clipID)
				if errors.Is(err, trace.ErrInvalid) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				sc := sampling.Clip{ID: clip.P.ID(), Duration: clip.P.Duration, FPS: float64(clip.P.FPS), Seed: clip.P.Seed, Events: tr.Times(), InView: runner.InViewCounts(tr),
					Pixels: frames.NewLowRes(r, clip), Exact: exact}
				plan, err := planWithLimit(pol, sc, maxImages, limitMode)
				if err != nil {
					return err
				}
				idx.Clip, idx.Source, idx.Note, idx.Limit, idx.Events = clip.P.ID(), "scene", plan.Note, plan.Limit, tr.Times()
				idx.Width, idx.Height = pick(w, clip.P.Width), pick(h, clip.P.Height)
				stream = src.Stream(cmd.Context(), clip, plan)
				about := fmt.Sprintf("N=%d, F=%s Hz", tr.N, strconv.FormatFloat(tr.F, 'f', -1, 64))
				if domain.Of(tr.Domain).Class {
					about = fmt.Sprintf("%d %s objects", tr.N, tr.Class)
				}
				sheetOpt = frames.SheetOptions{Title: fmt.Sprintf("%s — %s (%s)", clip.P.ID(), plan.Policy, about),
					Duration: clip.P.Duration, Events: tr.Times(), FrameSpan: 1 / float64(clip.P.FPS)}
				if exact {
					sheetOpt.FrameSpan = 0
				}
			}
			dir := frames.NewDir(out, idx, false)
			var kept []frames.Image
			for img, err := range stream {
				if errors.Is(err, encode.ErrDamaged) {
					return usageError{err} // a file that is not a decodable video: bad input
				}
				if err != nil {
					return err
				}
				if err := dir.AddImage(img); err != nil {
					return err
				}
				if sheet {
					kept = append(kept, img)
				}
			}
			if sheet && len(kept) > 0 {
				dir.Index.Sheet = "sheet.png"
				if err := dir.WriteFile(dir.Index.Sheet, func(w io.Writer) error { return frames.WriteSheet(w, kept, sheetOpt) }); err != nil {
					return err
				}
			}
			if _, err := dir.Close(); err != nil {
				return err
			}
			idx = dir.Index
			if idx.Note != "" {
				fmt.Fprintln(os.Stderr, "note:", idx.Note)
			}
			fmt.Printf("%d frames (%s) → %s\n", len(idx.Frames), idx.Policy, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&manifest, "manifest", "", "manifest.jsonl of a render")
	f.StringVar(&clipID, "clip", "", "clip id in the manifest")
	f.StringVar(&video, "video", "", "sample an external video file instead")
	f.StringVar(&policy, "policy", "", "sampling policy: "+sampling.Policies)
	f.StringVar(&out, "out", "", "output directory")
	f.StringVar(&format, "format", "jpg", "image format: jpg or png")
	f.IntVar(&quality, "quality", 90, "JPEG quality 1–100")
	f.StringVar(&size, "size", "", "image size WxH (default: the clip's)")
	f.BoolVar(&exact, "exact", false, "render at the sample time itself, not at the clip frame shown then")
	f.IntVar(&maxImages, "max-images", 0, "cap on images (0: none)")
	f.StringVar(&limitMode, "limit-mode", "refuse", "over the cap: refuse (error) or thin (uniform subsample, recorded)")
	f.BoolVar(&sheet, "sheet", false, "also write sheet.png, a contact sheet with the true events marked")
	_ = cmd.MarkFlagRequired("policy")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func planWithLimit(p sampling.Policy, c sampling.Clip, maxImages int, mode string) (sampling.Plan, error) {
	plan, err := p.Plan(c)
	if err != nil {
		return plan, err
	}
	plan, err = sampling.ApplyLimit(plan, maxImages, mode)
	if err != nil {
		return plan, usageError{err}
	}
	return plan, nil
}

func pick(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func parseSize(s string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 16 || h < 16 || w > 4096 || h > 4096 || w%2 != 0 || h%2 != 0 {
		return 0, 0, fmt.Errorf("--size %q: want WxH, even, 16–4096", s)
	}
	return w, h, nil
}
