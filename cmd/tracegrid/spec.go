package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// specFlags are the flags render and run share to choose what to render.
type specFlags struct {
	grid, specPath, size string
	seeds                int
	yes                  bool
}

func (f *specFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.grid, "grid", pipeline.GridDefault, "built-in grid: default (39 clips), paper (2,190) or countvideobench (2,600 objects clips)")
	cmd.Flags().StringVar(&f.specPath, "spec", "", "render spec YAML instead of a built-in grid (docs/spec.md)")
	cmd.Flags().IntVar(&f.seeds, "seeds", 0, "seeds per cell instead of the grid's (e.g. --grid paper --seeds 1: all 219 cells once)")
	cmd.Flags().StringVar(&f.size, "size", "", "clip size WxH instead of the grid's (e.g. --grid countvideobench --size 960x540)")
	cmd.Flags().BoolVar(&f.yes, "yes", false, fmt.Sprintf("render a plan of more than %d clips (at most %d)", pipeline.ConfirmClips, pipeline.MaxClips))
}

// spec builds the spec the flags name and validates it.
func (f *specFlags) spec(cmd *cobra.Command) (pipeline.Spec, error) {
	var spec pipeline.Spec
	var err error
	switch {
	case f.specPath != "" && cmd.Flags().Changed("grid"):
		return spec, usageError{fmt.Errorf("use --grid or --spec, not both (a spec names its grid in its `grid` field)")}
	case f.specPath != "":
		spec, err = pipeline.LoadSpec(f.specPath)
	default:
		spec, err = pipeline.BuiltinSpec(f.grid)
	}
	if err != nil {
		return spec, usageError{err}
	}
	if cmd.Flags().Changed("seeds") {
		spec.Seeds = f.seeds
	}
	if f.size != "" {
		if spec.Width, spec.Height, err = parseSize(f.size); err != nil {
			return spec, usageError{err}
		}
	}
	if err := spec.Validate(); err != nil {
		return spec, usageError{err}
	}
	if n := spec.ClipCount(); n > pipeline.ConfirmClips && !f.yes {
		return spec, usageError{fmt.Errorf("the plan has %d clips, more than %d (the paper grid has 2,190): pass --yes to render it", n, pipeline.ConfirmClips)}
	}
	return spec, nil
}

// logViewStats states, for the objects clips of a plan, how often objects
// leave the view, next to CountVideoBench's 83.0 % and 3.29 (§4.3). The
// traces are pure functions of the parameters, so nothing is rendered.
func logViewStats(log *slog.Logger, plan []scene.Params) error {
	var trs []*trace.Trace
	for _, p := range plan {
		if p.Domain != scene.ObjectsDomain {
			continue
		}
		c, err := scene.New(p)
		if err != nil {
			return err
		}
		trs = append(trs, c.Trace())
	}
	if len(trs) == 0 {
		return nil
	}
	v := trace.SummarizeViews(trs)
	log.Info("objects in view", "clips", v.Clips,
		"share_with_an_object_leaving", fmt.Sprintf("%.1f%% (paper 83.0%%)", 100*v.Share),
		"mean_objects_leaving", fmt.Sprintf("%.2f (paper 3.29)", v.MeanLeaving))
	return nil
}
