package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/eval/variants"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// flagValues are the closed sets of flag values the shell completes
// (`tracegrid completion bash|zsh|fish|powershell`), by flag name, each
// taken from the list its package checks values against — never a copy.
// A flag whose values depend on the command (--format) gets the command.
var flagValues = map[string]func(cmd *cobra.Command) []string{
	"grid":     func(*cobra.Command) []string { return pipeline.Grids },
	"prompt":   promptNames,
	"prompts":  promptNames,
	"policy":   policyForms,
	"policies": policyForms,
	"labels": func(*cobra.Command) []string {
		var s []string
		for _, l := range chat.LabelModes {
			s = append(s, string(l))
		}
		return s
	},
	"as": func(cmd *cobra.Command) []string {
		if cmd.Name() == "eval" {
			return []string{study.SendImages, study.SendVideo}
		}
		return []string{variants.AsFrames, variants.AsVideo}
	},
	"server":   func(*cobra.Command) []string { return study.ServerKinds },
	"event-at": func(*cobra.Command) []string { return trace.EventAts },
	"format": func(cmd *cobra.Command) []string {
		if cmd.Name() == "export" {
			return exportFormats
		}
		// frames and variants write images.
		return []string{string(encode.ImageJPEG), string(encode.ImagePNG)}
	},
}

// listFlags take comma-separated values (StringSlice): the item after the
// last comma is completed.
var listFlags = map[string]bool{"policies": true, "prompts": true}

func promptNames(*cobra.Command) []string { return prompts.Default().Names() }

// policyForms turns sampling.Policies ("native[:R], fps:K, …,
// single:random, …") into what can be typed: a form's name alone where its
// argument is optional, name: where one follows (an upper-case
// placeholder), and fixed forms such as single:best whole. An optional
// frame cap (fps:K[,max:M]) is typed after the rate, not completed.
func policyForms(*cobra.Command) []string {
	var out []string
	for _, form := range strings.Split(sampling.Policies, ", ") {
		form, _, _ = strings.Cut(form, "[,")
		if name, _, optional := strings.Cut(form, "[:"); optional {
			out = append(out, name, name+":")
			continue
		}
		name, arg, _ := strings.Cut(form, ":")
		if arg != "" && strings.ToUpper(arg) == arg {
			out = append(out, name+":")
		} else {
			out = append(out, form)
		}
	}
	return out
}

// registerCompletions gives every flag of the tree named in flagValues its
// completion function.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			values, ok := flagValues[f.Name]
			if _, has := c.GetFlagCompletionFunc(f.Name); !ok || has {
				return
			}
			list := listFlags[f.Name]
			// The flag exists and has no function yet, the only two
			// reasons registration fails: the error cannot happen.
			_ = c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return complete(values(cmd), toComplete, list)
			})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// complete returns the values that extend toComplete (for a list, its last
// item, keeping the items before it). No space follows a value that still
// needs its argument (fps:) or a list item, where a comma may follow.
func complete(values []string, toComplete string, list bool) ([]string, cobra.ShellCompDirective) {
	done, partial := "", toComplete
	if list {
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, partial = toComplete[:i+1], toComplete[i+1:]
		}
	}
	directive := cobra.ShellCompDirectiveNoFileComp
	if list {
		directive |= cobra.ShellCompDirectiveNoSpace
	}
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, partial) {
			out = append(out, done+v)
			if strings.HasSuffix(v, ":") {
				directive |= cobra.ShellCompDirectiveNoSpace
			}
		}
	}
	return out, directive
}
