package natural_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/natural"
)

// TestDocs: docs/natural.md's study loads with the paper's three prompts,
// and its two example tables read as it says.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/natural.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- natural example -->\\s*```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/natural.md has no natural example block")
	}
	path := filepath.Join(t.TempDir(), "repcount.yaml")
	if err := os.WriteFile(path, m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := study.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, c := range st.Conditions {
		prompts = append(prompts, c.Policy+" "+c.Prompt)
	}
	if !slices.Equal(prompts, []string{"native:1 zero_shot", "native:1 natural_direct", "native:1 cot"}) || st.Repetitions != 1 {
		t.Errorf("conditions %v, repetitions %d", prompts, st.Repetitions)
	}
	tables := regexp.MustCompile("(?s)```csv\n(.*?)```").FindAllSubmatch(b, -1)
	if len(tables) != 2 {
		t.Fatalf("%d csv blocks, want the two layouts", len(tables))
	}
	layout, rows, problems, err := natural.ReadTableFrom(tables[0][1])
	if err != nil || layout != natural.LayoutRepCount || len(problems) != 0 || len(rows) != 3 {
		t.Fatalf("RepCount-A example: %v %v %v %v", layout, rows, problems, err)
	}
	if r := rows[0]; r.Name != "stu1_10.mp4" || r.Action != "squat" || r.Count != 3 || !slices.Equal(r.Bounds, []int{12, 40, 40, 71, 75, 103}) {
		t.Errorf("row 0 %+v", r)
	}
	if r := rows[1]; r.Count != 2 || !slices.Equal(r.Bounds, []int{5, 60, 60, 118}) {
		t.Errorf("row 1 (floats, empty trailing cells) %+v", r)
	}
	if r := rows[2]; r.Count != 4 || r.Bounds != nil || r.Line != 4 {
		t.Errorf("row 2 (the count alone) %+v", r)
	}
	layout, rows, _, err = natural.ReadTableFrom(tables[1][1])
	if err != nil || layout != natural.LayoutPlain || len(rows) != 2 || rows[1].Count != 2 {
		t.Errorf("plain example: %v %v %v", layout, rows, err)
	}
}

// TestReadTable: header forms and the table-wide errors.
func TestReadTable(t *testing.T) {
	for _, c := range []struct {
		in     string
		layout natural.Layout
		err    string
	}{
		{"\xef\xbb\xbfType,Name,Count,L1,L2\nx,a.mp4,1,0,5\n", natural.LayoutRepCount, ""},
		{"index,name,count\n0,a.mp4,1\n", natural.LayoutPlain, ""},
		{"name,count,,\na.mp4,1,,\n", natural.LayoutPlain, ""},
		{"type,name,count,L1,L3\n", "", "column 5 is \"L3\", want L2"},
		{",Unnamed: 0.1,Unnamed: 0,type,name,count,L1,L2,fps,duration\n0,0,0,x,a.mp4,1,0,5,29.97,10\n", natural.LayoutRepCount, ""},
		{"name,count,L1,L2\na.mp4,1,0,5\n", "", "need the RepCount-A layout"},
		{"name,count,notes\na.mp4,1,seen twice\n", natural.LayoutPlain, ""},
		{"name,reps\n", "", "want the RepCount-A layout"},
		{"", "", "empty"},
		{"name,count\n", "", "no rows"},
		{"name,count\n\"a.mp4,1\n", "", "not a CSV table"},
	} {
		layout, _, _, err := natural.ReadTableFrom([]byte(c.in))
		switch {
		case c.err == "" && (err != nil || layout != c.layout):
			t.Errorf("%q: %v %v", c.in, layout, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		}
	}
	// Derived RepCount-A tables (pandas' index columns written again, an
	// fps column and others after the boundaries) read the same.
	_, rows, _, err := natural.ReadTableFrom([]byte(",Unnamed: 0,type,name,count,L1,L2,L3,L4,fps,num_frames\n0,0,squat,a.mp4,2,0.0,5.0,5.0,9.0,29.97002997002997,300\n"))
	if err != nil || len(rows) != 1 || rows[0].FPS != 29.97002997002997 || len(rows[0].Bounds) != 4 || rows[0].Bounds[3] != 9 {
		t.Errorf("derived table: %+v %v", rows, err)
	}
	_, rows, problems, err := natural.ReadTableFrom([]byte("name,count\na.mp4,2,7\nb.mp4,2.5\nc.mp4,20000\n,1\n"))
	if err != nil || len(rows) != 0 || len(problems) != 4 {
		t.Fatalf("%v %v %v", rows, problems, err)
	}
	for i, want := range []string{"3 cells, but the header has 2 columns", `count "2.5" is not a whole number`, "count 20000 is above the limit of 10000", "the name cell is empty"} {
		if !strings.Contains(problems[i].Msg, want) || problems[i].Line != i+2 {
			t.Errorf("problem %d: %+v, want line %d %q", i, problems[i], i+2, want)
		}
	}
}

// TestZeroLengthRepetition: a pair whose start and end frames agree (as
// one RepCount-A row pads its list with its last frame) is a bad row that
// says so.
func TestZeroLengthRepetition(t *testing.T) {
	_, _, problems, err := natural.ReadTableFrom([]byte("type,name,count,L1,L2,L3,L4\nx,a.mp4,2,48,73,899,899\n"))
	if err != nil || len(problems) != 1 || problems[0].Msg != "repetition 2 starts and ends at frame 899 (L3 = L4): a repetition's start frame must be before its end frame" {
		t.Errorf("%v %v", problems, err)
	}
}

// TestIntegerCells: a count or frame index is decimal digits (pandas'
// "12.0" too), the rule of a spec's and study's integer fields: "1e3", a
// sign or a fraction is a bad row that quotes the cell.
func TestIntegerCells(t *testing.T) {
	_, rows, problems, err := natural.ReadTableFrom([]byte("type,name,count,L1,L2\nx,a.mp4,1.0,0,5.0\nx,b.mp4,1e3,,\nx,c.mp4,+1,,\nx,d.mp4,1,0,1e1\nx,e.mp4,2.5,,\nx,f.mp4,-1,,\n"))
	if err != nil || len(rows) != 1 || rows[0].Count != 1 || rows[0].Bounds[1] != 5 {
		t.Fatalf("%+v %v", rows, err)
	}
	want := []string{`count "1e3" is not a whole number ≥ 0`, `count "+1" is not a whole number`, `L2 "1e1" is not a frame index`,
		`count "2.5" is not a whole number`, `count "-1" is not a whole number`}
	if len(problems) != len(want) {
		t.Fatalf("problems %v", problems)
	}
	for i, w := range want {
		if !strings.Contains(problems[i].Msg, w) {
			t.Errorf("problem %d: %q, want %q", i, problems[i].Msg, w)
		}
	}
}

// TestTableBOMCRLFAndBoundedQuotes: a table saved on Windows (byte order
// mark, CRLF) reads as the plain one; a 10 MB cell is quoted 200 bytes
// long, never whole.
func TestTableBOMCRLFAndBoundedQuotes(t *testing.T) {
	_, rows, problems, err := natural.ReadTableFrom([]byte("\ufefftype,name,count,L1,L2\r\nx,a.mp4,1,0,5\r\nx,b.mp4,2,,\r\n"))
	if err != nil || len(problems) != 0 || len(rows) != 2 || rows[0].Name != "a.mp4" || rows[0].Bounds[1] != 5 || rows[1].Count != 2 {
		t.Fatalf("%+v %v %v", rows, problems, err)
	}
	huge := strings.Repeat("q", 10<<20)
	_, _, problems, err = natural.ReadTableFrom([]byte("name,count\n" + huge + ",1\na.mp4," + huge + "\n"))
	if err != nil || len(problems) != 2 {
		t.Fatalf("%v %v", problems, err)
	}
	for _, p := range problems {
		if s := p.String(); len(s) > 400 || !strings.Contains(s, `qqq"… (10485760 bytes)`) {
			t.Errorf("%d bytes: %.300s", len(s), s)
		}
	}
	_, _, _, err = natural.ReadTableFrom([]byte(huge + ",count\n"))
	if err == nil || len(err.Error()) > 600 || !strings.Contains(err.Error(), `"… (10485766 bytes)`) {
		t.Errorf("header: %.300v", err)
	}
}
