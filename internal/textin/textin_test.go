package textin

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	if got := Quote("a\"b\n"); got != `"a\"b\n"` {
		t.Errorf("short: %s", got)
	}
	huge := strings.Repeat("x", 10<<20)
	got := Quote(huge)
	if want := `"` + strings.Repeat("x", MaxQuote) + `"… (10485760 bytes)`; got != want {
		t.Errorf("10 MB: %d bytes: %.80s…", len(got), got)
	}
	// A cut never splits a rune: "é" is two bytes, 150 of them are 300.
	got = Quote(strings.Repeat("é", 150))
	if want := `"` + strings.Repeat("é", MaxQuote/2) + `"… (300 bytes)`; got != want {
		t.Errorf("runes: %s", got)
	}
}

func TestLines(t *testing.T) {
	sc := Lines(strings.NewReader(BOM+"{\"a\":1}\r\n\r\nb\nc"), 16)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if err := sc.Err(); err != nil || strings.Join(got, "|") != `{"a":1}||b|c` {
		t.Errorf("%q %v", got, err)
	}
	sc = Lines(strings.NewReader(strings.Repeat("y", 17)+"\n"), 16)
	for sc.Scan() {
	}
	if !errors.Is(sc.Err(), bufio.ErrTooLong) {
		t.Errorf("long line: %v", sc.Err())
	}
	// A BOM only at the start is skipped; NewReader leaves other text alone.
	b, _ := io.ReadAll(NewReader(strings.NewReader("ab"+BOM), 16))
	if string(b) != "ab"+BOM {
		t.Errorf("%q", b)
	}
	if string(TrimBOM([]byte(BOM+"x"))) != "x" || string(TrimCR([]byte("x\r"))) != "x" {
		t.Error("TrimBOM/TrimCR")
	}
}

func TestInt(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "12": 12, "007": 7, "32.0": 32, "5.00": 5, "999999999": 999999999} {
		if v, ok := Int(s); !ok || v != want {
			t.Errorf("%q: %d %v", s, v, ok)
		}
	}
	for _, s := range []string{"", "1e3", "1E3", "+5", "-1", "2.5", "2.", ".0", " 2", "0x10", "1_000", "1000000000", "١٢"} {
		if v, ok := Int(s); ok {
			t.Errorf("%q read as %d", s, v)
		}
	}
}
