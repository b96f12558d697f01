package results_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

// copyV1 copies testdata/v1.sqlite — a database written by the release
// before label modes (schema version 1: two keyframes trials of study
// v1study) — into a temporary directory.
func copyV1(t *testing.T) string { return copyTestdata(t, "v1.sqlite") }

// copyV2 copies testdata/v2.sqlite, written by the schema-2 release (the
// code of this package before version 3, through Put): study v2study with
// an answered uniform:4 × direct trial (count 2, $0.02, prompt_hash
// "hash-direct-v2"), the same condition's repeat 1 failed with a timeout,
// and a not-applicable keyframes trial.
func copyV2(t *testing.T) string { return copyTestdata(t, "v2.sqlite") }

func copyTestdata(t *testing.T, name string) string {
	t.Helper()
	src, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "old.sqlite")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUpgradeV1: a version-1 database opens, is upgraded in place to the
// current schema, keeps every trial with labels "time" (what version 1
// sent), and takes new trials with other label modes under the same
// policy without a key clash. A read-only open upgrades too.
func TestUpgradeV1(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(string) (*results.DB, error){"Open": results.Open, "OpenReadOnly": results.OpenReadOnly} {
		path := copyV1(t)
		db, err := open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ts, err := db.Trials(ctx, results.Filter{Study: "v1study"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 2 {
			t.Fatalf("%s: %d trials after the upgrade, want 2", name, len(ts))
		}
		for _, tr := range ts {
			if tr.Labels != "time" || tr.Policy != "keyframes" || tr.Count == nil || *tr.Count != 2 || len(tr.Events) != 1 || tr.CostUSD != 0.01 {
				t.Errorf("%s: upgraded trial %+v", name, tr)
			}
		}
		db.Close()
		// Once upgraded it is a current store.
		db, err = results.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		k := ts[0].Key
		k.Labels = "position"
		nt := ts[0]
		nt.Key = k
		if err := db.Put(ctx, nt); err != nil {
			t.Fatal(err)
		}
		done, err := db.Done(ctx, "v1study")
		if err != nil {
			t.Fatal(err)
		}
		if len(done) != 3 || !done[k] || !done[ts[0].Key] {
			t.Errorf("%s: done keys %v", name, done)
		}
		db.Close()
	}
}

// TestUpgradeV2: a database the schema-2 release wrote opens, is upgraded
// in place to the current version through 3 and 4 (read-only opens
// too), keeps every trial as it was — with the new fields empty, the
// input audit's too — and then takes new trials, snapshots and input
// rules.
func TestUpgradeV2(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(string) (*results.DB, error){"Open": results.Open, "OpenReadOnly": results.OpenReadOnly} {
		path := copyV2(t)
		db, err := open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ts, err := db.Trials(ctx, results.Filter{Study: "v2study"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 3 {
			t.Fatalf("%s: %d trials after the upgrade, want 3", name, len(ts))
		}
		byKind := map[string]results.Trial{}
		for _, tr := range ts {
			byKind[tr.ErrorKind] = tr
			if tr.FinishReasons != nil || tr.Reasoning != nil || tr.RequestIDs != nil || tr.ServedModel != "" || tr.TemplateHash != "" || tr.BatchFile != "" || tr.Usage.ReasoningTokens != 0 ||
				tr.InputAudit != "" || tr.ExpectedPromptTokens != 0 || tr.AuditNote != "" {
				t.Errorf("%s: %v: version-3 fields not empty: %+v", name, tr.Key, tr)
			}
		}
		a := byKind[""]
		if a.Count == nil || *a.Count != 2 || a.CostUSD != 0.02 || a.PromptHash != "hash-direct-v2" || a.Usage.PromptTokens != 1000 ||
			len(a.Events) != 1 || a.Labels != "time" || !a.Done() {
			t.Errorf("%s: answered trial %+v", name, a)
		}
		if f := byKind["timeout"]; f.Done() || f.Attempts != 4 {
			t.Errorf("%s: timed-out trial %+v", name, f)
		}
		if na := byKind["not_applicable"]; !na.Done() || na.Labels != "position" {
			t.Errorf("%s: not-applicable trial %+v", name, na)
		}
		db.Close()

		db, err = results.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		// The old trials carry no template hash: nothing to compare.
		if hs, err := db.TemplateHashes(ctx, "v2study"); err != nil || len(hs) != 0 {
			t.Errorf("%s: template hashes of old trials %v %v", name, hs, err)
		}
		nt := byKind["timeout"]
		nt.Error, nt.ErrorKind, nt.Responses, nt.FinishReasons, nt.ServedModel, nt.TemplateHash = "", "", []string{"\\boxed{2}"}, []string{"stop"}, "fake-2", "th"
		if err := db.Put(ctx, nt); err != nil {
			t.Fatal(err)
		}
		got, ok, err := db.Get(ctx, nt.Key)
		if err != nil || !ok || got.ServedModel != "fake-2" || len(got.FinishReasons) != 1 {
			t.Errorf("%s: version-3 trial after the upgrade: %+v %v", name, got, err)
		}
		if stored, err := db.PutSnapshot(ctx, "v2study", []byte(`{"name":"v2study"}`)); err != nil || !stored {
			t.Errorf("%s: snapshot after the upgrade: %v %v", name, stored, err)
		}
		if err := db.PutInputRule(ctx, results.InputRule{Study: "v2study", Model: "m", Modality: "video", PerFrame: 64, TextBase: 120, RefBytes: 300, Source: "probe"}); err != nil {
			t.Errorf("%s: input rule after the upgrade: %v", name, err)
		}
		var ver int
		if err := sqlVersion(path, &ver); err != nil || ver != results.SchemaVersion {
			t.Errorf("%s: user_version %d (%v)", name, ver, err)
		}
		db.Close()
	}
}

// sqlVersion reads PRAGMA user_version with a plain connection.
func sqlVersion(path string, ver *int) error {
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer raw.Close()
	return raw.QueryRow("PRAGMA user_version").Scan(ver)
}

// TestUpgradedTablesMatchNew: a store upgraded from version 1 or 2 has
// exactly the tables and columns (name, type, NOT NULL, default, key
// position) of a store created new — the schema is defined once and both
// paths build it from that definition.
func TestUpgradedTablesMatchNew(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "new.sqlite")
	db, err := results.Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := tableColumns(t, fresh)
	if len(want["trials"]) != 40 || len(want) != 5 {
		t.Fatalf("new store: %d tables, %d trial columns; want 5 and 40", len(want), len(want["trials"]))
	}
	for name, path := range map[string]string{"v1": copyV1(t), "v2": copyV2(t)} {
		db, err := results.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		db.Close()
		got := tableColumns(t, path)
		for table, cols := range want {
			if len(got[table]) != len(cols) {
				t.Errorf("%s upgraded: table %s has %d columns, a new store %d", name, table, len(got[table]), len(cols))
				continue
			}
			for i := range cols {
				if got[table][i] != cols[i] {
					t.Errorf("%s upgraded: %s column %d is %q, a new store's %q", name, table, i, got[table][i], cols[i])
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s upgraded: %d tables, a new store %d", name, len(got), len(want))
		}
	}
}

// tableColumns lists each table's columns as "name type notnull default
// pk", in table order.
func tableColumns(t *testing.T, path string) map[string][]string {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query("SELECT m.name, p.name, p.type, p.\"notnull\", coalesce(p.dflt_value, ''), p.pk FROM sqlite_schema m, pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, col, typ, dflt string
		var notNull, pk int
		if err := rows.Scan(&table, &col, &typ, &notNull, &dflt, &pk); err != nil {
			t.Fatal(err)
		}
		out[table] = append(out[table], fmt.Sprintf("%s %s %d %s %d", col, typ, notNull, dflt, pk))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
