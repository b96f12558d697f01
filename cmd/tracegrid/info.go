package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
)

func newInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Print the tool version, the encoders available, the EGL devices (as TRACEGRID_EGL_DEVICE counts them) and the GL renderer EGL picks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Println("tracegrid", pipeline.ToolVersion())
			for _, c := range []string{"libx264", "libx265", "h264_nvenc", "hevc_nvenc", "libsvtav1"} {
				fmt.Printf("encoder %-11s available=%v\n", c, encode.Available(c))
			}
			// The devices TRACEGRID_EGL_DEVICE counts, listed before the
			// renderer is made so that a wrong index can be corrected.
			if devs, err := gpu.EGLDevices(); err != nil {
				fmt.Printf("EGL devices: %v\n", err)
			} else {
				for i, d := range devs {
					fmt.Printf("EGL device %d: %s\n", i, d)
				}
			}
			r, err := gpu.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			i := r.Info()
			fmt.Printf("GL_RENDERER %s\nGL_VERSION  %s\nGL_VENDOR   %s\nEGL platform %s (%s)\nMSAA        %d samples max (3D worlds on the depth path use up to 4)\n", i.Renderer, i.Version, i.Vendor, i.Platform, i.Device, i.MaxSamples)
			return nil
		},
	}
}
