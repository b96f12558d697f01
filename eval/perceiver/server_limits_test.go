package perceiver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// startServer serves s with NewServer's connection limits.
func startServer(t *testing.T, s *server) *httptest.Server {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = s.httpServer()
	hs.Start()
	t.Cleanup(hs.Close)
	return hs
}

// clientBound is how long a test client waits for the server before it
// gives up: far beyond every limit the tests set, so reaching it means the
// server never acted.
const clientBound = 30 * time.Second

// trickle opens a raw connection to addr and sends head, then one byte of
// filler every 20 ms until the server closes the connection or stop is
// called.
func trickle(t *testing.T, addr, head string, filler byte) (conn net.Conn, stop func()) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte{filler}); err != nil {
					return // the server closed the connection
				}
			}
		}
	}()
	return conn, func() {
		close(done)
		<-finished
		conn.Close()
	}
}

// chatHead is the request line and headers of a chat request whose body
// is to be 1 MB long.
func chatHead(token string) string {
	return "POST /v1/chat/completions HTTP/1.1\r\nHost: perceiver\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\""
}

// awaitClose reads what the server sends until it closes the connection,
// within clientBound.
func awaitClose(conn net.Conn) (string, error) {
	if err := conn.SetReadDeadline(time.Now().Add(clientBound)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return string(b), fmt.Errorf("the server did not close the connection within %v (received %q)", clientBound, b)
	}
	return string(b), nil // EOF, or a reset after the reply
}

// TestSlowBody reproduces finding 2 of issue 12: authenticated connections
// that send their body a byte every 20 ms are cut at BodyTimeout with 408
// and closed, on a server with one analysis slot and one waiting place;
// two of them fill both places only until then, and a normal request
// afterwards is answered.
func TestSlowBody(t *testing.T) {
	tf := newTwoFrames(t)
	s := newServer(Options{Token: "tok", Concurrency: 1, Queue: 1, BodyTimeout: 300 * time.Millisecond})
	hs := startServer(t, s)
	addr := strings.TrimPrefix(hs.URL, "http://")
	type result struct {
		reply string
		err   error
	}
	results := make(chan result, 2)
	for range 2 {
		conn, stop := trickle(t, addr, chatHead("tok"), 'a')
		go func() {
			reply, err := awaitClose(conn)
			stop()
			results <- result{reply, err}
		}()
	}
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !strings.HasPrefix(r.reply, "HTTP/1.1 408 ") || !strings.Contains(r.reply, `"code":"request_timeout"`) {
			t.Errorf("slow body: reply %q; want 408 request_timeout", r.reply)
		}
	}
	if status, _, v := call(t, "POST", hs.URL+"/v1/chat/completions", "tok", tf.body("m")); status != 200 {
		t.Errorf("a normal request after the slow ones: %d %v", status, v)
	}
}

// TestSlowBodyHoldsNoSlot: while one connection trickles its body (here
// with the body limit far away), a normal request on a server with one
// analysis slot and one waiting place is answered: the slow body holds an
// admission place, never the analysis slot, because the body is read in
// full before a slot is taken.
func TestSlowBodyHoldsNoSlot(t *testing.T) {
	tf := newTwoFrames(t)
	s := newServer(Options{Concurrency: 1, Queue: 1, BodyTimeout: 10 * time.Minute})
	hs := startServer(t, s)
	conn, stop := trickle(t, strings.TrimPrefix(hs.URL, "http://"), chatHead(""), 'a')
	defer stop()
	// Until the slow request is admitted (a wait, not a timing check).
	for deadline := time.Now().Add(clientBound); s.inFlight.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow request was not admitted within %v", clientBound)
		}
	}
	if status, _, v := call(t, "POST", hs.URL+"/v1/chat/completions", "", tf.body("m")); status != 200 {
		t.Errorf("a normal request beside a slow body: %d %v", status, v)
	}
	if n := s.inFlight.Load(); n != 1 {
		t.Errorf("%d requests in flight after the normal one; want the slow one only", n)
	}
	// The slow one is still being read: nothing was answered to it.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(conn); len(b) > 0 {
		t.Errorf("the slow request was answered early: %q", b)
	}
}

// TestSlowHeaders: headers sent a line every 20 ms are cut at HeaderTimeout
// by NewServer's http.Server (the connection is closed without a reply).
func TestSlowHeaders(t *testing.T) {
	s := newServer(Options{HeaderTimeout: 300 * time.Millisecond})
	hs := startServer(t, s)
	conn, stop := trickle(t, strings.TrimPrefix(hs.URL, "http://"), "POST /v1/chat/completions HTTP/1.1\r\nHost: perceiver\r\nX-Slow: ", 'a')
	reply, err := awaitClose(conn)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(reply, " 200 ") {
		t.Errorf("slow headers answered %q", reply)
	}
}

// TestAuthFirst reproduces the /v1 part of finding 14 of issue 12: every
// /v1 path, known or not, asks for the token before it says anything else
// (401, not 404); with the token an unknown path is 404; paths outside /v1
// need no token.
func TestAuthFirst(t *testing.T) {
	hs := httptest.NewServer(Handler(Options{Token: "tok"}))
	defer hs.Close()
	cases := []struct {
		method, path, token string
		status              int
		code                string
	}{
		{"POST", "/v1/completions", "", 401, "invalid_api_key"},
		{"GET", "/v1/nothing/here", "wrong", 401, "invalid_api_key"},
		{"GET", "/v1", "", 401, "invalid_api_key"},
		{"GET", "/v1/", "", 401, "invalid_api_key"},
		{"GET", "/v1/models/gpt-4o", "", 401, "invalid_api_key"},
		{"DELETE", "/v1/chat/completions", "", 401, "invalid_api_key"},
		{"POST", "/v1/completions", "tok", 404, "unknown_url"},
		{"GET", "/v1", "tok", 404, "unknown_url"},
		{"DELETE", "/v1/chat/completions", "tok", 405, "method_not_allowed"},
		{"GET", "/v2/models", "", 404, "unknown_url"},
		{"GET", "/v1x", "", 404, "unknown_url"},
	}
	for _, c := range cases {
		status, _, v := call(t, c.method, hs.URL+c.path, c.token, nil)
		what := fmt.Sprintf("%s %s (token %q)", c.method, c.path, c.token)
		if status != c.status {
			t.Errorf("%s: %d, want %d: %v", what, status, c.status, v)
		}
		typ := "invalid_request_error"
		if c.status == 401 {
			typ = "authentication_error"
		}
		checkError(t, what, v, typ, c.code, "")
	}
	if status, _, v := call(t, "GET", hs.URL+"/health", "", nil); status != 200 {
		t.Errorf("health without a token: %d %v", status, v)
	}
}
