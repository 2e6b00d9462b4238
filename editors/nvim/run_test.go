package nvim_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// runNvim runs a test script (test/NAME.lua) in a headless Neovim with the
// plugin on its runtimepath, in dir ("" for this folder), with env, and
// fails the test with the editor's output when the script fails or takes
// longer than timeout. what names the run in the failure.
func runNvim(t *testing.T, nvim, dir, script string, env []string, timeout time.Duration, what string) {
	t.Helper()
	here, _ := filepath.Abs(".")
	cmd := exec.Command(nvim, "--headless", "--clean", "-c", "set rtp+="+here, "-c", "luafile "+filepath.Join(here, "test", script))
	cmd.Dir, cmd.Env = dir, env
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: nvim did not finish:\n%s", what, out)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
}
