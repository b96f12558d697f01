package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/pipeline"
)

// ErrPromptChanged is wrapped by Run's error when a condition's template
// no longer reads as it did for the condition's stored trials (their
// template hash differs from the template's now): adding trials to the
// condition would mix two prompts in one result. Options.NewPrompts
// records them as a new condition instead.
var ErrPromptChanged = errors.New("prompt template changed since the condition's stored trials")

// makeModels makes the client of every model of the study.
func makeModels(opt Options, log *slog.Logger) ([]Model, error) {
	out := make([]Model, len(opt.Study.Models))
	for i, m := range opt.Study.Models {
		var err error
		if opt.Client != nil {
			out[i], err = opt.Client(m)
		} else {
			out[i], err = NewModel(m, log)
		}
		if err != nil {
			for _, made := range out[:i] {
				closeModel(made)
			}
			return nil, err
		}
	}
	return out, nil
}

// prepareStudy runs before anything is sent, under the study's lock. It
// hashes the templates the conditions use (study.TemplateHash) and
// compares each with the hashes of the condition's stored answered
// trials: a mismatch is ErrPromptChanged, naming every such condition —
// or, with opt.NewPrompts, the condition is stored under the prompt name
// "<template>+<first 8 hex digits of its hash>" (study.Condition.As), a new
// condition beside the old one; opt.Study is then a copy with those names.
// Trials stored before schema version 3 carry no hash and are not
// compared. Finally the study's snapshot (study.Snapshot) is recorded in
// the database when it differs from the latest one. It returns the
// template hashes by template name.
func prepareStudy(ctx context.Context, opt *Options) (map[string]string, error) {
	st := opt.Study
	hashes := map[string]string{}
	for _, c := range st.Conditions {
		if _, ok := hashes[c.Prompt]; ok {
			continue
		}
		t, err := opt.Prompts.Get(c.Prompt)
		if err != nil {
			return nil, err
		}
		hashes[c.Prompt] = study.TemplateHash(t)
	}
	stored, err := opt.DB.TemplateHashes(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	var changed []string
	renamed := false
	conds := slices.Clone(st.Conditions)
	for i, c := range conds {
		h := hashes[c.Prompt]
		var old []string
		for _, m := range st.Models {
			base := c
			base.As = ""
			for sh, n := range stored[condKey(trialKey(st, m, "", base, 0))] {
				if sh != h {
					old = append(old, fmt.Sprintf("%d trials of model %s asked with template hash %.8s", n, m.Name, sh))
				}
			}
		}
		if len(old) == 0 {
			continue
		}
		sort.Strings(old)
		if opt.NewPrompts {
			conds[i].As = c.Prompt + "+" + h[:8]
			renamed = true
			continue
		}
		changed = append(changed, fmt.Sprintf("condition %s × %s (labels %s): %s; the template now hashes to %.8s",
			c.Policy, c.Prompt, c.WithDefaults().Labels, strings.Join(old, ", "), h))
	}
	if len(changed) > 0 {
		return nil, fmt.Errorf("%w: %s. Restore the template, or rerun with --new-prompts to record the new wording as a new condition (prompt \"<name>+<hash>\")",
			ErrPromptChanged, strings.Join(changed, "; "))
	}
	if renamed {
		cp := *st
		cp.Conditions = conds
		opt.Study = &cp
		st = &cp
	}
	snap, err := st.Snapshot(opt.Prompts, pipeline.ToolVersion())
	if err != nil {
		return nil, err
	}
	js, err := snap.JSON()
	if err != nil {
		return nil, err
	}
	if _, err := opt.DB.PutSnapshot(ctx, st.Name, js); err != nil {
		return nil, err
	}
	return hashes, nil
}

// Keys lists every trial key of the study's scope (clips × conditions ×
// models × repetitions) by its String form, the custom_id of a batch line.
func keysByID(st *study.Study, clips []*clipData) map[string]results.Key {
	out := map[string]results.Key{}
	for _, c := range clips {
		for _, cond := range st.Conditions {
			for _, m := range st.Models {
				for rep := range st.Repetitions {
					k := trialKey(st, m, c.entry.ID, cond, rep)
					out[k.String()] = k
				}
			}
		}
	}
	return out
}
