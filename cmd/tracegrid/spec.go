package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/pipeline"
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
