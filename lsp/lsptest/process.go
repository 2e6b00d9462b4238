package lsptest

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxls/ctxls/lsp"
	"github.com/ctxls/ctxls/service"
)

// Server is a running server with its fake editor.
type Server struct {
	*Editor
	// Exit waits for the server to end and returns its exit code.
	Exit func() int
	// Stderr returns what the server logged so far (binary mode only).
	Stderr func() string
	// Kill ends the server at once (SIGKILL in binary mode); writes to it
	// may fail from then on without failing the test.
	Kill func()
	// Pid is the server's process id (binary mode; 0 in process).
	Pid int
}

// InProcess runs lsp.Serve on pipes in this process.
func InProcess(t testing.TB, cfg service.Config) *Server {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c := lsp.Serve(ctx, inR, outW, cfg)
		outW.Close()
		inR.Close()
		code <- c
	}()
	e := New(t, outR, inW)
	var once sync.Once
	var exit int
	wait := func() int {
		once.Do(func() {
			select {
			case exit = <-code:
			case <-time.After(e.Timeout()):
				t.Errorf("server did not exit within %v", e.Timeout())
				exit = -1
			}
		})
		return exit
	}
	kill := func() { cancel(); inW.Close() }
	t.Cleanup(func() {
		kill()
		wait()
	})
	return &Server{Editor: e, Exit: wait, Stderr: func() string { return "" }, Kill: kill}
}

// syncBuffer is a goroutine-safe bytes.Buffer.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Binary starts the built ctxls binary with args over real stdio.
func Binary(t testing.TB, env []string, args ...string) *Server {
	t.Helper()
	bin := BuildBinary(t)
	cmd := exec.Command(bin, args...)
	cmd.Env = Env(t, env)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := New(t, stdout, stdin)
	e.onTimeout = func() {
		// The Go runtime prints every goroutine's stack on SIGQUIT: the
		// stderr shown with the failure then says where the server hangs.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		time.Sleep(300 * time.Millisecond)
	}
	var once sync.Once
	exit := -1
	done := make(chan struct{})
	go func() {
		_ = e.WaitOutputClosed(context.Background())
		err := cmd.Wait()
		if cmd.ProcessState != nil {
			exit = cmd.ProcessState.ExitCode()
		}
		_ = err
		close(done)
	}()
	wait := func() int {
		once.Do(func() {
			select {
			case <-done:
			case <-time.After(e.Timeout()):
				t.Errorf("ctxls did not exit within %v; stderr:\n%s", e.Timeout(), stderr.String())
				_ = cmd.Process.Kill()
				<-done
			}
		})
		return exit
	}
	kill := func() {
		e.gone.Store(true)
		_ = cmd.Process.Kill()
	}
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			kill()
			<-done
		}
		if t.Failed() {
			t.Logf("ctxls stderr:\n%s", stderr.String())
		}
	})
	return &Server{Editor: e, Exit: wait, Stderr: stderr.String, Kill: kill, Pid: cmd.Process.Pid}
}

// Env is the environment a test runs the binary with: the test's own, an
// empty XDG_CONFIG_HOME (the user's own configuration, such as MCP servers
// in ~/.config/ctxls, stays out unless env gives one), then env.
func Env(t testing.TB, env []string) []string {
	return append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
}

// Run runs the built binary with args to its end, in dir ("" for the
// test's), with Env(t, env), and returns its stdout, its stderr and its exit
// code.
func Run(t testing.TB, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(BuildBinary(t), args...)
	cmd.Env, cmd.Dir = Env(t, env), dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
