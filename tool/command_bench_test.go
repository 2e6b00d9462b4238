//go:build linux

package tool

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkRunCommandOverhead is issue 32's figure: what run_command adds
// to the same command run by `sh -c` (spawn to exit seen), the command's
// own process group, the watcher that takes it down with the daemon, and
// the output's collection included. Each iteration runs both, one after
// the other, so load from elsewhere falls on both alike; overhead-ms is
// the difference of the medians.
func BenchmarkRunCommandOverhead(b *testing.B) {
	dir, env := b.TempDir(), os.Environ()
	ctx := context.Background()
	var ours, plain []time.Duration
	for b.Loop() {
		t0 := time.Now()
		r := runShell(ctx, ShellCommand{Line: "echo hi", Dir: dir, Timeout: time.Minute, Env: env})
		ours = append(ours, time.Since(t0))
		if r.Err != nil || r.ExitCode != 0 || string(r.Output) != "hi\n" {
			b.Fatalf("run_command: %+v", r)
		}
		t0 = time.Now()
		cmd := exec.Command("sh", "-c", "echo hi")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		plain = append(plain, time.Since(t0))
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("sh -c: %q %v", out, err)
		}
	}
	mo, mp := median(ours), median(plain)
	b.ReportMetric(float64(mo)/1e6, "run_command-ms")
	b.ReportMetric(float64(mp)/1e6, "sh-ms")
	b.ReportMetric(float64(mo-mp)/1e6, "overhead-ms")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
