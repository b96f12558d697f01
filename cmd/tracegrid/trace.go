package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/trace"
)

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "trace", Short: "Work with executable ground-truth traces"}
	var at float64
	var asJSON bool
	replay := &cobra.Command{
		Use:   "replay FILE",
		Short: "Validate a trace, execute it, and print c_N and the state at --at T (objects: N and the objects in view)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("at") && (math.IsNaN(at) || math.IsInf(at, 0)) {
				return usageError{fmt.Errorf("--at %v is not a time in seconds", at)}
			}
			tr, err := trace.Load(args[0])
			if errors.Is(err, trace.ErrInvalid) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if domain.Of(tr.Domain).Truth == domain.TruthObjects {
				return replayObjects(cmd, tr, at, cmd.Flags().Changed("at"), asJSON)
			}
			out := map[string]any{"id": tr.ID, "valid": true, "n": tr.N, "final_count": tr.Final()}
			if cmd.Flags().Changed("at") {
				if !(at >= 0 && at <= tr.Duration) {
					return usageError{fmt.Errorf("--at %v is outside the clip [0, %v]", at, tr.Duration)}
				}
				c, s := tr.Replay(at)
				out["at"], out["count_at"], out["state_at"] = at, c, s
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				return enc.Encode(out)
			}
			fmt.Printf("%s: valid, %d events, final count c_N = %d\n", tr.ID, tr.N, tr.Final())
			if v, ok := out["at"]; ok {
				fmt.Printf("at t=%v s: count %d, state %q\n", v, out["count_at"], out["state_at"])
			}
			return nil
		},
	}
	replay.Flags().Float64Var(&at, "at", 0, "time in seconds at which to report count and state")
	replay.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.AddCommand(replay)
	return cmd
}

// replayObjects reports a static-object clip: its answer N, how many
// objects leave the view, and with --at which objects are in view in the
// frame shown at T (the last frame at or before T).
func replayObjects(cmd *cobra.Command, tr *trace.Trace, at float64, haveAt, asJSON bool) error {
	o := tr.Objects
	out := map[string]any{"id": tr.ID, "valid": true, "n": tr.N, "final_count": tr.N, "class": tr.Class,
		"left_view": o.LeftView, "frames_all_in_view": o.FramesAllInView, "frames": tr.Frames()}
	if haveAt {
		if !(at >= 0 && at <= tr.Duration) {
			return usageError{fmt.Errorf("--at %v is outside the clip [0, %v]", at, tr.Duration)}
		}
		k := min(int(math.Floor(at*float64(tr.FPS)+1e-9)), tr.Frames()-1)
		yaw, pitch := o.Camera.At(float64(k) / float64(tr.FPS))
		out["at"], out["frame_at"], out["in_view_at"], out["camera_yaw_deg_at"], out["camera_pitch_deg_at"] = at, k, o.InView[k], yaw, pitch
	}
	if asJSON {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%s: valid, %d %s objects (the answer is %d); %d leave the view at some point; all %d in view in %d of %d frames\n",
		tr.ID, tr.N, tr.Class, tr.N, len(o.LeftView), tr.N, o.FramesAllInView, tr.Frames())
	if haveAt {
		fmt.Fprintf(w, "at t=%v s (frame %d): %d in view %v, camera yaw %.2f° pitch %.2f°\n", at, out["frame_at"], len(out["in_view_at"].([]int)), out["in_view_at"], out["camera_yaw_deg_at"], out["camera_pitch_deg_at"])
	}
	return nil
}
