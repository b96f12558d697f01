package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
)

// TestInfoJSON: info --json is one object with every field always present
// (a cluster prolog reads it as data), and each encoder is reported as
// compiled in and, separately, usable (issue 31, items 17 and 18).
func TestInfoJSON(t *testing.T) {
	out, code := runStdout(t, "info", "--json")
	if code != 0 {
		t.Fatalf("info --json: exit %d: %s", code, out)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("info --json is not one JSON object: %v\n%s", err, out)
	}
	want := []string{"version", "encoders", "egl_devices", "egl_devices_error", "gl_renderer", "gl_vendor", "gl_version", "egl_platform", "egl_device", "gl_max_samples", "gl_error"}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("fields %v, want %v", keys, want)
	}
	var in struct {
		Encoders []map[string]any `json:"encoders"`
		Devices  []string         `json:"egl_devices"`
		Renderer string           `json:"gl_renderer"`
		Vendor   string           `json:"gl_vendor"`
		Version  string           `json:"gl_version"`
		Platform string           `json:"egl_platform"`
		GLError  string           `json:"gl_error"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	if in.Renderer == "" || in.Vendor == "" || in.Version == "" || in.Platform == "" || in.GLError != "" || in.Devices == nil {
		t.Errorf("GL/EGL fields missing: %+v", in)
	}
	var names []string
	for _, e := range in.Encoders {
		name, _ := e["name"].(string)
		names = append(names, name)
		compiled, ok1 := e["compiled_in"].(bool)
		usable, ok2 := e["usable"].(bool)
		why, ok3 := e["error"].(string)
		if !ok1 || !ok2 || !ok3 || len(e) != 4 {
			t.Errorf("encoder entry %v: want exactly name, compiled_in, usable, error", e)
			continue
		}
		// Usable means a render can open it: the same answer as the
		// package's probe, and an error exactly when not usable.
		if compiled != encode.Available(name) || usable != (encode.Usable(name) == nil) || usable != (why == "") {
			t.Errorf("encoder %s: compiled_in %v usable %v error %q", name, compiled, usable, why)
		}
	}
	if !slices.Equal(names, encode.InfoEncoders) {
		t.Errorf("encoders %v, want %v", names, encode.InfoEncoders)
	}

	// The text form says the same, one encoder a line.
	text, code := runStdout(t, "info")
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, text)
	}
	for _, e := range in.Encoders {
		line := "encoder " + e["name"].(string)
		found := false
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) >= 4 && "encoder "+f[1] == line {
				found = true
				if f[2] != "compiled_in="+boolText(e["compiled_in"].(bool)) || f[3] != "usable="+boolText(e["usable"].(bool)) {
					t.Errorf("text line %q disagrees with %v", l, e)
				}
				if !e["usable"].(bool) && !strings.Contains(l, e["error"].(string)) {
					t.Errorf("text line %q does not say why it is not usable", l)
				}
			}
		}
		if !found {
			t.Errorf("info prints no line for %s:\n%s", line, text)
		}
	}
	if strings.Contains(text, "available=") {
		t.Errorf("info still prints available= (compiled in only):\n%s", text)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// runStdout runs the binary and returns its standard output alone (libav's
// encoders log to stderr while info probes them).
func runStdout(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestRenderRefusesUnusableEncoder: a render asks the encoder the same
// question as info — usable, not just compiled in — before it writes
// anything: h264_nvenc without an NVIDIA driver is refused up front with
// libav's reason, exit 1.
func TestRenderRefusesUnusableEncoder(t *testing.T) {
	if !encode.Available("h264_nvenc") || encode.Usable("h264_nvenc") == nil {
		t.Skip("needs h264_nvenc compiled in but not usable (no NVIDIA driver)")
	}
	out := filepath.Join(t.TempDir(), "out")
	spec := writeFile(t, "nv.yaml", "grid: default\ndomains: [blinking]\ncounts: [1]\nfrequencies: [1]\nduration: 2\nwidth: 128\nheight: 96\nencoder: {codec: h264_nvenc}\n")
	msg, code := run(t, "render", "--spec", spec, "--out", out)
	if code != 1 || !strings.Contains(msg, `encoder "h264_nvenc" is not usable here`) || !strings.Contains(msg, `opening encoder "h264_nvenc"`) {
		t.Errorf("render with h264_nvenc: exit %d, %s; want exit 1 saying it is not usable and why", code, msg)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused render left %s behind (%v)", out, err)
	}
}

// TestInfoWithoutGL: without an EGL driver info still answers as data
// (gl_error set, the encoders probed) and exits 1 with the reason on
// stderr; the encoders' own banners (x265, SVT-AV1) stay off stderr
// while probing, and stderr works again afterwards.
func TestInfoWithoutGL(t *testing.T) {
	for _, args := range [][]string{{"info", "--json"}, {"info"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "tracegrid: ") || !strings.Contains(stderr.String(), "no EGL display") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 with the GL error", args, code, stderr.String())
		}
		if strings.Contains(stderr.String(), "x265 [info]") || strings.Contains(stderr.String(), "Svt[info]") {
			t.Errorf("%v: encoder banners on stderr:\n%s", args, stderr.String())
		}
		if len(args) == 1 {
			continue
		}
		var in infoJSON
		if err := json.Unmarshal([]byte(stdout.String()), &in); err != nil || in.GLError == "" || in.GLRenderer != "" || len(in.Encoders) != len(encode.InfoEncoders) {
			t.Errorf("info --json without GL: %v, %+v", err, in)
		}
	}
}
