// Package testmcp builds the MCP server the tests use (./server, written
// with the Go SDK) and describes it in the "mcpServers" format.
package testmcp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once  sync.Once
	built string
	err   error
)

// Binary builds the server once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir, derr := os.MkdirTemp("", "testmcp")
		if derr != nil {
			err = derr
			return
		}
		built = filepath.Join(dir, "testmcp")
		cmd := exec.Command("go", "build", "-o", built, "./server")
		cmd.Dir = filepath.Dir(file)
		out, berr := cmd.CombinedOutput()
		if berr != nil {
			err = &buildError{out: string(out), err: berr}
		}
	})
	if err != nil {
		t.Fatalf("building the test MCP server: %v", err)
	}
	return built
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// Server is the server's entry in an "mcpServers" object: args are the
// server's flags after -name; dir is $TESTMCP_DIR (pid and cancel notes).
func Server(t testing.TB, name, dir string, args ...string) map[string]any {
	return map[string]any{
		"command": Binary(t),
		"args":    append([]string{"-name", name}, args...),
		"env":     map[string]string{"TESTMCP_DIR": dir, "TESTMCP_SECRET": "s3cret-value-never-logged"},
	}
}

// Config is an "mcpServers" document of the servers given by name.
func Config(servers map[string]map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	return b
}
