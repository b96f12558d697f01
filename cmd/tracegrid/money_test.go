package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// studyFile writes a one-model study against url over manifest: uniform:2
// × direct on both clips, reps repetitions, the given concurrency, no
// retries, $1000 per million input tokens (the stand-in's 1000 prompt
// tokens cost $1), and extra YAML appended.
func studyFile(t *testing.T, manifest, url, db string, reps, concurrency int, extra string) string {
	t.Helper()
	return writeFile(t, "study.yaml", fmt.Sprintf(`name: cli-money
manifest: %s
db: %s
repetitions: %d
models:
  - name: m
    base_url: %s
    model_id: m
    concurrency: %d
    max_retries: 0
    prices: {input_per_mtok: 1000, output_per_mtok: 0}
conditions:
  - {policy: "uniform:2", prompt: direct}
%s`, manifest, db, reps, url, concurrency, extra))
}

var oneDollar = fakemodel.Reply{PromptTokens: 1000}

// exportRows is the number of trials in db, and how many have a count.
func exportRows(t *testing.T, db string) (rows, answered int) {
	t.Helper()
	out, code := run(t, "export", "--db", db, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: %s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		rows++
		if !strings.Contains(line, `"count":null`) {
			answered++
		}
	}
	return rows, answered
}

// TestEvalExitStatus (issue 12, finding 8): eval exits 1 when any trial
// has no answer — 401s, refused connections, 500s, the spending cap — with
// a line counting them by kind, and 0 only when every trial has one.
func TestEvalExitStatus(t *testing.T) {
	manifest := renderSmall(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	for _, c := range []struct {
		name  string
		rep   *fakemodel.Reply
		extra string
		code  int
		want  string
	}{
		{"401", &fakemodel.Reply{Status: 401, Body: `{"error":{"message":"bad key"}}`}, "", 1, "2 of 2 trials have no answer: auth 2"},
		{"500", &fakemodel.Reply{Status: 500, Body: "boom"}, "", 1, "2 of 2 trials have no answer: server 2"},
		{"refused", nil, "", 1, "2 of 2 trials have no answer: network 2"},
		{"answered", &oneDollar, "", 0, "eval finished"},
		{"cap", &oneDollar, "max_usd: 1.5\n", 1, "stopped at the spending cap ($2.0000 spent of $1.50)"},
	} {
		url := refused
		if c.rep != nil {
			fm := fakemodel.New(t, fakemodel.Always(*c.rep))
			url = fm.URL()
		}
		reps := 1
		if c.name == "cap" {
			reps = 2
		}
		db := filepath.Join(t.TempDir(), "r.db")
		msg, code := run(t, "eval", "--config", studyFile(t, manifest, url, db, reps, 1, c.extra))
		if code != c.code || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", c.name, code, c.code, c.want, msg)
		}
		if c.name == "cap" && !strings.Contains(msg, "4 trials have no answer: not_run 2") {
			t.Errorf("cap: the trials not run are not counted:\n%s", msg)
		}
	}
}

// evalProcess is a running `tracegrid eval` whose stderr is read line by
// line.
type evalProcess struct {
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	all   strings.Builder
	done  chan struct{}
}

func startEval(t *testing.T, args ...string) *evalProcess {
	t.Helper()
	p := &evalProcess{cmd: exec.Command(bin, args...), lines: make(chan string, 1024), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.all.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	return p
}

// waitFor reads stderr until a line contains s.
func (p *evalProcess) waitFor(t *testing.T, s string) {
	t.Helper()
	for line := range p.lines {
		if strings.Contains(line, s) {
			return
		}
	}
	t.Fatalf("eval ended without printing %q:\n%s", s, p.output())
}

func (p *evalProcess) wait() int {
	<-p.done
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

func (p *evalProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.all.String()
}

// TestEvalSIGINTStoresRepliesInFlight (finding 6): on Ctrl-C, eval starts
// no new request, waits for the two in flight, stores their replies and
// exits 130; a second Ctrl-C stops at once, storing nothing more.
func TestEvalSIGINTStoresRepliesInFlight(t *testing.T) {
	manifest := renderSmall(t)
	for _, second := range []bool{false, true} {
		hold := make(chan struct{})
		fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 1000, Hold: hold}))
		db := filepath.Join(t.TempDir(), "r.db")
		// 2 clips × 3 repetitions, two requests in flight at a time.
		p := startEval(t, "eval", "--config", studyFile(t, manifest, fm.URL(), db, 3, 2, ""))
		<-fm.Arrivals()
		<-fm.Arrivals()
		p.cmd.Process.Signal(os.Interrupt)
		p.waitFor(t, "interrupted: no new requests")
		if second {
			p.cmd.Process.Signal(os.Interrupt)
		} else {
			close(hold)
		}
		code := p.wait()
		rows, answered := exportRows(t, db)
		want := 2
		if second {
			want = 0
		}
		if code != 130 || fm.Requests() != 2 || rows != want || answered != want || !strings.Contains(p.output(), "interrupted; finished work is kept") {
			t.Errorf("second Ctrl-C %v: exit %d, %d requests, %d rows (%d answered); want 130, 2, %d:\n%s", second, code, fm.Requests(), rows, answered, want, p.output())
		}
		if second {
			close(hold)
		}
	}
}

// TestEvalSecondRunRefused (finding 4): two evals of one study on one
// database: the second is refused (exit 1) while the first holds the
// study, and every trial is sent exactly once; after the first, a rerun
// sends nothing.
func TestEvalSecondRunRefused(t *testing.T) {
	manifest := renderSmall(t)
	hold := make(chan struct{})
	fm := fakemodel.New(t, func(r fakemodel.Request) fakemodel.Reply {
		if r.N == 1 {
			return fakemodel.Reply{PromptTokens: 1000, Hold: hold}
		}
		return oneDollar
	})
	db := filepath.Join(t.TempDir(), "r.db")
	study := studyFile(t, manifest, fm.URL(), db, 2, 1, "")
	first := startEval(t, "eval", "--config", study)
	<-fm.Arrivals()
	msg, code := run(t, "eval", "--config", study)
	if code != 1 || !strings.Contains(msg, `study "cli-money" in `+db+" is held by pid") || fm.Requests() != 1 {
		t.Errorf("second run: exit %d, %d requests:\n%s", code, fm.Requests(), msg)
	}
	close(hold)
	if code := first.wait(); code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, first.output())
	}
	if fm.Requests() != 4 {
		t.Errorf("%d requests for 4 trials", fm.Requests())
	}
	if msg, code := run(t, "eval", "--config", study); code != 0 || fm.Requests() != 4 {
		t.Errorf("rerun: exit %d, %d requests:\n%s", code, fm.Requests(), msg)
	}
	// A run killed with SIGKILL leaves nothing that blocks the next one.
	killedDB := filepath.Join(t.TempDir(), "k.db")
	hold2 := make(chan struct{})
	defer close(hold2)
	fm2 := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 1000, Hold: hold2}))
	killed := startEval(t, "eval", "--config", studyFile(t, manifest, fm2.URL(), killedDB, 1, 1, ""))
	<-fm2.Arrivals()
	killed.cmd.Process.Signal(syscall.SIGKILL)
	killed.wait()
	fm3 := fakemodel.New(t, fakemodel.Always(oneDollar))
	if msg, code := run(t, "eval", "--config", studyFile(t, manifest, fm3.URL(), killedDB, 1, 1, "")); code != 0 || fm3.Requests() != 2 {
		t.Errorf("after a SIGKILLed run: exit %d, %d requests:\n%s", code, fm3.Requests(), msg)
	}
}

// TestEvalBadInputExitCodes (findings 10, 11, 14): bad input exits 2 with
// the file, line and field, before anything is sent.
func TestEvalBadInputExitCodes(t *testing.T) {
	manifest := renderSmall(t)
	fm := fakemodel.New(t, fakemodel.Always(oneDollar))
	lines := strings.Split(strings.TrimSpace(readFile(t, manifest)), "\n")
	variant := func(name string, ls ...string) string {
		p := filepath.Join(filepath.Dir(manifest), name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := variant("garbage.jsonl", lines[0], "{not json", lines[1])
	outside := variant("outside.jsonl", lines[0], strings.Replace(lines[1], `"trace":"clips/`, `"trace":"../../../../../../../../etc/passwd#`, 1))
	db := filepath.Join(t.TempDir(), "r.db")
	flags := []string{"--base-url", fm.URL(), "--model", "m", "--policy", "uniform:2", "--prompt", "direct", "--db", db}
	// Issue 31 item 4: a key too short to redact from error texts.
	t.Setenv("TRACEGRID_TEST_SHORT_KEY", "6")
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"eval", "--manifest", manifest, "--api-key-env", "TRACEGRID_TEST_UNSET_KEY"}, flags...), "environment variable TRACEGRID_TEST_UNSET_KEY is not set"},
		{append([]string{"eval", "--manifest", manifest, "--api-key-env", "TRACEGRID_TEST_SHORT_KEY"}, flags...), "environment variable TRACEGRID_TEST_SHORT_KEY holds a key shorter than 8 characters"},
		{append([]string{"eval", "--manifest", manifest, "--max-images", "-1"}, flags...), "max_images -1"},
		{[]string{"eval", "--manifest", manifest}, "give --config, or --manifest"},
		{append([]string{"eval", "--manifest", garbage}, flags...), garbage + ":2: not a JSON object"},
		{append([]string{"eval", "--manifest", outside}, flags...), "leaves the manifest's directory"},
		{append([]string{"eval", "--dry-run", "--manifest", outside}, flags...), "leaves the manifest's directory"},
		{[]string{"eval", "--config", studyFile(t, manifest, fm.URL(), db, 1, 1, "clips: [state_machine_N02_F1.0_s00, nope_N01]\n")}, "study.yaml:14: clips[1]: \"nope_N01\": clip not in manifest"},
		{[]string{"eval", "--dry-run", "--config", studyFile(t, manifest, fm.URL(), db, 1, 1, "clips: [nope_N01]\n")}, "clips[0]: \"nope_N01\": clip not in manifest"},
		{[]string{"eval", "--config", studyFile(t, manifest, fm.URL(), db, 1, 1, "decoding: {max_tokens: 99.5}\n")}, "line 14: decoding.max_tokens: 99.5 is not a whole number"},
		{[]string{"eval", "--config", writeFile(t, "r.yaml", strings.Replace(readFile(t, studyFile(t, manifest, fm.URL(), db, 1, 1, "")), "repetitions: 1", "repetitions: 2.9", 1))}, "line 4: repetitions: 2.9 is not a whole number"},
		{[]string{"frames", "--manifest", manifest}, `required flag(s) "out", "policy" not set`},
		{[]string{"info", "extra"}, `unknown command "extra"`},
		{[]string{"bogus"}, `unknown command "bogus"`},
	} {
		msg, code := run(t, c.args...)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "root:") {
			t.Errorf("tracegrid %s: exit %d, want 2 with %q:\n%s", strings.Join(c.args, " "), code, c.want, msg)
		}
	}
	if fm.Requests() != 0 {
		t.Errorf("%d requests sent on bad input", fm.Requests())
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExportRefusesItsInput (finding 13): --out may not be the database
// or one of its side files, under any name; the database is untouched.
func TestExportRefusesItsInput(t *testing.T) {
	db := exportDB(t)
	before := readFile(t, db)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(filepath.Dir(db), "hard.jsonl")
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(t.TempDir(), "dir")
	if err := os.Symlink(filepath.Dir(db), dirLink); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustGetwd(t), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{db, rel, filepath.Join(filepath.Dir(db), ".", filepath.Base(db)), db + "-wal", db + "-shm", link, hard,
		filepath.Join(dirLink, filepath.Base(db)), filepath.Join(dirLink, filepath.Base(db)+"-wal")} {
		msg, code := run(t, "export", "--db", db, "--format", "jsonl", "--out", out)
		if code != 2 || !strings.Contains(msg, "export writes a new file; choose another name") {
			t.Errorf("--out %s: exit %d: %s", out, code, msg)
		}
	}
	if readFile(t, db) != before {
		t.Error("the database changed")
	}
	if msg, code := run(t, "export", "--db", db, "--out", filepath.Join(t.TempDir(), "ok.jsonl")); code != 0 {
		t.Errorf("a new file: exit %d: %s", code, msg)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
