package results

import (
	"context"
	"fmt"
	"math"
	"time"
)

// InputRule is what a model's server charges for its input, as measured
// by tracegrid probe: prompt tokens ≈ TextBase + (text bytes − RefBytes)/4
// + frames × PerFrame, for one modality ("image": frames sent as images;
// "video": frames of a video). The input audit checks every trial against
// it (docs/study.md, "Input audit").
type InputRule struct {
	Study, Model, Modality string
	PerFrame               float64 // prompt tokens per frame, its label text included
	TextBase               float64 // prompt tokens of the probe's text with no frame
	RefBytes               int     // text bytes of the probe's request the base was measured on
	Source                 string  // where it came from, e.g. "probe: uniform:2 and uniform:4 on clip X"
	MeasuredAt             time.Time
}

// PutInputRule stores r, replacing the study's earlier rule for the same
// model and modality.
func (db *DB) PutInputRule(ctx context.Context, r InputRule) error {
	if db.readOnly {
		return fmt.Errorf("results: put input rule into %s: opened read-only", db.path)
	}
	if r.Study == "" || r.Model == "" || r.Modality == "" || !finite(r.PerFrame) || !finite(r.TextBase) || math.Abs(r.TextBase) > 1e12 {
		return fmt.Errorf("results: put input rule %+v: want a study, model, modality and finite figures", r)
	}
	if r.MeasuredAt.IsZero() {
		r.MeasuredAt = time.Now()
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return fmt.Errorf("results: put input rule into %s: %w", db.path, errClosed)
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO input_rules (study, model, modality, per_frame, text_base, ref_bytes, source, measured_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (study, model, modality) DO UPDATE SET
		per_frame = excluded.per_frame, text_base = excluded.text_base, ref_bytes = excluded.ref_bytes,
		source = excluded.source, measured_at = excluded.measured_at`,
		r.Study, r.Model, r.Modality, r.PerFrame, r.TextBase, r.RefBytes, r.Source, r.MeasuredAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("results: put input rule of %s/%s: %w", r.Study, r.Model, err)
	}
	return nil
}

// InputRules returns the study's stored input rules.
func (db *DB) InputRules(ctx context.Context, study string) ([]InputRule, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	rows, err := sdb.QueryContext(ctx, `SELECT study, model, modality, per_frame, text_base, ref_bytes, source, measured_at
		FROM input_rules WHERE study = ? ORDER BY model, modality`, study)
	if err != nil {
		return nil, fmt.Errorf("results: input rules from %s: %w", db.path, err)
	}
	defer rows.Close()
	var out []InputRule
	for rows.Next() {
		var r InputRule
		var at string
		if err := rows.Scan(&r.Study, &r.Model, &r.Modality, &r.PerFrame, &r.TextBase, &r.RefBytes, &r.Source, &at); err != nil {
			return nil, fmt.Errorf("results: input rules from %s: %w", db.path, err)
		}
		r.MeasuredAt, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, r)
	}
	return out, rows.Err()
}
