package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// previewBinary is the window binary `tracegrid preview` runs: built by
// `make build` beside tracegrid, and separate so that tracegrid never
// links GLFW or X11.
const previewBinary = "tracegrid-preview"

// newPreviewCmd is `tracegrid preview …`: it execs tracegrid-preview from
// the directory of this executable with the same arguments, or says how
// to build it.
func newPreviewCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "preview (--manifest M --clip ID | --domain D --n N [--f F] …) [flags]",
		Short: "Play a clip from its scene in a window (runs tracegrid-preview; needs a display)",
		Long: `preview runs tracegrid-preview, installed beside tracegrid by make build, with the same
arguments: a window that plays a clip from its scene with its trace, and with --policy what a
model is shown. It needs a display (xvfb-run -a for a virtual one); render and frames need none.
tracegrid-preview --help lists its flags; docs/preview.md describes it.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := previewPath()
			if err != nil {
				return err
			}
			// Exec replaces this process: the preview's exit status, output
			// and signals are the command's own.
			if err := syscall.Exec(path, append([]string{path}, args...), os.Environ()); err != nil {
				return fmt.Errorf("running %s: %v", path, err)
			}
			return nil
		},
	}
}

// previewPath finds tracegrid-preview beside this executable (symlinks
// resolved). A missing binary is an installation problem, not bad input:
// the error does not wrap fs.ErrNotExist, so the exit status is 1.
func previewPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding %s: the path of this executable: %v", previewBinary, err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	path := filepath.Join(filepath.Dir(exe), previewBinary)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("tracegrid preview runs %s, which is not installed beside %s: build both with `make build` "+
			"(the preview needs the X11 and GLFW development packages `make deps` installs; docs/preview.md)", path, exe)
	case err != nil:
		return "", fmt.Errorf("finding %s: %v", path, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("%s is not an executable file: rebuild it with `make build`", path)
	}
	return path, nil
}
