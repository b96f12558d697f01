package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/perceiver"
)

// serveTokenEnv holds the bearer token when --token is not given.
const serveTokenEnv = "TRACEGRID_SERVE_TOKEN"

func newServeCmd() *cobra.Command {
	var (
		addr, token, maxBody string
		concurrency, queue   int
		videoRate            float64
		bodyTimeout          time.Duration
		verbose              bool
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8089]",
		Short: "Serve the reference perceiver behind an OpenAI-compatible chat-completions API",
		Long: `serve answers POST /v1/chat/completions (text, image_url parts as PNG/JPEG data URLs,
video_url parts as MP4 data URLs sampled at --video-rate frames/s) and GET /v1/models with a
classical event detector that reads only the text and pixels of each request (docs/perceiver.md).
It binds to loopback unless told otherwise. With a token (--token, or the environment variable
` + serveTokenEnv + `, which keeps it out of the process list) every /v1 request must send
"Authorization: Bearer <token>". Bodies over --max-body get 413, bodies not received within
--body-timeout of the headers 408 (headers must arrive within 10 s); beyond --concurrency requests
being analysed and --queue waiting, requests get 429 with Retry-After. Video parts must be MP4/MOV
or WebM/Matroska; they are demuxed from memory and nothing they name is ever opened.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv(serveTokenEnv)
			}
			limit, err := parseByteSize(maxBody)
			if err != nil {
				return usageError{fmt.Errorf("--max-body: %w", err)}
			}
			if concurrency < 1 || queue < 0 {
				return usageError{fmt.Errorf("--concurrency must be at least 1 and --queue at least 0 (got %d, %d)", concurrency, queue)}
			}
			if !(videoRate > 0) || videoRate > 240 {
				return usageError{fmt.Errorf("--video-rate %v: give frames per second in (0, 240]", videoRate)}
			}
			if bodyTimeout < time.Second || bodyTimeout > time.Hour {
				return usageError{fmt.Errorf("--body-timeout %v: give a duration from 1s to 1h", bodyTimeout)}
			}
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usageError{fmt.Errorf("--addr %q: %w", addr, err)}
			}
			log := logger(verbose)
			if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && token == "" {
				log.Warn("serving beyond loopback without a token: anyone who can reach the address can use it", "addr", addr)
			}
			if queue == 0 {
				queue = -1 // Options: 0 means the default, below 0 none
			}
			srv := perceiver.NewServer(perceiver.Options{
				Token: token, MaxBody: limit, Concurrency: concurrency, Queue: queue, BodyTimeout: bodyTimeout,
				Limits: perceiver.Limits{VideoRate: videoRate}, Logger: log,
			})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "tracegrid serve: listening on http://%s/v1 (model %s)\n", ln.Addr(), perceiver.ModelID)
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-cmd.Context().Done():
			}
			// Interrupted: finish the requests in flight, then stop.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				return fmt.Errorf("stopping the server: %w", err)
			}
			if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "tracegrid serve: stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8089", "address to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&token, "token", "", "bearer token required on /v1 requests (default: $"+serveTokenEnv+"; empty: none)")
	f.StringVar(&maxBody, "max-body", "64MiB", "largest request body (bytes, or with KiB, MiB, GiB)")
	f.IntVar(&concurrency, "concurrency", runtime.NumCPU(), "requests analysed at once")
	f.IntVar(&queue, "queue", 4*runtime.NumCPU(), "requests that may wait beyond --concurrency before 429")
	f.Float64Var(&videoRate, "video-rate", 2, "frames per second sampled from a video_url part (t = j/rate)")
	f.DurationVar(&bodyTimeout, "body-timeout", time.Minute, "longest time to receive a request's body after its headers (then 408)")
	f.BoolVarP(&verbose, "verbose", "v", false, "log every request")
	return cmd
}

// parseByteSize reads a byte count: digits with an optional KiB, MiB or GiB
// (or KB, MB, GB, read as powers of 1024 too).
func parseByteSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a size such as 64MiB", s)
	}
	return n * mult, nil
}
