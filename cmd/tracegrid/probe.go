package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
)

// newProbeCmd is tracegrid probe: measure each model's tokens per frame
// for the input audit (docs/study.md, "Input audit").
func newProbeCmd() *cobra.Command {
	var config string
	var models []string
	var dryRun, asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "probe --config study.yaml [--model NAME] [--dry-run]",
		Short: "Measure each model's prompt tokens per frame for the input audit (two short requests per way of sending)",
		Long: `probe sends, for each model of the study (or those --model names) and each way its
conditions send frames (images; one video), the study's first clip at 4 and at 8 frames in the
first such condition's wording, with max_tokens 16. The difference of the two reported
prompt_tokens is the frames' tokens; it is stored in the study's results database (table
input_rules) and every later eval of the study audits its trials against it: a trial whose
server saw fewer frames than sent is stored as input_mismatch (docs/study.md, "Input audit").
--dry-run prints the requests and their estimated tokens and dollars and sends nothing.
Exit status: 0 done; 1 a request failed or the server's count does not follow the frames;
2 bad input (flags, study, manifest, an unset API key variable).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return usageError{errors.New("give --config study.yaml")}
			}
			st, err := study.Load(config)
			if err != nil {
				return usageError{err}
			}
			set, err := st.PromptSet()
			if err != nil {
				return usageError{err}
			}
			if err := checkManifestFiles(st); err != nil {
				return err
			}
			plan, err := runner.ProbePlan(st, set, models...)
			if err != nil {
				return usageError{err}
			}
			if dryRun {
				return writeProbePlan(asJSON, plan)
			}
			for _, m := range st.Models {
				if _, err := m.APIKey(); err != nil {
					return usageError{err}
				}
			}
			db, err := results.Open(st.DB)
			if err != nil {
				return usageError{err}
			}
			defer db.Close()
			r, err := gpu.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			rules, err := runner.Probe(cmd.Context(), runner.Options{Study: st, Prompts: set, DB: db, Renderer: r, Log: logger(verbose)}, models...)
			if asJSON && rules != nil {
				if jerr := json.NewEncoder(os.Stdout).Encode(map[string]any{"rules": rules}); jerr != nil {
					return jerr
				}
			} else {
				for _, ru := range rules {
					fmt.Printf("%s\t%s\t%.1f tokens a frame\t%.0f text tokens\t(%s)\n", ru.Model, ru.Modality, ru.PerFrame, ru.TextBase, ru.Source)
				}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&config, "config", "", "study YAML (docs/study.md)")
	fl.StringArrayVar(&models, "model", nil, "probe only this model of the study (repeatable)")
	fl.BoolVar(&dryRun, "dry-run", false, "print the requests with their estimated tokens and dollars; send nothing")
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.BoolVarP(&verbose, "verbose", "v", false, "debug logging")
	return cmd
}

// writeProbePlan prints a probe's requests and their estimated cost.
func writeProbePlan(asJSON bool, plan []runner.ProbeRequest) error {
	total := runner.ProbeRequest{Model: "total"}
	for _, p := range plan {
		total.Input += p.Input
		total.Output += p.Output
		total.USD += p.USD
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"requests": plan,
			"total": map[string]any{"requests": len(plan), "input_tokens": total.Input, "output_tokens": total.Output, "usd": total.USD}})
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "model\tsent as\tclip\tprompt\tframes\tinput tokens\toutput tokens\tUSD")
	for _, p := range plan {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%.4f\n", p.Model, p.Modality, p.Clip, p.Prompt, p.Frames, p.Input, p.Output, p.USD)
	}
	fmt.Fprintf(w, "total\t\t\t\t%d requests\t%d\t%d\t%.4f\n", len(plan), total.Input, total.Output, total.USD)
	return w.Flush()
}
