package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tracegrid/tracegrid/internal/fsutil"
)

// WriteOptions are what Write cannot make itself.
type WriteOptions struct {
	// Sheets draws the contact sheets of the Cases section; nil writes
	// the cards without pictures.
	Sheets SheetMaker
}

// Write is WriteWith without options: case cards without contact sheets.
func (r *Report) Write(dir string) error { return r.WriteWith(dir, WriteOptions{}) }

// WriteWith renders the report into dir: figures/*.png, tables/*.csv,
// cases.html with cases/*.png (the case cards and their contact sheets,
// when opt.Sheets is set), summary.json and, last, index.html, which
// embeds every figure as a data URI and needs no network to view. Every
// file is written atomically (fsutil.WriteFileAtomic: temporary file,
// fsync, rename, directory fsync), so a reader never sees a partial file. A
// sheet that cannot be drawn is noted on its card, not an error.
func (r *Report) WriteWith(dir string, opt WriteOptions) error {
	if err := r.writeSheets(dir, opt.Sheets); err != nil {
		return err
	}
	for _, sub := range []string{"figures", "tables"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	images := make(map[string][]byte, len(r.Figures))
	for _, f := range r.Figures {
		png, err := r.RenderFigure(f)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		images[f.File] = png
		if err := writeBytes(filepath.Join(dir, filepath.FromSlash(f.File)), png); err != nil {
			return err
		}
	}
	for _, t := range r.Tables() {
		if err := writeFile(filepath.Join(dir, "tables", t.Name), t.WriteCSV); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(dir, "summary.json"), r.WriteJSON); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "cases.html"), r.writeCasesHTML); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "index.html"), func(w io.Writer) error { return r.writeHTML(w, images) })
}

// writeSheets draws each case's contact sheet into dir/cases.
func (r *Report) writeSheets(dir string, sheets SheetMaker) error {
	if sheets == nil || len(r.Cases) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "cases"), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for i := range r.Cases {
		c := &r.Cases[i]
		c.Sheet, c.SheetError = "", ""
		if len(c.trial.src.FrameTimes) == 0 {
			c.SheetError = "the model was shown the clip's video, not frames"
			continue
		}
		png, err := sheets.Sheet(c.trial.src)
		if err != nil {
			c.SheetError = err.Error()
			continue
		}
		name := caseFile(*c)
		if err := writeBytes(filepath.Join(dir, filepath.FromSlash(name)), png); err != nil {
			return err
		}
		c.Sheet = name
	}
	return nil
}

// WriteJSON writes summary.json: the whole report, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func writeFile(path string, write func(io.Writer) error) error {
	if err := fsutil.WriteFileAtomic(path, write); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

func writeBytes(path string, b []byte) error {
	return writeFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
