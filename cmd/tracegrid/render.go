package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/job"
	"github.com/tracegrid/tracegrid/pipeline"
)

func newRenderCmd() *cobra.Command {
	var (
		sf      specFlags
		out     string
		workers int
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "render (--grid default|paper|countvideobench | --spec FILE.yaml) --out DIR",
		Short: "Render a grid of clips with their traces and a manifest",
		Long: `render writes DIR/clips/<id>.mp4, DIR/clips/<id>.trace.json and DIR/manifest.jsonl.
A rerun into the same DIR skips clips that are complete and verified (video hash and
trace match); Ctrl-C keeps every finished clip and leaves no partial file. A DIR holds one
plan: a spec that lacks clips DIR already records is refused (use a new --out). Plans of
more than ` + fmt.Sprint(pipeline.ConfirmClips) + ` clips need --yes.

--shard I/N renders shard I of N (or the scheduler's array task, docs/cluster.md): its part of
the plan into the same DIR, with its manifest in DIR/shards/I-of-N/manifest.jsonl; when all
shards are done, tracegrid merge --render DIR writes DIR/manifest.jsonl.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{fmt.Errorf("--out is empty: name the output directory")}
			}
			spec, err := sf.spec(cmd)
			if err != nil {
				return err
			}
			plan, err := spec.Plan()
			if err != nil {
				return err
			}
			log := logger(verbose)
			sh, err := resolveShard(cmd, log)
			if err != nil {
				return err
			}
			if err := job.LogViewStats(log, plan); err != nil {
				return err
			}
			log.Info("render", "grid", spec.Grid, "clips", len(plan), "out", out, "size", fmt.Sprintf("%dx%d", spec.Width, spec.Height), "fps", spec.FPS, "encoder", spec.Encoder.Codec, "preset", spec.Encoder.Preset, "crf", spec.Encoder.CRF, "lossless", spec.Encoder.Lossless)
			sum, err := pipeline.Render(cmd.Context(), spec, pipeline.Options{
				Out: out, Workers: workers, Log: log, Progress: progress("clips", log), Shard: sh,
			})
			if sum.GL.Renderer != "" {
				log.Info("GL", "renderer", sum.GL.Renderer, "version", sum.GL.Version, "platform", sum.GL.Platform)
			}
			if errors.Is(err, pipeline.ErrOtherPlan) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			fps := 0.0
			if s := sum.Elapsed.Seconds(); s > 0 {
				fps = float64(sum.Frames) / s
			}
			log.Info("done", "rendered", sum.Rendered, "skipped", sum.Skipped, "frames", sum.Frames,
				"elapsed", sum.Elapsed.Round(time.Millisecond), "frames_per_s", fmt.Sprintf("%.0f", fps), "manifest", renderManifest(out, sh))
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&out, "out", "out", "output directory")
	cmd.Flags().IntVar(&workers, "workers", 0, "clips encoded in parallel (0: one per CPU)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "debug logging")
	registerShardFlags(cmd.Flags())
	return cmd
}

// progress shows a bar of units (clips, variants) on a terminal and a log
// line every tenth otherwise. The total is the one the caller reports (for
// a shard, its part of the plan).
func progress(unit string, log *slog.Logger) func(done, total int) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		var bar *progressbar.ProgressBar
		return func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total,
					progressbar.OptionSetWriter(os.Stderr),
					progressbar.OptionSetDescription(unit),
					progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }),
				)
			}
			_ = bar.Set(done)
		}
	}
	last := -1
	return func(done, total int) {
		if step := done * 10 / max(total, 1); step != last {
			last = step
			log.Info("progress", unit, fmt.Sprintf("%d/%d", done, total))
		}
	}
}
