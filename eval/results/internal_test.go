package results

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The durability and locking settings reach every connection, on a path
// with URI metacharacters in it.
func TestConnectionSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a b?c#d%20e.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.Put(ctx, Trial{Key: Key{"s", "m", "c", "p", "time", "q", 0}}); err != nil {
		t.Fatal(err)
	}
	for pragma, want := range map[string]string{"synchronous": "2", "journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "30000", "user_version": "4"} {
		var got string
		if err := db.sql.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
	// Lookups by study use the primary key's index.
	rows, err := db.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT "+columns+" FROM trials WHERE study = ? ORDER BY "+keyColumns, "s")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan = append(plan, detail)
	}
	rows.Close()
	if p := strings.Join(plan, "; "); !strings.Contains(p, "USING INDEX") || strings.Contains(p, "TEMP B-TREE") {
		t.Errorf("query plan: %s", p)
	}
	db.Close()

	// A reader cleans up after itself: only the database file remains.
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if all, err := ro.Trials(ctx, Filter{Study: "s"}); err != nil || len(all) != 1 {
		t.Errorf("Trials: %d, %v", len(all), err)
	}
	var qo string
	if ro.sql.QueryRowContext(ctx, "PRAGMA query_only").Scan(&qo); qo != "1" {
		t.Errorf("query_only = %q", qo)
	}
	ro.Close()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files after a read: %v", ents)
	}
}
