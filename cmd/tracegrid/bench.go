package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
)

// Hidden helpers of scripts/bench.sh: the encoder settings of a grid, and
// one clip's frames dumped raw for the ffmpeg reference.
func newBenchCmds() []*cobra.Command {
	var (
		clip, out  string
		sf, sfDump specFlags
	)
	settings := &cobra.Command{
		Use: "bench-settings", Hidden: true, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sf.spec(cmd)
			if err != nil {
				return err
			}
			e := s.Encoder
			fmt.Printf("%s %s %d %d %dx%d %d\n", e.Codec, e.Preset, e.CRF, s.FPS, s.Width, s.Height, e.Threads)
			return nil
		},
	}
	sf.register(settings)
	dump := &cobra.Command{
		Use: "bench-dump", Hidden: true, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sfDump.spec(cmd)
			if err != nil {
				return err
			}
			plan, err := s.Plan()
			if err != nil {
				return err
			}
			for _, p := range plan {
				if p.ID() != clip {
					continue
				}
				r, err := gpu.NewRenderer()
				if err != nil {
					return err
				}
				defer r.Close()
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				if err := pipeline.DumpRaw(cmd.Context(), r, p, f); err != nil {
					f.Close()
					return err
				}
				return f.Close()
			}
			return usageError{fmt.Errorf("clip %q is not in grid %s", clip, s.Grid)}
		},
	}
	sfDump.register(dump)
	dump.Flags().StringVar(&clip, "clip", "", "clip id")
	dump.Flags().StringVar(&out, "out", "", "output file (raw RGBA)")
	return []*cobra.Command{settings, dump}
}
