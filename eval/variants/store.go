package variants

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/pipeline"
)

// Record is one line of variants.jsonl: one clip × policy in one output
// mode, with the sha256 of every file it consists of.
type Record struct {
	Clip   string `json:"clip"`
	Policy string `json:"policy"` // canonical policy string, e.g. "fps:4"
	As     string `json:"as"`     // "frames" or "video"
	// Path is the variant's directory (frames) or MP4 (video), relative
	// to the output directory, slash-separated.
	Path string `json:"path"`
	// Frames is the number of images (frames) or video frames (video).
	Frames int    `json:"frames"`
	Note   string `json:"note,omitempty"`
	// Settings are what determine the files' bytes besides the clip.
	Settings Settings `json:"settings"`
	// ClipSHA256 is the manifest's sha256 of the clip's video: a clip
	// rendered again makes its variants stale.
	ClipSHA256 string `json:"clip_sha256"`
	// SHA256 maps every file of the variant (path relative to the output
	// directory, slash-separated) to its sha256: the images and
	// frames.json, or the MP4 and the trace copy.
	SHA256      map[string]string `json:"sha256"`
	ToolVersion string            `json:"tool_version"`
}

// Settings of a variant.
type Settings struct {
	Format  string `json:"format,omitempty"`  // frames: jpg or png
	Quality int    `json:"quality,omitempty"` // frames, jpg only
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	// FPS and Encoder: video only; the encoder is the clip's (manifest).
	FPS     int               `json:"fps,omitempty"`
	Encoder *pipeline.Encoder `json:"encoder,omitempty"`
}

func (s Settings) equal(o Settings) bool {
	if s.Format != o.Format || s.Quality != o.Quality || s.Width != o.Width || s.Height != o.Height || s.FPS != o.FPS {
		return false
	}
	if (s.Encoder == nil) != (o.Encoder == nil) {
		return false
	}
	return s.Encoder == nil || *s.Encoder == *o.Encoder
}

// key identifies a variant.
type key struct{ clip, policy, as string }

func (r Record) key() key { return key{r.Clip, r.Policy, r.As} }

// maxRecordLine bounds one line of variants.jsonl: a plan has at most
// sampling.MaxPlanFrames images, each listed with its hash (about 110
// bytes).
const maxRecordLine = 4 << 20

// readRecords reads variants.jsonl. A final line without a newline that
// does not decode (an append cut short by a kill) is skipped; any other
// bad line is an error naming the line. A missing file has no records.
func readRecords(path string) (recs []Record, torn bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	br := textin.NewReader(f, 64<<10) // a copy saved with a byte order mark reads the same
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > maxRecordLine {
				return nil, false, fmt.Errorf("%s line %d: longer than %d bytes", path, n, maxRecordLine)
			}
			var more []byte
			more, err = br.ReadSlice('\n')
			line = append(bytes.Clone(line), more...)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		complete := err == nil
		if len(bytes.TrimSpace(line)) > 0 {
			var r Record
			if derr := json.Unmarshal(line, &r); derr != nil || r.Clip == "" || r.Policy == "" || r.As == "" || r.Path == "" {
				if !complete {
					return recs, true, nil
				}
				if derr == nil {
					derr = errors.New("missing clip, policy, as or path")
				}
				return nil, false, fmt.Errorf("%s line %d is not a variant record: %v; move the file away to start over", path, n, derr)
			}
			recs = append(recs, r)
		}
		if !complete {
			return recs, false, nil
		}
	}
}

// appendRecord adds one record with a single write, so a kill leaves at
// most a torn last line, which readRecords skips.
func appendRecord(f *os.File, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

// writeRecords atomically replaces variants.jsonl.
func writeRecords(path string, recs []Record) error {
	return fsutil.WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// verify reports why a recorded variant cannot be kept ("" when it can):
// it must have been made from the same clip with the same settings, and
// every file must be there with its recorded hash.
func verify(out string, rec, want Record) string {
	switch {
	case rec.Path != want.Path:
		return "path differs"
	case rec.ClipSHA256 != want.ClipSHA256:
		return "the clip was rendered again"
	case !rec.Settings.equal(want.Settings):
		return "settings changed"
	case len(rec.SHA256) == 0:
		return "no files recorded"
	}
	for name, sum := range rec.SHA256 {
		if !inVariant(want, name) {
			return "a file outside the variant"
		}
		if base := path.Base(name); rec.As == AsFrames && base != frames.IndexName && !imageName.MatchString(base) {
			return "made by an older tracegrid, whose image names held sample times"
		}
		got, err := fileSHA256(filepath.Join(out, filepath.FromSlash(name)))
		if err != nil {
			return "file missing: " + name
		}
		if got != sum {
			return "file changed: " + name
		}
	}
	return ""
}

// inVariant reports whether a recorded file belongs to the variant: a
// video variant is its MP4 and the trace beside it (X.mp4, X.trace.json), a
// frames variant the files in its directory.
func inVariant(v Record, name string) bool {
	if stem, ok := strings.CutSuffix(v.Path, ".mp4"); ok && v.As == AsVideo {
		return name == v.Path || name == stem+".trace.json"
	}
	return strings.HasPrefix(name, v.Path+"/")
}

// imageName is frames.ImageName's form: the shown position alone.
var imageName = regexp.MustCompile(`^[0-9]{4,}\.(jpg|png)$`)

// fileSHA256 is the hex SHA-256 of a file's bytes.
func fileSHA256(path string) (string, error) { return fsutil.FileSHA256(path) }

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// lockDir takes an exclusive lock on the output directory so two runs
// never write the same variants.
func lockDir(dir string) (unlock func(), err error) {
	l, err := fsutil.TryLock(filepath.Join(dir, ".variants.lock"))
	var le *fsutil.LockError
	switch {
	case errors.As(err, &le):
		return nil, fmt.Errorf("%w: output directory %s is in use by another tracegrid variants run: %w", ErrOutput, dir, le.Err)
	case err != nil:
		return nil, fmt.Errorf("%w: output directory %s is not writable: %w", ErrOutput, dir, err)
	}
	return func() { _ = l.Unlock() }, nil
}

// tempName matches the temporary files and directories of a run: the
// staging ".<name>.tmp-<digits>" of variants and the ".<name>.tmp<digits>"
// of atomic file writes (variants.jsonl, dataset.jsonl, trace copies).
var tempName = regexp.MustCompile(`^\..+\.tmp-?[0-9]+$`)

// removeStaleTemps deletes what an interrupted run was still writing, in
// the output directory and its subdirectories (policies, traces). The
// directory lock guarantees no live run owns them.
func removeStaleTemps(out string) (removed []string) {
	dirs := []string{"."}
	if ents, err := os.ReadDir(out); err == nil {
		for _, d := range ents {
			if d.IsDir() && !tempName.MatchString(d.Name()) {
				dirs = append(dirs, d.Name())
			}
		}
	}
	for _, d := range dirs {
		ents, err := os.ReadDir(filepath.Join(out, d))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if tempName.MatchString(e.Name()) {
				if os.RemoveAll(filepath.Join(out, d, e.Name())) == nil {
					removed = append(removed, filepath.ToSlash(filepath.Join(d, e.Name())))
				}
			}
		}
	}
	sort.Strings(removed)
	return removed
}

// PolicyDir is the directory name of a canonical policy: ':' becomes '_'
// ("fps:4" → "fps_4").
func PolicyDir(policy string) string { return strings.ReplaceAll(policy, ":", "_") }
