// Package textin is how tracegrid reads text that users hand it — tables,
// JSON Lines, manifests — and how its messages quote that text back: one
// rule everywhere, so a file another tool saved with a UTF-8 byte order
// mark or CRLF line ends reads the same in every command, and an error
// never echoes a 10 MB cell.
package textin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// BOM is the UTF-8 byte order mark some editors and Windows tools write
// at the start of a text file.
const BOM = "\ufeff"

// MaxQuote bounds the input a message quotes, in bytes before quoting.
const MaxQuote = 200

// Quote returns s quoted as %q does, cut to its first MaxQuote bytes (at a
// rune boundary) with a marker that says how long it was: a message names
// the bad value without echoing a huge one whole.
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return strconv.Quote(s)
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// TrimBOM drops a leading byte order mark from a whole file's bytes.
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte(BOM)) }

// NewReader returns a buffered reader of r that starts after a leading
// byte order mark, if there is one.
func NewReader(r io.Reader, size int) *bufio.Reader {
	br := bufio.NewReaderSize(r, size)
	if b, err := br.Peek(len(BOM)); err == nil && string(b) == BOM {
		_, _ = br.Discard(len(BOM))
	}
	return br
}

// Lines returns a scanner over r's lines: a leading byte order mark is
// skipped, each line comes without its "\n" or "\r\n", and a line longer
// than max bytes stops the scan with bufio.ErrTooLong.
func Lines(r io.Reader, max int) *bufio.Scanner {
	sc := bufio.NewScanner(NewReader(r, 64<<10))
	sc.Buffer(make([]byte, 0, min(max, 64<<10)), max)
	return sc // bufio.ScanLines drops a "\r" before the "\n"
}

// TrimCR drops the "\r" of a CRLF line end from a line read up to its
// "\n" (the "\n" already removed).
func TrimCR(line []byte) []byte { return bytes.TrimSuffix(line, []byte("\r")) }

// decimal is an integer cell: decimal digits, nothing else. A ".0" tail
// (zeros only) is accepted because pandas writes an integer column that
// has empty cells as floats (RepCount-A's boundary columns).
var decimal = regexp.MustCompile(`^[0-9]{1,9}(\.0+)?$`)

// Int reads an integer cell of a table: plain decimal digits (at most nine,
// so no overflow), optionally with pandas' ".0" tail. A sign, an exponent
// ("1e3"), a fraction or spaces inside are not integers: the same rule as
// a spec's or study's integer fields, which refuse what YAML decoding
// would truncate. ok is false for anything else.
func Int(s string) (v int, ok bool) {
	if !decimal.MatchString(s) {
		return 0, false
	}
	if i := bytes.IndexByte([]byte(s), '.'); i >= 0 {
		s = s[:i]
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}
