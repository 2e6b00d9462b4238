// Command ctxls is the ctxls daemon and its command-line interface. Editors
// start it as "ctxls serve" (the default) and speak LSP over stdio; the
// sessions subcommands work on the same store.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/ctxls/ctxls/acp"
	"github.com/ctxls/ctxls/cli"
	"github.com/ctxls/ctxls/internal/procmem"
	"github.com/ctxls/ctxls/lsp"
	"github.com/ctxls/ctxls/mcp"
	"github.com/ctxls/ctxls/service"
)

func main() {
	stop := profile()
	code := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, doors)
	stop()
	os.Exit(code)
}

// doors are the protocols the command line serves: the daemon is put
// together here, so no door imports another.
var doors = cli.Doors{
	LSP: lsp.Serve,
	ACP: acp.Serve,
	MCP: func(ctx context.Context, in io.Reader, out io.Writer, cfg service.Config, o cli.MCPOptions) int {
		return mcp.Serve(ctx, in, out, cfg, mcp.Options{Write: o.Write, HTTP: o.HTTP, Stderr: o.Stderr})
	},
	Started: releaseStartupPages,
}

// releaseStartupPages is the editor daemons' service.Config.Opened: once
// the store has opened, start-up is over, and the pages of the binary that
// package initialisers and the open touched go back to the kernel
// (procmem.ReleaseImage). What the daemon uses again while it waits and
// answers comes back from the file on first touch.
func releaseStartupPages(log *slog.Logger) func(error) {
	return func(error) {
		n, err := procmem.ReleaseImage()
		if err != nil {
			log.Debug("start-up pages not released", "err", err)
			return
		}
		log.Debug("start-up pages released", "mappedKB", n>>10)
	}
}

// profile starts a CPU profile when CTXLS_CPUPROFILE names a file (the
// process id is appended, for tests that start many daemons); the profile
// ends when the command returns (a daemon killed by a signal writes none).
// For finding where a test's or a benchmark's daemons spend their time:
// go tool pprof ctxls FILE.PID.
func profile() (stop func()) {
	path := os.Getenv("CTXLS_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctxls: CTXLS_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
