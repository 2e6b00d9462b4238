//go:build unix

package postgres

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds a cpu-ms/op metric: the process's CPU time (user and
// system) per iteration. On a machine shared with other work, wall time per
// op grows with the load while a single-threaded query's CPU time does not.
// Call it before b.Loop.
func reportCPU(b *testing.B) {
	var start syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &start); err != nil {
		return
	}
	b.Cleanup(func() {
		var end syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &end); err != nil || b.N == 0 {
			return
		}
		cpu := time.Duration(end.Utime.Nano() + end.Stime.Nano() - start.Utime.Nano() - start.Stime.Nano())
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	})
}
