package results_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/results"
)

// A snapshot is stored when it differs from the study's latest, once.
func TestPutSnapshot(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	for i, c := range []struct {
		study, js string
		stored    bool
	}{
		{"a", `{"v":1}`, true},
		{"a", `{"v":1}`, false}, // unchanged
		{"b", `{"v":1}`, true},  // another study
		{"a", `{"v":2}`, true},
		{"a", `{"v":1}`, true}, // back to the first: differs from the latest
	} {
		stored, err := db.PutSnapshot(ctx, c.study, []byte(c.js))
		if err != nil || stored != c.stored {
			t.Errorf("%d: stored %v %v, want %v", i, stored, err, c.stored)
		}
		time.Sleep(time.Millisecond) // distinct taken_at
	}
	snaps, err := db.Snapshots(ctx, "a")
	if err != nil || len(snaps) != 3 || string(snaps[0].JSON) != `{"v":1}` || string(snaps[1].JSON) != `{"v":2}` || string(snaps[2].JSON) != `{"v":1}` {
		t.Errorf("snapshots %+v %v", snaps, err)
	}
	if _, err := db.PutSnapshot(ctx, "a", []byte("not json")); err == nil {
		t.Error("a snapshot that is not JSON was stored")
	}
}

// PutUnlessDone stores over nothing or a failure, never over a done trial.
func TestPutUnlessDone(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	tr := full()
	tr.Error, tr.ErrorKind = "timeout", results.KindTimeout
	if stored, err := db.PutUnlessDone(ctx, tr); err != nil || !stored {
		t.Fatalf("into nothing: %v %v", stored, err)
	}
	tr.Error, tr.ErrorKind, tr.BatchFile = "", "", "out-1.jsonl"
	if stored, err := db.PutUnlessDone(ctx, tr); err != nil || !stored {
		t.Fatalf("over a failure: %v %v", stored, err)
	}
	again := tr
	again.BatchFile, again.Responses = "out-2.jsonl", []string{"other"}
	if stored, err := db.PutUnlessDone(ctx, again); err != nil || stored {
		t.Fatalf("over a done trial: %v %v", stored, err)
	}
	got, _, _ := db.Get(ctx, tr.Key)
	if got.BatchFile != "out-1.jsonl" || got.Responses[0] != tr.Responses[0] {
		t.Errorf("done trial changed: %+v", got)
	}
}

// Batch requests round-trip by custom_id, per study; a second write of the
// same id replaces the first.
func TestBatchRequests(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	k := full().Key
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := results.BatchRequest{CustomID: k.String(), Key: k, File: "s.m.0001.jsonl", WrittenAt: at, Request: json.RawMessage(`{"images":4}`)}
	other := r
	other.CustomID, other.Key.Study = "x", "other"
	if err := db.PutBatchRequests(ctx, []results.BatchRequest{r, other}); err != nil {
		t.Fatal(err)
	}
	r.File = "s.m.0002.jsonl"
	if err := db.PutBatchRequests(ctx, []results.BatchRequest{r}); err != nil {
		t.Fatal(err)
	}
	got, err := db.BatchRequests(ctx, k.Study)
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	g := got[k.String()]
	if g.Key != k || g.File != "s.m.0002.jsonl" || !g.WrittenAt.Equal(at) || string(g.Request) != `{"images":4}` {
		t.Errorf("read back %+v", g)
	}
	if err := db.PutBatchRequests(ctx, []results.BatchRequest{{CustomID: "y", Key: k, Request: json.RawMessage("{")}}); err == nil {
		t.Error("a request that is not JSON was stored")
	}
}

// TemplateHashes counts answered trials per condition and hash; failed
// trials and trials without a hash are left out.
func TestTemplateHashes(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	put := func(clip string, rep int, hash, kind string) {
		tr := full()
		tr.Clip, tr.Repeat, tr.TemplateHash, tr.ErrorKind = clip, rep, hash, kind
		tr.Error = ""
		if kind != "" {
			tr.Error = "failed"
		}
		if err := db.Put(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	put("c1", 0, "h1", "")
	put("c1", 1, "h1", results.KindParse)
	put("c2", 0, "h2", "")
	put("c2", 1, "h3", results.KindTimeout) // failed: not counted
	put("c3", 0, "", "")                    // no hash: not counted
	got, err := db.TemplateHashes(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	k := full().Key
	k.Clip, k.Repeat = "", 0
	if len(got) != 1 || len(got[k]) != 2 || got[k]["h1"] != 2 || got[k]["h2"] != 1 {
		t.Errorf("hashes %v", got)
	}
}
