package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReport runs cpuuse on a shell that spins in a test's temporary
// folder and exits 3: the spin's CPU is in the report under sh, under the
// test and under the folder, and the exit code passes through.
func TestReport(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cpuuse")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir() // /tmp/TestReport<digits>/NNN
	cmd := exec.Command(bin, "-every", "50ms", "--", "sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exit 3`)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v (want code 3)\n%s", err, out)
	}
	text := string(out)
	if !regexp.MustCompile(`the machine busy \d+ CPU-s of \d+ \(\d+ cores`).MatchString(text) {
		t.Errorf("no machine line:\n%s", text)
	}
	row := func(section, name string) float64 {
		_, rest, _ := strings.Cut(text, "-- "+section)
		rest, _, _ = strings.Cut(rest, "\n-- ")
		m := regexp.MustCompile(`(?m)^\s+([\d.]+)  ` + regexp.QuoteMeta(name) + `$`).FindStringSubmatch(rest)
		if m == nil {
			t.Errorf("no %q row under %q:\n%s", name, section, text)
			return 0
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	if v := row("by program", "sh"); v < 0.1 {
		t.Errorf("sh spun for %.2f CPU-s by the report", v)
	}
	row("by test", "TestReport")
	row("by working directory", ".") // the folder cpuuse ran in
}
