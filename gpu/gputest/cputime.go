package gputest

import (
	"syscall"
	"testing"
	"time"
)

// CPUMeter measures the CPU time (user + system, every thread of the
// process: llvmpipe's rasterizer threads included) a benchmark spends a
// frame. On two cores the whole pipeline is bound by CPU time, not by one
// frame's wall time, so render benchmarks report both.
type CPUMeter struct{ start time.Duration }

// StartCPU starts a meter; call it just before the timed loop.
func StartCPU() CPUMeter { return CPUMeter{start: processCPU()} }

// Report adds the metric "cpu-ms/frame": the CPU time since StartCPU over
// frames frames.
func (m CPUMeter) Report(b *testing.B, frames int) {
	if frames > 0 {
		b.ReportMetric(float64(processCPU()-m.start)/float64(time.Millisecond)/float64(frames), "cpu-ms/frame")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
