//go:build linux

package session

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// An exited process its parent has not reaped yet (a zombie) is not alive:
// it will write nothing more, though it still takes signals.
func TestProcessAliveZombie(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !processAlive(pid) {
		t.Fatal("a running process is not alive")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	// Not reaped: wait until /proc says it exited.
	deadline := time.Now().Add(5 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the killed process never showed as exited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the zombie takes no signal (%v): the test shows nothing", err)
	}
	if processAlive(pid) {
		t.Error("an exited, unreaped process counts as alive")
	}
	cmd.Wait()
	if processAlive(pid) {
		t.Error("a reaped process counts as alive")
	}
	if !processAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
}
