package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeCommand starts `tracegrid serve` on a free loopback port with
// the token from the environment, checks authentication and the model
// list over HTTP, and stops it with SIGINT (exit 0).
func TestServeCommand(t *testing.T) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--max-body", "1MiB", "--concurrency", "1")
	cmd.Env = append(os.Environ(), "TRACEGRID_SERVE_TOKEN=s3cret")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var base string
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/v1)`)
	select {
	case l := <-lines:
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("first line %q does not say where it listens", l)
		}
		base = m[1]
	case <-time.After(20 * time.Second):
		t.Fatal("serve printed no address within 20 s")
	}
	get := func(token string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", base+"/models", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("not JSON: %q", b)
		}
		return resp.StatusCode, v
	}
	if code, v := get("s3cret"); code != 200 || v["object"] != "list" {
		t.Errorf("with the token: %d %v", code, v)
	}
	if code, v := get("guess"); code != 401 {
		t.Errorf("with a wrong token: %d %v", code, v)
	}
	resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(strings.Repeat("x", 2<<20)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("unauthenticated oversized post: %d, want 401 before the body is read", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range lines { // drain stderr so the process can exit
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGINT: %v, want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s of SIGINT")
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", "no-port"}, "--addr"},
		{[]string{"serve", "--video-rate", "0"}, "--video-rate"},
		{[]string{"serve", "--max-body", "lots"}, "--max-body"},
		{[]string{"serve", "--concurrency", "0"}, "--concurrency"},
	} {
		out, code := run(t, c.args...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want 2 and %q", c.args, code, out, c.want)
		}
	}
}
