package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Snapshot is one stored snapshot of a study (study.Snapshot's JSON).
type Snapshot struct {
	Study   string
	TakenAt time.Time
	JSON    json.RawMessage
}

// PutSnapshot stores snapshot as the study's latest when it differs from
// the latest one stored (byte for byte); stored says whether it did. The
// snapshot must be JSON; it holds no key (a study has none).
func (db *DB) PutSnapshot(ctx context.Context, study string, snapshot []byte) (stored bool, err error) {
	if db.readOnly {
		return false, fmt.Errorf("results: put snapshot of %q into %s: opened read-only", study, db.path)
	}
	if study == "" || !json.Valid(snapshot) {
		return false, fmt.Errorf("results: put snapshot of %q: want a study name and JSON", study)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return false, fmt.Errorf("results: put snapshot into %s: %w", db.path, errClosed)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("results: put snapshot of %q: %w", study, err)
	}
	defer tx.Rollback()
	var last string
	err = tx.QueryRowContext(ctx, "SELECT snapshot FROM study_snapshots WHERE study = ? ORDER BY taken_at DESC LIMIT 1", study).Scan(&last)
	switch {
	case err == nil && bytes.Equal([]byte(last), snapshot):
		return false, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("results: put snapshot of %q: %w", study, err)
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := tx.ExecContext(ctx, "INSERT INTO study_snapshots (study, taken_at, snapshot) VALUES (?, ?, ?) ON CONFLICT (study, taken_at) DO UPDATE SET snapshot = excluded.snapshot",
		study, at, string(snapshot)); err != nil {
		return false, fmt.Errorf("results: put snapshot of %q: %w", study, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("results: put snapshot of %q: %w", study, err)
	}
	return true, nil
}

// Snapshots returns the study's snapshots, oldest first.
func (db *DB) Snapshots(ctx context.Context, study string) ([]Snapshot, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	rows, err := sdb.QueryContext(ctx, "SELECT study, taken_at, snapshot FROM study_snapshots WHERE study = ? ORDER BY taken_at", study)
	if err != nil {
		return nil, fmt.Errorf("results: snapshots from %s: %w", db.path, err)
	}
	defer rows.Close()
	var out []Snapshot
	for rows.Next() {
		var s Snapshot
		var at, js string
		if err := rows.Scan(&s.Study, &at, &js); err != nil {
			return nil, fmt.Errorf("results: snapshots from %s: %w", db.path, err)
		}
		if s.TakenAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("results: snapshots from %s: taken_at: %w", db.path, err)
		}
		s.JSON = json.RawMessage(js)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: snapshots from %s: %w", db.path, err)
	}
	return out, nil
}

// TemplateHashes returns, for the study's answered trials that carry a
// template hash (schema 3 and later), how many trials each hash has, by
// condition: the key's Clip is "" and its Repeat 0.
func (db *DB) TemplateHashes(ctx context.Context, study string) (map[Key]map[string]int, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	rows, err := sdb.QueryContext(ctx, `SELECT model, policy, labels, prompt, template_hash, COUNT(*) FROM trials
		WHERE study = ? AND template_hash != '' AND (error = '' OR error_kind = ?)
		GROUP BY model, policy, labels, prompt, template_hash`, study, KindParse)
	if err != nil {
		return nil, fmt.Errorf("results: template hashes from %s: %w", db.path, err)
	}
	defer rows.Close()
	out := map[Key]map[string]int{}
	for rows.Next() {
		k := Key{Study: study}
		var hash string
		var n int
		if err := rows.Scan(&k.Model, &k.Policy, &k.Labels, &k.Prompt, &hash, &n); err != nil {
			return nil, fmt.Errorf("results: template hashes from %s: %w", db.path, err)
		}
		if out[k] == nil {
			out[k] = map[string]int{}
		}
		out[k][hash] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: template hashes from %s: %w", db.path, err)
	}
	return out, nil
}

// BatchRequest is a trial written to a batch input file: its line's
// custom_id, the file, and the request summary the trial records when its
// reply is read back (Request: the runner's JSON).
type BatchRequest struct {
	CustomID  string
	Key       Key
	File      string
	WrittenAt time.Time
	Request   json.RawMessage
}

// PutBatchRequests stores the requests (replacing any with the same
// custom_id) in one transaction.
func (db *DB) PutBatchRequests(ctx context.Context, reqs []BatchRequest) error {
	if db.readOnly {
		return fmt.Errorf("results: put batch requests into %s: opened read-only", db.path)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return fmt.Errorf("results: put batch requests into %s: %w", db.path, errClosed)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: put batch requests: %w", err)
	}
	defer tx.Rollback()
	for _, r := range reqs {
		k := r.Key
		if r.CustomID == "" || !json.Valid(r.Request) {
			return fmt.Errorf("results: put batch request %s: want a custom_id and a JSON request", k)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO batch_requests (custom_id, study, model, clip, policy, labels, prompt, repeat, file, written_at, request)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (custom_id) DO UPDATE SET study = excluded.study, model = excluded.model, clip = excluded.clip, policy = excluded.policy,
				labels = excluded.labels, prompt = excluded.prompt, repeat = excluded.repeat, file = excluded.file,
				written_at = excluded.written_at, request = excluded.request`,
			r.CustomID, k.Study, k.Model, k.Clip, k.Policy, k.Labels, k.Prompt, k.Repeat, r.File,
			r.WrittenAt.UTC().Format(time.RFC3339Nano), string(r.Request)); err != nil {
			return fmt.Errorf("results: put batch request %s: %w", k, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: put batch requests: %w", err)
	}
	return nil
}

// BatchRequests returns the study's requests written to batch files, by
// custom_id.
func (db *DB) BatchRequests(ctx context.Context, study string) (map[string]BatchRequest, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	rows, err := sdb.QueryContext(ctx, "SELECT custom_id, "+keyColumns+", file, written_at, request FROM batch_requests WHERE study = ?", study)
	if err != nil {
		return nil, fmt.Errorf("results: batch requests from %s: %w", db.path, err)
	}
	defer rows.Close()
	out := map[string]BatchRequest{}
	for rows.Next() {
		var r BatchRequest
		var at, req string
		if err := rows.Scan(append(append([]any{&r.CustomID}, r.Key.dest()...), &r.File, &at, &req)...); err != nil {
			return nil, fmt.Errorf("results: batch requests from %s: %w", db.path, err)
		}
		if r.WrittenAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("results: batch requests from %s: written_at: %w", db.path, err)
		}
		r.Request = json.RawMessage(req)
		out[r.CustomID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: batch requests from %s: %w", db.path, err)
	}
	return out, nil
}

// PutUnlessDone stores t unless a trial under its key is already done
// (Trial.Done), in one transaction; stored says whether it did. Recording
// a batch's replies with it is idempotent: a second reading of the same
// output file finds every trial done and changes nothing.
func (db *DB) PutUnlessDone(ctx context.Context, t Trial) (stored bool, err error) {
	if db.readOnly {
		return false, fmt.Errorf("results: put %s into %s: opened read-only", t.Key, db.path)
	}
	if err := t.validate(); err != nil {
		return false, fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	args, err := t.args()
	if err != nil {
		return false, fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return false, fmt.Errorf("results: put %s into %s: %w", t.Key, db.path, errClosed)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	defer tx.Rollback()
	k := t.Key
	var msg, kind string
	err = tx.QueryRowContext(ctx, "SELECT error, error_kind FROM trials WHERE study = ? AND model = ? AND clip = ? AND policy = ? AND labels = ? AND prompt = ? AND repeat = ?",
		k.Study, k.Model, k.Clip, k.Policy, k.Labels, k.Prompt, k.Repeat).Scan(&msg, &kind)
	switch {
	case err == nil && isDone(kind, msg != ""):
		return false, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	if _, err := tx.ExecContext(ctx, upsertSQL, args...); err != nil {
		return false, fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	return true, nil
}

// DeleteBatchRequests forgets the given custom_ids (a failed batch line:
// its trial may be sent again).
func (db *DB) DeleteBatchRequests(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if db.readOnly {
		return fmt.Errorf("results: delete batch requests from %s: opened read-only", db.path)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return fmt.Errorf("results: delete batch requests from %s: %w", db.path, errClosed)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: delete batch requests: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, "DELETE FROM batch_requests WHERE custom_id = ?", id); err != nil {
			return fmt.Errorf("results: delete batch request %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: delete batch requests: %w", err)
	}
	return nil
}
