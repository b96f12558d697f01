package natural

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/internal/textin"
)

// Layout is an annotation table's layout.
type Layout string

const (
	// LayoutRepCount is RepCount-A's: a header row type,name,count,L1,L2,…
	// (an optional leading index column, as pandas writes), one row per
	// video with its action type, file name, count, then frame indices
	// where (L1, L2), (L3, L4), … are the start and end frames of each
	// repetition, with empty trailing cells.
	LayoutRepCount Layout = "repcount"
	// LayoutPlain is a plain name,count table: the count alone.
	LayoutPlain Layout = "plain"
)

// Limits on an annotation table.
const (
	// MaxTableBytes caps the annotation file (RepCount-A's largest split,
	// 758 rows, is under 1 MB).
	MaxTableBytes = 16 << 20
	// MaxCount caps a row's count, as scene.MaxN caps a rendered clip's
	// events.
	MaxCount = 10000
)

// ErrInput is wrapped by every error about Import's input as a whole: the
// options, an annotation file that cannot be read as a table, nothing
// importable, a bad row under Options.Strict.
var ErrInput = errors.New("natural: bad input")

// Row is one annotation row.
type Row struct {
	Line   int    // line of the file, from 1
	Name   string // the video's file name
	Action string // the action type (RepCount-A's "type"); "" in a plain table
	Count  int
	// Bounds are the frame indices L1, L2, … in order: pairs (start, end)
	// of each repetition; empty when the row gives the count alone.
	Bounds []int
	// FPS is the frame rate the table states for the video (an optional
	// fps column, as derived RepCount-A tables carry); 0 when it states
	// none. Import checks it against the video's.
	FPS float64
}

// Problem is one row or video that was not imported, and why.
type Problem struct {
	Line int    // the annotation line; 0 for a video without a row
	Name string // the video's file name, when known
	Msg  string
}

func (p Problem) String() string {
	switch {
	case p.Line > 0 && p.Name != "":
		return fmt.Sprintf("line %d (%s): %s", p.Line, p.Name, p.Msg)
	case p.Line > 0:
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Name + ": " + p.Msg
}

// ReadTable reads an annotation table (ReadTableFrom) from a file. A
// path that is not a regular file (a directory, a FIFO, a device) is bad
// input, refused before it is opened: a FIFO would block the read.
func ReadTable(path string) (Layout, []Row, []Problem, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: annotations: %w", ErrInput, err)
	}
	if !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.IsDir() {
			what = "a directory"
		}
		return "", nil, nil, fmt.Errorf("%w: annotations %s is %s: name the annotation table (CSV)", ErrInput, path, what)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: annotations: %w", ErrInput, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxTableBytes+1))
	if err != nil {
		return "", nil, nil, fmt.Errorf("annotations %s: %w", path, err)
	}
	if len(data) > MaxTableBytes {
		return "", nil, nil, fmt.Errorf("%w: annotations %s: more than %d MiB", ErrInput, path, MaxTableBytes>>20)
	}
	layout, rows, problems, err := ReadTableFrom(data)
	if err != nil {
		return "", nil, nil, fmt.Errorf("annotations %s: %w", path, err)
	}
	return layout, rows, problems, nil
}

// ReadTableFrom reads an annotation table: comma-separated values (a UTF-8
// byte order mark is skipped, CRLF line ends read as LF), a header row naming the layout
// (LayoutRepCount or LayoutPlain, names compared without case), then one
// row per video. A row that cannot be used is a Problem naming its line
// and the cell; the others are returned in file order. Errors (wrapping
// ErrInput) are for the table as a whole: not CSV, an unknown header, no
// rows.
func ReadTableFrom(data []byte) (Layout, []Row, []Problem, error) {
	data = textin.TrimBOM(data)
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return "", nil, nil, fmt.Errorf("%w: the annotation file is empty", ErrInput)
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: not a CSV table: %v", ErrInput, err)
	}
	h, err := parseHeader(header)
	if err != nil {
		return "", nil, nil, err
	}
	var rows []Row
	var problems []Problem
	seen := map[string]int{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, nil, fmt.Errorf("%w: not a CSV table: %v", ErrInput, err)
		}
		line, _ := r.FieldPos(0)
		if blank(rec) {
			continue
		}
		row, msg := h.row(rec)
		row.Line = line
		if msg != "" {
			problems = append(problems, Problem{Line: line, Name: row.Name, Msg: msg})
			continue
		}
		if prev, ok := seen[row.Name]; ok {
			problems = append(problems, Problem{Line: line, Name: row.Name, Msg: fmt.Sprintf("the video is already annotated on line %d", prev)})
			continue
		}
		seen[row.Name] = line
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(problems) == 0 {
		return "", nil, nil, fmt.Errorf("%w: the annotation table has a header but no rows", ErrInput)
	}
	return h.layout, rows, problems, nil
}

// header is a parsed header row: where each column is.
type header struct {
	layout                   Layout
	typ, name, count, bounds int // column indices; typ and bounds -1 in a plain table
	nbounds                  int // L columns
	fps                      int // the fps column; -1 when none
	width                    int // cells in the header
}

// AcceptedHeaders describes the accepted header rows, for messages.
const AcceptedHeaders = "the RepCount-A layout `type,name,count,L1,L2,…` (optional leading index columns) or `name,count`"

// lColumn matches a boundary column's name (compared in lower case).
var lColumn = regexp.MustCompile(`^l[0-9]+$`)

// parseHeader reads the header row: leading index columns (pandas'
// unnamed ones), then type,name,count,L1,L2,… or name,count, then any
// other columns, which are ignored except fps; a boundary column out of
// order, or one in a plain table, is an error.
func parseHeader(cells []string) (header, error) {
	norm := make([]string, len(cells))
	for i, c := range cells {
		norm[i] = strings.ToLower(strings.TrimSpace(c))
	}
	// Trailing empty header cells (a spreadsheet's) are not columns.
	for len(norm) > 0 && norm[len(norm)-1] == "" {
		norm = norm[:len(norm)-1]
	}
	off := 0
	for off < len(norm)-1 && isIndexHeader(norm[off]) {
		off++
	}
	rest := norm[off:]
	h := header{typ: -1, bounds: -1, fps: -1, width: len(cells)}
	var more []string // the columns after the layout's own
	switch {
	case len(rest) >= 3 && rest[0] == "type" && rest[1] == "name" && rest[2] == "count":
		h.layout, h.typ, h.name, h.count, h.bounds = LayoutRepCount, off, off+1, off+2, off+3
		for _, c := range rest[3:] {
			if c != "l"+strconv.Itoa(h.nbounds+1) {
				break
			}
			h.nbounds++
		}
		more = rest[3+h.nbounds:]
	case len(rest) >= 2 && rest[0] == "name" && rest[1] == "count":
		h.layout, h.name, h.count = LayoutPlain, off, off+1
		more = rest[2:]
	default:
		return header{}, fmt.Errorf("%w: annotation header %s: want %s", ErrInput, textin.Quote(strings.Join(cells, ",")), AcceptedHeaders)
	}
	first := len(norm) - len(more)
	for i, c := range more {
		switch {
		case lColumn.MatchString(c) && h.layout == LayoutPlain:
			return header{}, fmt.Errorf("%w: annotation header: column %d is %s: boundary columns L1, L2, … need the RepCount-A layout type,name,count,L1,L2,…",
				ErrInput, first+i+1, textin.Quote(cells[first+i]))
		case lColumn.MatchString(c):
			return header{}, fmt.Errorf("%w: annotation header: column %d is %s, want L%d (the boundary columns are L1, L2, … in order)",
				ErrInput, first+i+1, textin.Quote(cells[first+i]), h.nbounds+1)
		case c == "fps" && h.fps < 0:
			h.fps = first + i
		}
	}
	return h, nil
}

// indexHeader matches pandas' names for unnamed index columns.
var indexHeader = regexp.MustCompile(`^unnamed: [0-9]+(\.[0-9]+)?$`)

// isIndexHeader: a leading index column's header ("" as pandas writes it,
// "Unnamed: 0" when such a file is read and written again, or a name for
// it).
func isIndexHeader(s string) bool {
	switch s {
	case "", "index", "id", "#":
		return true
	}
	return indexHeader.MatchString(s)
}

func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// row reads one record; msg says what is wrong with it.
func (h header) row(rec []string) (Row, string) {
	cell := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	row := Row{Name: cell(h.name)}
	if h.typ >= 0 {
		row.Action = cell(h.typ)
	}
	if row.Name == "" {
		return row, "the name cell is empty"
	}
	if len(row.Name) > maxNameBytes {
		// No file has such a name; the message quotes a bounded prefix
		// and the problem names no file.
		return Row{}, fmt.Sprintf("name %s is longer than %d bytes: not a file name", textin.Quote(row.Name), maxNameBytes)
	}
	if strings.ContainsAny(row.Name, `/\`) || row.Name == "." || row.Name == ".." || strings.ContainsRune(row.Name, 0) {
		return row, fmt.Sprintf("name %s is not a file name (no directory parts): the videos are looked up in the videos folder", textin.Quote(row.Name))
	}
	last := len(rec)
	for last > 0 && strings.TrimSpace(rec[last-1]) == "" {
		last--
	}
	if last > h.width {
		return row, fmt.Sprintf("%d cells, but the header has %d columns", last, h.width)
	}
	if h.fps >= 0 && cell(h.fps) != "" {
		v, err := strconv.ParseFloat(cell(h.fps), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return row, fmt.Sprintf("fps %s is not a positive number", textin.Quote(cell(h.fps)))
		}
		row.FPS = v
	}
	count, ok := textin.Int(cell(h.count))
	switch {
	case cell(h.count) == "":
		return row, "the count cell is empty"
	case !ok || count < 0:
		return row, fmt.Sprintf("count %s is not a whole number ≥ 0 (decimal digits, as 12 or pandas' 12.0)", textin.Quote(cell(h.count)))
	case count > MaxCount:
		return row, fmt.Sprintf("count %d is above the limit of %d", count, MaxCount)
	}
	row.Count = count
	if h.bounds < 0 {
		return row, ""
	}
	gap := -1
	for i := h.bounds; i < min(last, h.bounds+h.nbounds); i++ {
		c := cell(i)
		if c == "" {
			if gap < 0 {
				gap = i
			}
			continue
		}
		if gap >= 0 {
			return row, fmt.Sprintf("L%d is empty but L%d is not: boundary cells must be filled from L1 on, empty only at the end", gap-h.bounds+1, i-h.bounds+1)
		}
		v, ok := textin.Int(c)
		if !ok {
			return row, fmt.Sprintf("L%d %s is not a frame index (a whole number ≥ 0 in decimal digits)", i-h.bounds+1, textin.Quote(c))
		}
		row.Bounds = append(row.Bounds, v)
	}
	switch n := len(row.Bounds); {
	case n%2 == 1:
		return row, fmt.Sprintf("%d boundary cells: they come in pairs (start, end), one pair per repetition", n)
	case n > 0 && n/2 != count:
		return row, fmt.Sprintf("count %d but %d boundary pairs (one pair per repetition)", count, n/2)
	}
	for i := 1; i < len(row.Bounds); i++ {
		rep := i/2 + 1
		switch {
		case row.Bounds[i] < row.Bounds[i-1]:
			return row, fmt.Sprintf("boundaries go backwards at L%d = %d after L%d = %d (repetition %d): L1 < L2 ≤ L3 < L4 ≤ … is required",
				i+1, row.Bounds[i], i, row.Bounds[i-1], rep)
		case i%2 == 1 && row.Bounds[i] == row.Bounds[i-1]:
			return row, fmt.Sprintf("repetition %d starts and ends at frame %d (L%d = L%d): a repetition's start frame must be before its end frame",
				rep, row.Bounds[i], i, i+1)
		}
	}
	return row, ""
}

// maxNameBytes is the longest file name Linux file systems allow.
const maxNameBytes = 255
