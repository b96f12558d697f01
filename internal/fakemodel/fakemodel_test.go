package fakemodel

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStandIn: usage as configured, requests counted and described, held
// replies released by the test or by Close.
func TestStandIn(t *testing.T) {
	hold := make(chan struct{})
	s := New(t, func(r Request) Reply {
		if r.N == 2 {
			return Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: `{"error":{"message":"slow"}}`}
		}
		if r.N == 3 {
			return Reply{Hold: hold, Text: "late"}
		}
		return Reply{PromptTokens: 1000, CompletionTokens: 5, Text: "say \"hi\""}
	})
	code, body := post(t, s.URL(), `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":"Frame 1"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AA"}}]}]}`)
	if code != 200 || !strings.Contains(body, `"content":"say \"hi\""`) || !strings.Contains(body, `"usage":{"prompt_tokens":1000,"completion_tokens":5,"total_tokens":1005}`) {
		t.Errorf("%d %s", code, body)
	}
	if code, _ := post(t, s.URL(), `{"messages":[]}`); code != 429 {
		t.Errorf("status %d", code)
	}
	got := make(chan string)
	go func() {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"plain"}]}`))
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-s.Arrivals()
	<-s.Arrivals()
	if r := <-s.Arrivals(); r.N != 3 || r.Text != "plain" || s.Answered() != 2 {
		t.Errorf("held request %+v, %d answered", r, s.Answered())
	}
	close(hold)
	if b := <-got; !strings.Contains(b, `"content":"late"`) {
		t.Errorf("released reply %s", b)
	}
	rs := s.Received()
	if s.Requests() != 3 || rs[0].Images != 1 || rs[0].MaxTokens != 9 || rs[0].Model != "m" || rs[0].FirstImage == "" || rs[0].Text != "Frame 1" {
		t.Errorf("%d requests, first %+v", s.Requests(), rs[0])
	}
	// Close releases a reply held forever.
	s2 := New(t, Always(Reply{Hold: make(chan struct{})}))
	done := make(chan struct{})
	go func() {
		http.Post(s2.URL()+"/chat/completions", "application/json", strings.NewReader(`{}`))
		close(done)
	}()
	<-s2.Arrivals()
	s2.Close()
	<-done
}
