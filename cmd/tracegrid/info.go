package main

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
)

// infoJSON is `tracegrid info --json`: one object whose fields are always
// present (a cluster prolog reads them as data; docs/cluster.md). An
// *_error field is "" when that part worked.
type infoJSON struct {
	Version         string                 `json:"version"`
	Encoders        []encode.EncoderStatus `json:"encoders"`
	EGLDevices      []string               `json:"egl_devices"`
	EGLDevicesError string                 `json:"egl_devices_error"`
	GLRenderer      string                 `json:"gl_renderer"`
	GLVendor        string                 `json:"gl_vendor"`
	GLVersion       string                 `json:"gl_version"`
	EGLPlatform     string                 `json:"egl_platform"`
	EGLDevice       string                 `json:"egl_device"`
	GLMaxSamples    int                    `json:"gl_max_samples"`
	GLError         string                 `json:"gl_error"`
}

func newInfoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Print the tool version, the encoders compiled in and usable, the EGL devices (as TRACEGRID_EGL_DEVICE counts them) and the GL renderer EGL picks",
		Long: `info prints the tool version; for each encoder whether this libavcodec has it
compiled in and whether it is usable here (it opened and encoded one 256x256
frame; a hardware encoder without its driver is compiled in but not usable, and
the line says why); the EGL devices; and the GL renderer, vendor and version
EGL picks. --json prints the same as one JSON object (docs/cluster.md). Exit 1
when no GL renderer can be made.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := infoJSON{Version: pipeline.ToolVersion(), EGLDevices: []string{}}
			withoutStderr(func() {
				for _, c := range encode.InfoEncoders {
					in.Encoders = append(in.Encoders, encode.ProbeEncoder(c))
				}
			})
			// The devices TRACEGRID_EGL_DEVICE counts, listed before the
			// renderer is made so that a wrong index can be corrected.
			if devs, err := gpu.EGLDevices(); err != nil {
				in.EGLDevicesError = err.Error()
			} else if devs != nil {
				in.EGLDevices = devs
			}
			r, rerr := gpu.NewRenderer()
			if rerr == nil {
				i := r.Info()
				r.Close()
				in.GLRenderer, in.GLVendor, in.GLVersion = i.Renderer, i.Vendor, i.Version
				in.EGLPlatform, in.EGLDevice, in.GLMaxSamples = i.Platform, i.Device, i.MaxSamples
			} else {
				in.GLError = rerr.Error()
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(in); err != nil {
					return err
				}
				return rerr
			}
			printInfo(in)
			return rerr
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (fields always present; docs/cluster.md)")
	return cmd
}

// withoutStderr runs fn with file descriptor 2 on /dev/null: x265 and
// SVT-AV1 print their banners (about 40 lines) straight to stderr when
// opened, which would bury info's answer; libav's own messages about a
// failure are captured into the error (encode.Usable) and printed. If
// the descriptors cannot be switched, fn runs with stderr as it is.
func withoutStderr(fn func()) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fn()
		return
	}
	defer null.Close()
	saved, err := syscall.Dup(2)
	if err != nil {
		fn()
		return
	}
	defer syscall.Close(saved)
	if syscall.Dup3(int(null.Fd()), 2, 0) != nil {
		fn()
		return
	}
	defer syscall.Dup3(saved, 2, 0)
	fn()
}

// printInfo writes the text form, one fact a line.
func printInfo(in infoJSON) {
	fmt.Println("tracegrid", in.Version)
	for _, e := range in.Encoders {
		fmt.Printf("encoder %-11s compiled_in=%v usable=%v", e.Name, e.CompiledIn, e.Usable)
		if e.Error != "" {
			fmt.Printf(" (%s)", e.Error)
		}
		fmt.Println()
	}
	if in.EGLDevicesError != "" {
		fmt.Printf("EGL devices: %s\n", in.EGLDevicesError)
	}
	for i, d := range in.EGLDevices {
		fmt.Printf("EGL device %d: %s\n", i, d)
	}
	if in.GLError != "" {
		return // the error itself is printed by main
	}
	fmt.Printf("GL_RENDERER %s\nGL_VERSION  %s\nGL_VENDOR   %s\nEGL platform %s (%s)\nMSAA        %d samples max (3D worlds on the depth path use up to 4)\n",
		in.GLRenderer, in.GLVersion, in.GLVendor, in.EGLPlatform, in.EGLDevice, in.GLMaxSamples)
}
