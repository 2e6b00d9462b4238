// Package proctest watches processes a test started (Linux's /proc): the
// tests that check a command or server leaves no process behind.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Gone reports whether pid is no process, or a zombie, within wait.
func Gone(pid int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// pid (comm) STATE ...: the state follows the last ')'.
		if s := string(b); strings.HasPrefix(strings.TrimSpace(s[strings.LastIndex(s, ")")+1:]), "Z") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PidIn waits up to wait for a command to write its pid to path, and
// fails the test without one.
func PidIn(t testing.TB, path string, wait time.Duration) int {
	t.Helper()
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}
