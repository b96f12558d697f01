package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/trace"
)

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "trace", Short: "Work with executable ground-truth traces"}
	var at float64
	var asJSON bool
	replay := &cobra.Command{
		Use:   "replay FILE",
		Short: "Validate a trace, execute it, and print c_N and the state at --at T",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tr, err := trace.Load(args[0])
			if err != nil {
				return err
			}
			out := map[string]any{"id": tr.ID, "valid": true, "n": tr.N, "final_count": tr.Final()}
			if cmd.Flags().Changed("at") {
				if at < 0 || at > tr.Duration {
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
