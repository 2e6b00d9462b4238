package tool

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// A command runs as sh -c LINE in a process group of its own, stdin
// /dev/null, stdout and stderr one pipe (so interleaved as written).
//
// No orphans when the daemon is killed (SIGKILL leaves it no chance to
// kill anything): the kernel's parent-death signal (Pdeathsig, sent when
// the thread that started the child ends; Go's runtime never ends its
// threads while the process lives, as no goroutine of ctxls's locks one).
// The sh gets SIGKILL so; its children do not inherit the setting, so a
// watcher, started first and leading the group, gets SIGUSR1 so, and its
// trap kills the whole group (kill -KILL 0): every process the command
// started that is still in its group. A process that leaves the group
// (setsid, or a shell's job control) is not covered. The watcher says
// "ready" once its trap is set, and the command starts only then.
const watcherScript = `trap 'kill -KILL 0' USR1; echo ready; exec >/dev/null; while :; do sleep 3600 & wait $!; done`

// runShell runs the command until it ends, its timeout passes (the group
// gets SIGTERM, then SIGKILL after termGrace) or ctx ends (the same after
// cancelGrace). Whatever ends it, the group is killed once the command's
// sh has ended (a background job it left is killed too).
func runShell(ctx context.Context, sc ShellCommand) (res ShellResult) {
	res = ShellResult{Line: sc.Line, Timeout: sc.Timeout}
	watcher := exec.Command("/bin/sh", "-c", watcherScript)
	watcher.Dir = sc.Dir
	watcher.Env = sc.Env
	watcher.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGUSR1}
	ready, wready, err := os.Pipe()
	if err != nil {
		res.Err = fmt.Errorf("the command could not be started: %v", err)
		return res
	}
	watcher.Stdout = wready
	err = watcher.Start()
	wready.Close()
	if err != nil {
		ready.Close()
		res.Err = fmt.Errorf("the command could not be started: %v", err)
		return res
	}
	pgid := watcher.Process.Pid
	defer func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		watcher.Wait()
	}()
	ready.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := io.ReadFull(ready, make([]byte, len("ready\n")))
	ready.Close()
	if err != nil {
		res.Err = fmt.Errorf("the command could not be started: its watcher did not start (%d bytes, %v)", n, err)
		return res
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		res.Err = fmt.Errorf("the command could not be started: %v", err)
		return res
	}
	cmd := exec.Command("/bin/sh", "-c", sc.Line)
	cmd.Dir = sc.Dir
	cmd.Env = sc.Env
	cmd.Stdout, cmd.Stderr = pw, pw // stdin nil: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		res.Err = fmt.Errorf("the command could not be started: %v", err)
		return res
	}

	// The reader keeps the output; the reporter sends the tail so far.
	var (
		mu      sync.Mutex
		out     output
		changed bool
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				mu.Lock()
				out.write(buf[:n])
				changed = true
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	report := func() {
		mu.Lock()
		tail, ok := out.last(maxCommandProgress), changed
		changed = false
		mu.Unlock()
		if ok && sc.Progress != nil {
			sc.Progress(tail)
		}
	}
	stopReports := make(chan struct{})
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		tick := time.NewTicker(commandProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				report()
			case <-stopReports:
				return
			}
		}
	}()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(sc.Timeout)
	defer timer.Stop()
	kill := func(grace time.Duration) error {
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(grace):
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
		return <-exited
	}
	var werr error
	select {
	case werr = <-exited:
	case <-timer.C:
		res.TimedOut = true
		werr = kill(termGrace)
	case <-ctx.Done():
		res.Cancelled = true
		werr = kill(cancelGrace)
	}
	_ = werr
	// What the command left in its group goes with it; a process outside
	// the group holding the pipe is waited for a second at most.
	syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-read:
	case <-time.After(time.Second):
		pr.Close()
		<-read
	}
	pr.Close()
	close(stopReports)
	<-reported
	mu.Lock()
	out.result(&res)
	mu.Unlock()
	st := cmd.ProcessState
	res.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = fmt.Sprintf("signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return res
}
