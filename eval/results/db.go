package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// busyTimeoutMS is how long a statement waits for another writer (another
// process on the same file) before failing with "database is locked".
const busyTimeoutMS = 30000

// DB is an open results database. Its methods are safe for concurrent use;
// several processes may write the same file (each waits its turn).
type DB struct {
	path     string
	readOnly bool

	mu  sync.Mutex // serialises this process's writers, and Close
	sql *sql.DB    // nil once closed
}

// Open opens the results database at path, creating it when missing: WAL
// journal, synchronous=FULL, foreign keys on, a 30 s busy timeout, write
// transactions that take the write lock at BEGIN (so concurrent writers wait
// instead of failing). An existing file must be a results database of
// SchemaVersion (ErrSchema otherwise) and an SQLite file at all
// (ErrNotDatabase otherwise). The directory must exist.
func Open(path string) (*DB, error) { return open(path, false) }

// OpenReadOnly opens an existing results database for reading (reports,
// export). A missing file is an error wrapping fs.ErrNotExist, and nothing is
// created. It may be used while another process writes the file.
func OpenReadOnly(path string) (*DB, error) { return open(path, true) }

func open(path string, readOnly bool) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("results: open %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("results: open %s: is a directory", path)
	case err == nil:
		if err := checkHeader(abs, path); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist) && !readOnly:
		// SQLite creates the file; it cannot create the directory.
		if _, err := os.Stat(filepath.Dir(abs)); err != nil {
			return nil, fmt.Errorf("results: create %s: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("results: open %s: %w", path, err)
	}

	if !readOnly {
		return connect(path, dsn(abs, "rwc"), false)
	}
	// Read-only: a query-only connection that may write the WAL index, so
	// that it cleans up the -wal and -shm files it opens; where the file or
	// directory is not writable, a read-only one.
	db, err := connect(path, dsn(abs, "rw"), true)
	if err != nil && !errors.Is(err, ErrSchema) && !errors.Is(err, ErrNotDatabase) {
		db, err = connect(path, dsn(abs, "ro"), true)
	}
	return db, err
}

func connect(path, dsn string, readOnly bool) (*DB, error) {
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("results: open %s: %w", path, err)
	}
	db := &DB{path: path, readOnly: readOnly, sql: sdb}
	if err := db.init(context.Background()); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// dsn is the driver's name for the file: a file: URI (so that SQLite sees
// mode: rwc, rw or ro) with the path's URI metacharacters escaped, and the
// per-connection pragmas every pooled connection runs.
func dsn(abs, mode string) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(abs))
	q := "file:" + p + "?mode=" + mode + "&_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")&_pragma=foreign_keys(1)"
	if mode != "rwc" {
		return q + "&_pragma=query_only(1)"
	}
	return q + "&_pragma=synchronous(FULL)&_txlock=immediate"
}

// checkHeader refuses a non-empty file that does not start with SQLite's
// magic string, before SQLite sees it. An empty file is an empty database.
func checkHeader(abs, path string) error {
	f, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("results: open %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("results: open %s: %w", path, err)
	}
	if n == 0 || bytes.Equal(head[:n], []byte("SQLite format 3\x00")) {
		return nil
	}
	return fmt.Errorf("%w: %s starts with %q, not the SQLite header", ErrNotDatabase, path, head[:n])
}

// init checks the schema and, for a new database, creates it.
func (db *DB) init(ctx context.Context) error {
	ver, tables, err := db.inspect(ctx, db.sql)
	if err != nil {
		return err
	}
	if ver == 0 && len(tables) == 0 {
		if db.readOnly {
			return fmt.Errorf("%w: %s is an empty database, not a tracegrid results store", ErrSchema, db.path)
		}
		// WAL before the first table: journal_mode cannot change inside
		// the creating transaction.
		if err := db.wal(ctx); err != nil {
			return err
		}
		return db.create(ctx)
	}
	if ver > 0 && ver < SchemaVersion && db.isStore(ctx) {
		if err := db.upgradeOlder(ctx); err != nil {
			return err
		}
		if ver, tables, err = db.inspect(ctx, db.sql); err != nil {
			return err
		}
	}
	if err := db.verify(ctx, db.sql, ver, tables); err != nil {
		return err
	}
	if !db.readOnly {
		return db.wal(ctx)
	}
	return nil
}

// isStore reports whether the meta table marks the file as a results
// store (of any version).
func (db *DB) isStore(ctx context.Context) bool {
	var mark string
	err := db.sql.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'format'").Scan(&mark)
	return err == nil && mark == format
}

// upgradeOlder upgrades an older results store in place. A read-only
// handle (reports, export) upgrades through a short-lived writable
// connection, since it cannot read the old layout; where the file cannot
// be written, the error says how to upgrade it.
func (db *DB) upgradeOlder(ctx context.Context) error {
	if !db.readOnly {
		return db.upgrade(ctx)
	}
	abs, err := filepath.Abs(db.path)
	if err != nil {
		return fmt.Errorf("results: upgrade %s: %w", db.path, err)
	}
	w, err := sql.Open("sqlite", dsn(abs, "rwc"))
	if err != nil {
		return fmt.Errorf("results: upgrade %s: %w", db.path, err)
	}
	defer w.Close()
	rw := &DB{path: db.path, sql: w}
	if err := rw.upgrade(ctx); err != nil {
		return fmt.Errorf("%w (the older schema is upgraded in place when the file is writable: open it once with a write access, e.g. copy it somewhere writable)", err)
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// inspect reads user_version and the table names.
func (db *DB) inspect(ctx context.Context, q querier) (ver int, tables []string, err error) {
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&ver); err != nil {
		return 0, nil, db.wrap("open", err)
	}
	rows, err := q.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		return 0, nil, db.wrap("open", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return 0, nil, db.wrap("open", err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, db.wrap("open", err)
	}
	return ver, tables, nil
}

// verify accepts only a results store of SchemaVersion.
func (db *DB) verify(ctx context.Context, q querier, ver int, tables []string) error {
	if ver != SchemaVersion && ver != 0 {
		who := "a newer"
		if ver < SchemaVersion {
			who = "an older"
		}
		return fmt.Errorf("%w: %s has schema version %d, this tracegrid reads version %d (written by %s tracegrid; export it with that one, or start a new database)",
			ErrSchema, db.path, ver, SchemaVersion, who)
	}
	var mark string
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'format'").Scan(&mark)
	if ver == 0 || err != nil || mark != format {
		return fmt.Errorf("%w: %s is an SQLite database but not a tracegrid results store (schema version %d, tables %s; want version %d with a meta table marked %q)",
			ErrSchema, db.path, ver, strings.Join(tables, ", "), SchemaVersion, format)
	}
	return nil
}

// wal switches the file to write-ahead logging (persistent, so a no-op
// after the first time). A filesystem without shared memory keeps the
// rollback journal, which is as durable, with readers blocked while a
// writer commits.
func (db *DB) wal(ctx context.Context) error {
	var mode string
	if err := db.sql.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return db.wrap("set WAL journal", err)
	}
	return nil
}

const schemaSQL = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (` + trialColumnsV2 + trialColumnsV3 + trialColumnsV4 + trialKey + `
);
` + tablesV3 + tablesV4

// create makes the tables in one write transaction. Two processes creating
// the same file at once are serialised by BEGIN IMMEDIATE; the second finds
// the first's tables and only verifies them.
func (db *DB) create(ctx context.Context) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.wrap("create", err)
	}
	defer tx.Rollback()
	ver, tables, err := db.inspect(ctx, tx)
	if err != nil {
		return err
	}
	if ver != 0 || len(tables) != 0 {
		return db.verify(ctx, tx, ver, tables)
	}
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return db.wrap("create", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('format', ?), ('schema_version', ?), ('created_at', ?)",
		format, strconv.Itoa(SchemaVersion), time.Now().UTC().Format(time.RFC3339)); err != nil {
		return db.wrap("create", err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion)); err != nil {
		return db.wrap("create", err)
	}
	if err := tx.Commit(); err != nil {
		return db.wrap("create", err)
	}
	return nil
}

// wrap adds the operation and path, and turns SQLite's "file is not a
// database" into ErrNotDatabase.
func (db *DB) wrap(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB {
		return fmt.Errorf("%w: %s: %v", ErrNotDatabase, db.path, err)
	}
	return fmt.Errorf("results: %s %s: %w", op, db.path, err)
}

// Close closes the database. It is idempotent and nil-safe.
func (db *DB) Close() error {
	if db == nil {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return nil
	}
	err := db.sql.Close()
	db.sql = nil
	if err != nil {
		return fmt.Errorf("results: close %s: %w", db.path, err)
	}
	return nil
}

var errClosed = errors.New("database is closed")

// handle returns the open pool, or an error once closed.
func (db *DB) handle() (*sql.DB, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return nil, fmt.Errorf("results: %s: %w", db.path, errClosed)
	}
	return db.sql, nil
}

// String names a key in messages: study/model/clip/policy/prompt#repeat.
func (k Key) String() string {
	return k.Study + "/" + k.Model + "/" + k.Clip + "/" + k.Policy + "/" + k.Labels + "/" + k.Prompt + "#" + strconv.Itoa(k.Repeat)
}

// keyColumns are the key's columns in Key's field order (Key.dest); the
// primary key and every lookup by key use them.
const keyColumns = "study, model, clip, policy, labels, prompt, repeat"

// dest are pointers to the key's fields in keyColumns' order, for Scan.
func (k *Key) dest() []any {
	return []any{&k.Study, &k.Model, &k.Clip, &k.Policy, &k.Labels, &k.Prompt, &k.Repeat}
}

const columns = `study, model, clip, policy, labels, prompt, repeat, domain, n, f, seed, trace,
	frame_times, images, image_bytes, prompt_hash, responses, count, count_source, events, parse_flags,
	prompt_tokens, completion_tokens, total_tokens, latency_ms, cost_usd, error, error_kind, attempts, finished_at,
	finish_reasons, served_model, reasoning, request_ids, reasoning_tokens, template_hash, batch_file,
	input_audit, expected_prompt_tokens, audit_note`

var upsertSQL = func() string {
	names := strings.Split(strings.Join(strings.Fields(columns), ""), ",")
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	var set []string
	for _, n := range names[len(strings.Split(keyColumns, ",")):] {
		set = append(set, n+" = excluded."+n)
	}
	return "INSERT INTO trials (" + columns + ") VALUES (" + marks + ")\n" +
		"ON CONFLICT (" + keyColumns + ") DO UPDATE SET " + strings.Join(set, ", ")
}()

// Put stores the trial, replacing any row with the same key, in one
// transaction that is durable when Put returns. It refuses a key with an
// empty field or a negative repeat, a trace that is not JSON, and
// non-finite numbers (SQLite would store NaN as NULL).
func (db *DB) Put(ctx context.Context, t Trial) error {
	if db.readOnly {
		return fmt.Errorf("results: put %s into %s: opened read-only", t.Key, db.path)
	}
	if err := t.validate(); err != nil {
		return fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	args, err := t.args()
	if err != nil {
		return fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	// One writer per process at a time: they would only queue inside
	// SQLite's busy handler, which polls; other processes still do.
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.sql == nil {
		return fmt.Errorf("results: put %s into %s: %w", t.Key, db.path, errClosed)
	}
	tx, err := db.sql.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, upsertSQL, args...); err != nil {
		return fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: put %s: %w", t.Key, err)
	}
	return nil
}

// args are the column values, in the order of columns.
func (t *Trial) args() ([]any, error) {
	var js [7]string
	for i, v := range []any{t.FrameTimes, t.Responses, toEvents(t.Events), t.ParseFlags, nonNil(t.FinishReasons), nonNil(t.Reasoning), nonNil(t.RequestIDs)} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		js[i] = string(b)
	}
	var trace, finished, count any
	if len(t.Trace) > 0 {
		trace = string(t.Trace)
	}
	if !t.FinishedAt.IsZero() {
		finished = t.FinishedAt.UTC().Format(time.RFC3339Nano)
	}
	if t.Count != nil {
		count = *t.Count
	}
	return []any{
		t.Study, t.Model, t.Clip, t.Policy, t.Labels, t.Prompt, t.Repeat, t.Domain, t.N, t.F, t.Seed, trace,
		js[0], t.Images, t.ImageBytes, t.PromptHash, js[1], count, t.CountSource, js[2], js[3],
		t.Usage.PromptTokens, t.Usage.CompletionTokens, t.Usage.TotalTokens, t.LatencyMS, t.CostUSD,
		t.Error, t.ErrorKind, t.Attempts, finished,
		js[4], t.ServedModel, js[5], js[6], t.Usage.ReasoningTokens, t.TemplateHash, t.BatchFile,
		t.InputAudit, t.ExpectedPromptTokens, t.AuditNote,
	}, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanTrial reads one row selected with columns.
func scanTrial(s scanner) (Trial, error) {
	var (
		t                                 Trial
		trace, finished                   sql.NullString
		count                             sql.NullInt64
		frameTimes, resp, evs, parseFlags string
		finishes, reasoning, requestIDs   string
	)
	err := s.Scan(append(t.Key.dest(), &t.Domain, &t.N, &t.F, &t.Seed, &trace,
		&frameTimes, &t.Images, &t.ImageBytes, &t.PromptHash, &resp, &count, &t.CountSource, &evs, &parseFlags,
		&t.Usage.PromptTokens, &t.Usage.CompletionTokens, &t.Usage.TotalTokens, &t.LatencyMS, &t.CostUSD,
		&t.Error, &t.ErrorKind, &t.Attempts, &finished,
		&finishes, &t.ServedModel, &reasoning, &requestIDs, &t.Usage.ReasoningTokens, &t.TemplateHash, &t.BatchFile,
		&t.InputAudit, &t.ExpectedPromptTokens, &t.AuditNote)...)
	if err != nil {
		return Trial{}, err
	}
	if trace.Valid {
		t.Trace = json.RawMessage(trace.String)
	}
	if count.Valid {
		c := int(count.Int64)
		t.Count = &c
	}
	if finished.Valid {
		if t.FinishedAt, err = time.Parse(time.RFC3339Nano, finished.String); err != nil {
			return Trial{}, fmt.Errorf("%s: finished_at: %w", t.Key, err)
		}
	}
	var events []event
	for _, c := range []struct {
		name, text string
		dst        any
	}{{"frame_times", frameTimes, &t.FrameTimes}, {"responses", resp, &t.Responses}, {"events", evs, &events}, {"parse_flags", parseFlags, &t.ParseFlags},
		{"finish_reasons", finishes, &t.FinishReasons}, {"reasoning", reasoning, &t.Reasoning}, {"request_ids", requestIDs, &t.RequestIDs}} {
		if err := json.Unmarshal([]byte(c.text), c.dst); err != nil {
			return Trial{}, fmt.Errorf("%s: %s: %w", t.Key, c.name, err)
		}
	}
	t.Events = fromEvents(events)
	for _, l := range []*[]string{&t.FinishReasons, &t.Reasoning, &t.RequestIDs} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return t, nil
}

// Get returns the trial stored under k; ok is false when there is none.
func (db *DB) Get(ctx context.Context, k Key) (t Trial, ok bool, err error) {
	sdb, err := db.handle()
	if err != nil {
		return Trial{}, false, err
	}
	row := sdb.QueryRowContext(ctx, "SELECT "+columns+" FROM trials WHERE study = ? AND model = ? AND clip = ? AND policy = ? AND labels = ? AND prompt = ? AND repeat = ?",
		k.Study, k.Model, k.Clip, k.Policy, k.Labels, k.Prompt, k.Repeat)
	t, err = scanTrial(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Trial{}, false, nil
	}
	if err != nil {
		return Trial{}, false, fmt.Errorf("results: get %s from %s: %w", k, db.path, err)
	}
	return t, true, nil
}

// Done returns the keys of the study's finished trials (Trial.Done), the
// ones a rerun skips; study "" means every study. Each value is true.
func (db *DB) Done(ctx context.Context, study string) (map[Key]bool, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	q := "SELECT " + keyColumns + ", error, error_kind FROM trials"
	var args []any
	if study != "" {
		q += " WHERE study = ?"
		args = append(args, study)
	}
	rows, err := sdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("results: done keys from %s: %w", db.path, err)
	}
	defer rows.Close()
	done := map[Key]bool{}
	for rows.Next() {
		var t Trial
		if err := rows.Scan(append(t.Key.dest(), &t.Error, &t.ErrorKind)...); err != nil {
			return nil, fmt.Errorf("results: done keys from %s: %w", db.path, err)
		}
		if t.Done() {
			done[t.Key] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: done keys from %s: %w", db.path, err)
	}
	return done, nil
}

// Trials returns the trials f selects, ordered by study, model, clip,
// policy, prompt and repeat (byte order of the strings).
func (db *DB) Trials(ctx context.Context, f Filter) ([]Trial, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	q := "SELECT " + columns + " FROM trials"
	var where []string
	var args []any
	if f.Study != "" {
		where, args = append(where, "study = ?"), append(args, f.Study)
	}
	if f.Model != "" {
		where, args = append(where, "model = ?"), append(args, f.Model)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + keyColumns
	rows, err := sdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("results: read trials from %s: %w", db.path, err)
	}
	defer rows.Close()
	var out []Trial
	for rows.Next() {
		t, err := scanTrial(rows)
		if err != nil {
			return nil, fmt.Errorf("results: read trials from %s: %w", db.path, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: read trials from %s: %w", db.path, err)
	}
	return out, nil
}

// Studies returns the names of the studies with at least one trial, sorted.
func (db *DB) Studies(ctx context.Context) ([]string, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	rows, err := sdb.QueryContext(ctx, "SELECT DISTINCT study FROM trials ORDER BY study")
	if err != nil {
		return nil, fmt.Errorf("results: studies in %s: %w", db.path, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("results: studies in %s: %w", db.path, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: studies in %s: %w", db.path, err)
	}
	return out, nil
}
