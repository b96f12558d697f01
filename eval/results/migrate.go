package results

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// migrations[v] upgrades a results store from schema version v to v+1.
// Each runs inside the transaction that also sets the new version, so a
// kill during an upgrade leaves the old version whole.
var migrations = map[int]string{
	// 1 → 2: the frame label mode joins the key. Every trial stored before
	// label modes existed showed each frame with its time, so it gets
	// labels = 'time'. SQLite cannot change a primary key in place: the
	// table is rebuilt.
	1: `
CREATE TABLE trials_v2 (` + trialColumnsV2 + trialKey + `
);
INSERT INTO trials_v2 SELECT study, model, clip, policy, 'time', prompt, repeat, domain, n, f, seed, trace,
	frame_times, images, image_bytes, prompt_hash, responses, count, count_source, events, parse_flags,
	prompt_tokens, completion_tokens, total_tokens, latency_ms, cost_usd, error, error_kind, attempts, finished_at
	FROM trials;
DROP TABLE trials;
ALTER TABLE trials_v2 RENAME TO trials;
`,
	// 2 → 3: what the provider said joins every trial — finish reasons,
	// the model id the server reported, reasoning text and request ids per
	// turn, reasoning tokens — with the template's hash (a stored trial
	// gets '': it is not compared when a changed template is looked for)
	// and the batch file a trial came from; and two tables: the study's
	// snapshot per run, and the trials written to batch files.
	2: addColumns(trialColumnsV3) + tablesV3,
	// 3 → 4: the input audit joins every trial (docs/study.md, "Input
	// audit"): its verdict, the prompt tokens the frames sent should have
	// cost and a note with both figures; a stored trial gets '' (asked
	// before audits existed). And the table of the per-frame token rules
	// that tracegrid probe measured.
	3: addColumns(trialColumnsV4) + tablesV4,
}

// The trials table's columns, defined once: a new store creates them all
// (schemaSQL), an upgrade rebuilds or extends an older table with the same
// definitions (migrations).
//
// trialColumnsV2 are the columns of schema version 2 (version 1's with
// labels), in table order.
const trialColumnsV2 = `
	study             TEXT    NOT NULL,
	model             TEXT    NOT NULL,
	clip              TEXT    NOT NULL,
	policy            TEXT    NOT NULL,
	labels            TEXT    NOT NULL,
	prompt            TEXT    NOT NULL,
	repeat            INTEGER NOT NULL CHECK (repeat >= 0),
	domain            TEXT    NOT NULL,
	n                 INTEGER NOT NULL,
	f                 REAL    NOT NULL,
	seed              INTEGER NOT NULL,
	trace             TEXT,
	frame_times       TEXT    NOT NULL,
	images            INTEGER NOT NULL,
	image_bytes       INTEGER NOT NULL,
	prompt_hash       TEXT    NOT NULL,
	responses         TEXT    NOT NULL,
	count             INTEGER,
	count_source      TEXT    NOT NULL,
	events            TEXT    NOT NULL,
	parse_flags       TEXT    NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	total_tokens      INTEGER NOT NULL,
	latency_ms        INTEGER NOT NULL,
	cost_usd          REAL    NOT NULL,
	error             TEXT    NOT NULL,
	error_kind        TEXT    NOT NULL,
	attempts          INTEGER NOT NULL,
	finished_at       TEXT,`

// trialColumnsV3 are the columns version 3 added, in table order: they
// follow trialColumnsV2, and an upgrade adds them with addColumns.
const trialColumnsV3 = `
	finish_reasons    TEXT    NOT NULL DEFAULT '[]',
	served_model      TEXT    NOT NULL DEFAULT '',
	reasoning         TEXT    NOT NULL DEFAULT '[]',
	request_ids       TEXT    NOT NULL DEFAULT '[]',
	reasoning_tokens  INTEGER NOT NULL DEFAULT 0,
	template_hash     TEXT    NOT NULL DEFAULT '',
	batch_file        TEXT    NOT NULL DEFAULT '',`

// trialColumnsV4 are the columns version 4 added (the input audit), in
// table order after trialColumnsV3.
const trialColumnsV4 = `
	input_audit            TEXT    NOT NULL DEFAULT '',
	expected_prompt_tokens INTEGER NOT NULL DEFAULT 0,
	audit_note             TEXT    NOT NULL DEFAULT '',`

// tablesV4 is the table version 4 added: a model's input rule as measured
// by tracegrid probe, one row per study, model and modality (image or
// video frames).
const tablesV4 = `
CREATE TABLE IF NOT EXISTS input_rules (
	study       TEXT    NOT NULL,
	model       TEXT    NOT NULL,
	modality    TEXT    NOT NULL,
	per_frame   REAL    NOT NULL,
	text_base   REAL    NOT NULL,
	ref_bytes   INTEGER NOT NULL,
	source      TEXT    NOT NULL,
	measured_at TEXT    NOT NULL,
	PRIMARY KEY (study, model, modality)
);
`

// trialKey is the trials table's primary key since version 2.
const trialKey = `
	PRIMARY KEY (study, model, clip, policy, labels, prompt, repeat)`

// addColumns turns column definitions, one a line as in trialColumnsV3,
// into the ALTER TABLE statements that add them to trials.
func addColumns(columns string) string {
	var b strings.Builder
	b.WriteString("\n")
	for _, line := range strings.Split(strings.TrimSpace(columns), "\n") {
		b.WriteString("ALTER TABLE trials ADD COLUMN " + strings.TrimSuffix(strings.TrimSpace(line), ",") + ";\n")
	}
	return b.String()
}

// tablesV3 are the tables version 3 added beside trials.
const tablesV3 = `
CREATE TABLE IF NOT EXISTS study_snapshots (
	study    TEXT NOT NULL,
	taken_at TEXT NOT NULL,
	snapshot TEXT NOT NULL,
	PRIMARY KEY (study, taken_at)
);
CREATE TABLE IF NOT EXISTS batch_requests (
	custom_id  TEXT    PRIMARY KEY,
	study      TEXT    NOT NULL,
	model      TEXT    NOT NULL,
	clip       TEXT    NOT NULL,
	policy     TEXT    NOT NULL,
	labels     TEXT    NOT NULL,
	prompt     TEXT    NOT NULL,
	repeat     INTEGER NOT NULL,
	file       TEXT    NOT NULL,
	written_at TEXT    NOT NULL,
	request    TEXT    NOT NULL
);
`

// upgrade brings an older results store to SchemaVersion in one write
// transaction (BEGIN IMMEDIATE: another process upgrading the same file at
// once waits, then finds it done).
func (db *DB) upgrade(ctx context.Context) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.wrap("upgrade", err)
	}
	defer tx.Rollback()
	ver, tables, err := db.inspect(ctx, tx)
	if err != nil {
		return err
	}
	if ver == SchemaVersion {
		return db.verify(ctx, tx, ver, tables)
	}
	from := ver
	for ; ver < SchemaVersion; ver++ {
		sql, ok := migrations[ver]
		if !ok {
			return fmt.Errorf("%w: %s has schema version %d and no upgrade from it exists", ErrSchema, db.path, ver)
		}
		if _, err := tx.ExecContext(ctx, sql); err != nil {
			return db.wrap(fmt.Sprintf("upgrade from schema version %d", ver), err)
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE meta SET value = ? WHERE key = 'schema_version'", strconv.Itoa(SchemaVersion)); err != nil {
		return db.wrap("upgrade", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		"upgraded_from_"+strconv.Itoa(from), strconv.Itoa(SchemaVersion)); err != nil {
		return db.wrap("upgrade", err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion)); err != nil {
		return db.wrap("upgrade", err)
	}
	if err := tx.Commit(); err != nil {
		return db.wrap("upgrade", err)
	}
	return nil
}
