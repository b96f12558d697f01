package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/variants"
	"github.com/tracegrid/tracegrid/gpu"
)

func newVariantsCmd() *cobra.Command {
	var (
		manifest, out, as, format, size, labels string
		policies, clips, promptNames            []string
		quality, workers                        int
		dataset, verbose                        bool
	)
	cmd := &cobra.Command{
		Use:   "variants --manifest M --policies P1,P2,… --out D [--as frames|video] [--dataset]",
		Short: "Write every clip × sampling policy as frames or resampled videos, with sha256s, for other harnesses",
		Long: `variants writes, in one process with one GL context, every clip of a manifest under every
policy (docs/variants.md):

  --as frames (default)  D/<policy>/<clip>/ with the images and frames.json exactly as
                         tracegrid frames writes them (the policy directory is the canonical
                         policy with ':' as '_', e.g. fps_4);
  --as video             D/<policy>/<clip>.mp4 for fps:K and native[:R] (whole K): constant
                         rate K, frame j the clip frame shown at j/K, the clip's encoder
                         settings; and D/<policy>/<clip>.trace.json.

D/variants.jsonl lists every variant with the sha256 of each file. A rerun skips the variants
that are complete and verified; Ctrl-C or a kill loses no finished variant and leaves no
partial file. --dataset also writes D/dataset.jsonl: one row per clip × policy × prompt with
the request as eval sends it and the answer, for lmms-eval, VLMEvalKit or your own scripts;
tracegrid ingest records their answers as trials.

--shard I/N makes shard I of N (or the scheduler's array task, docs/cluster.md): its part of
the clips into the same D, recorded in D/shards/I-of-N/variants.jsonl; tracegrid merge
--variants D then writes D/variants.jsonl. --dataset is written after the merge, unsharded.

Policies: ` + sampling.Policies,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{errors.New("--out is empty: name the output directory")}
			}
			var pols []sampling.Policy
			// Split before policy names only: fps:2,max:768 is one policy.
			for _, s := range sampling.SplitList(policies) {
				p, err := sampling.Parse(s)
				if err != nil {
					return usageError{err}
				}
				pols = append(pols, p)
			}
			if len(pols) == 0 {
				return usageError{errors.New("--policies is empty: name at least one policy, e.g. fps:1,fps:4")}
			}
			if quality < 1 || quality > 100 {
				return usageError{fmt.Errorf("--quality %d out of range: JPEG quality is 1–100", quality)}
			}
			if workers < 0 {
				return usageError{fmt.Errorf("--workers %d: give a positive number, or 0 for one per CPU", workers)}
			}
			imgFormat, err := encode.ParseImageFormat(format)
			if err != nil {
				return usageError{err}
			}
			w, h, err := parseSize(size)
			if err != nil {
				return usageError{err}
			}
			if as != variants.AsFrames && as != variants.AsVideo {
				return usageError{fmt.Errorf("--as %q: want frames or video", as)}
			}
			var ds *variants.DatasetOptions
			if dataset {
				ds = &variants.DatasetOptions{Prompts: splitList(promptNames)}
				if labels != "" {
					l, err := chat.ParseLabels(labels)
					if err != nil {
						return usageError{fmt.Errorf("--labels: %w", err)}
					}
					ds.Labels = l
				}
			} else if cmd.Flags().Changed("labels") || cmd.Flags().Changed("prompts") {
				return usageError{errors.New("--labels and --prompts shape dataset.jsonl: give --dataset too")}
			}
			log := logger(verbose)
			sh, err := resolveShard(cmd, log)
			if err != nil {
				return err
			}
			r, err := gpu.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			info := r.Info()
			log.Debug("GL", "renderer", info.Renderer, "platform", info.Platform)
			bar := progress("variants", log) // over clip × policy
			sum, err := variants.Run(cmd.Context(), variants.Options{
				Manifest: manifest, Policies: pols, Out: out, As: as, Format: imgFormat, Quality: quality,
				Width: w, Height: h, Clips: splitList(clips), Workers: workers, Dataset: ds, Renderer: r,
				Progress: bar, Log: log, Shard: sh,
			})
			if errors.Is(err, variants.ErrInput) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			secs := sum.Elapsed.Seconds()
			fmt.Fprintf(cmd.OutOrStdout(), "variants: %d made, %d skipped (verified); %d frames from %d pictures, %d files, %.1f MB, %.2f s → %s\n",
				sum.Variants, sum.Skipped, sum.Frames, sum.Pictures, sum.Files, float64(sum.Bytes)/1e6, secs, out)
			if ds != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "dataset: %d rows → %s/%s\n", sum.Dataset, strings.TrimRight(out, "/"), variants.DatasetName)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&manifest, "manifest", "", "manifest.jsonl of a render")
	f.StringSliceVar(&policies, "policies", nil, "sampling policies, comma-separated (a comma splits before a policy name only: fps:1,fps:2,max:768 is two): "+sampling.Policies)
	f.StringVar(&out, "out", "", "output directory")
	f.StringVar(&as, "as", variants.AsFrames, "frames (images + frames.json) or video (MP4 at the policy's rate)")
	f.StringVar(&format, "format", "jpg", "image format: jpg or png")
	f.IntVar(&quality, "quality", variants.DefaultQuality, "JPEG quality 1–100")
	f.StringVar(&size, "size", "", "image or video size WxH (default: the clip's; another aspect ratio is letterboxed)")
	f.StringSliceVar(&clips, "clips", nil, "only these clip ids, comma-separated (default: every clip of the manifest)")
	f.StringVar(&labels, "labels", "", "dataset frame labels: time, position or none (default: position for keyframes, shuffled and single:*, time otherwise)")
	f.StringSliceVar(&promptNames, "prompts", []string{variants.DefaultPrompt}, "dataset prompt templates, comma-separated")
	f.IntVar(&workers, "workers", 0, "clips made at a time (0: one per CPU)")
	f.BoolVar(&dataset, "dataset", false, "also write dataset.jsonl for other harnesses (docs/variants.md)")
	f.BoolVarP(&verbose, "verbose", "v", false, "debug logging")
	registerShardFlags(f)
	_ = cmd.MarkFlagRequired("manifest")
	_ = cmd.MarkFlagRequired("policies")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// splitList trims a comma list's items and drops empty ones.
func splitList(items []string) []string {
	var out []string
	for _, it := range items {
		for _, s := range strings.Split(it, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
