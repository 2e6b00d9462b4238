// Package cli is ctxls's command line: the serve command editors start and
// the sessions subcommands people run. Main is all cmd/ctxls calls.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// Version is set at build time with -ldflags "-X github.com/ctxls/ctxls/cli.Version=v1.2.3";
// otherwise it comes from the module's build information.
var Version = ""

// version reports the running binary's version.
func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// globals are the flags every subcommand shares.
type globals struct {
	dataDir  string
	store    string      // --store; see resolveStore
	storeSet func() bool // whether --store was given (even as "")
	logFile  string
	logLevel string
	stdio    bool
	jsonOut  bool
	provider api.Provider // serve's provider flags
	// storageLimitMB is --storage-soft-limit-mb (0: not given); see resolveStorageLimitMB.
	storageLimitMB int
	doors          Doors
}

// Doors serve the protocols of "ctxls serve" (LSP), "ctxls acp" and "ctxls
// mcp serve" on stdin and stdout, and return the exit code. cmd/ctxls gives
// them (lsp.Serve, acp.Serve, mcp.Serve): the command line, a door itself,
// imports no other door.
type Doors struct {
	LSP, ACP func(ctx context.Context, in io.Reader, out io.Writer, cfg service.Config) int
	MCP      func(ctx context.Context, in io.Reader, out io.Writer, cfg service.Config, o MCPOptions) int
	// Started, if set, is the editor daemons' service.Config.Opened (serve
	// and acp): what the process does once start-up is over.
	Started func(log *slog.Logger) func(error)
}

// started is the doors' Started for a daemon logging to log (nil: none).
func (d Doors) started(log *slog.Logger) func(error) {
	if d.Started == nil {
		return nil
	}
	return d.Started(log)
}

// MCPOptions are "ctxls mcp serve"'s flags: Write offers the tools that
// change a session; HTTP is the loopback address to serve streamable HTTP
// on ("" for stdio); Stderr gets the HTTP server's address and token.
type MCPOptions struct {
	Write  bool
	HTTP   string
	Stderr io.Writer
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, doors Doors) int {
	g := &globals{doors: doors}
	exit := 0
	root := &cobra.Command{
		Use:   "ctxls",
		Short: "Editor-integration daemon for AI chat that remembers what you were working on",
		Long: `ctxls is a language server that editors start over stdio. It tracks the files
you open and edit, and keeps chat sessions with their relevant context.

Run without a subcommand (or as "ctxls serve") it speaks LSP on stdin/stdout.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exit = serve(cmd.Context(), g, stdin, stdout, stderr)
			return nil
		},
	}
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&g.dataDir, "data-dir", "", "where sessions are stored (default $CTXLS_DATA_DIR, else $XDG_DATA_HOME/ctxls, else ~/.local/share/ctxls)")
	pf.StringVar(&g.store, "store", "", "the session store: a PostgreSQL URL postgres://user@host/db (default $"+service.StoreEnv+"); without it, SQLite in the data directory")
	storeFlag := pf.Lookup("store")
	g.storeSet = func() bool { return storeFlag.Changed }
	pf.StringVar(&g.logFile, "log-file", "", "write logs to this file instead of stderr")
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	root.Flags().BoolVar(&g.stdio, "stdio", false, "accepted for editors that pass it; stdio is the only transport")

	serveCmd := &cobra.Command{
		Use:   "serve",
		Short: "Speak LSP on stdin/stdout (the default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exit = serve(cmd.Context(), g, stdin, stdout, stderr)
			return nil
		},
	}
	providerFlags(serveCmd, &g.provider)
	storageLimitFlag(serveCmd, &g.storageLimitMB)
	serveCmd.Flags().BoolVar(&g.stdio, "stdio", false, "accepted for editors that pass it; stdio is the only transport")
	root.AddCommand(serveCmd, acpCmd(g, stdin, stdout, stderr, &exit), mcpCmd(g, stdin, stdout, stderr, &exit), versionCmd(), sessionsCmd(g), chatCmd(g, stdin), doctorCmd(g), storeCmd(g))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "ctxls: %v\n", err)
		return exitCode(err)
	}
	return exit
}

// exitCode is the exit status of a failed command: 2 for a mistake in how
// it was called, else the CLI column of api.ErrorKinds for the error's kind
// (1 for an error without one).
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return api.KindOf(err).Info().CLI
}

// usageError marks a mistake in how the command was called (exit code 2).
type usageError struct{ error }

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "ctxls %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}

// dataDir resolves the data directory: flag, CTXLS_DATA_DIR, XDG_DATA_HOME,
// then ~/.local/share/ctxls.
func (g *globals) resolveDataDir() (string, error) {
	if g.dataDir != "" {
		return filepath.Abs(g.dataDir)
	}
	if d := os.Getenv("CTXLS_DATA_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ctxls"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find a data directory: %v; pass --data-dir", err)
	}
	return filepath.Join(home, ".local", "share", "ctxls"), nil
}

// logger builds the logger: to the log file if given, else stderr. Nothing
// ever goes to stdout, which carries protocol frames in serve mode.
func (g *globals) logger(stderr io.Writer) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)}
	}
	w, closeFn := stderr, func() {}
	if g.logFile != "" {
		f, err := os.OpenFile(g.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open the log file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), closeFn, nil
}

func serve(ctx context.Context, g *globals, stdin io.Reader, stdout, stderr io.Writer) int {
	return daemon(g, stderr, "serving", func(log *slog.Logger, dir, store string) int {
		limitMB, err := g.resolveStorageLimitMB()
		if err != nil {
			fmt.Fprintf(stderr, "ctxls: %v\n", err)
			return 2
		}
		return g.doors.LSP(ctx, stdin, stdout, service.Config{DataDir: dir, Store: store, Version: version(), Log: log, Provider: g.provider, StorageSoftLimitMB: limitMB, Opened: g.doors.started(log)})
	})
}

// daemon is what both doors (serve, acp) start with: the logger (never on
// stdout, which carries their frames), the data directory and the store's
// URL ("" for SQLite). It returns run's exit code, or 2 for a bad flag and
// 1 for no data directory.
func daemon(g *globals, stderr io.Writer, what string, run func(log *slog.Logger, dir, store string) int) int {
	log, closeLog, err := g.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ctxls: %v\n", err)
		return 2
	}
	defer closeLog()
	dir, err := g.resolveDataDir()
	if err != nil {
		fmt.Fprintf(stderr, "ctxls: %v\n", err)
		return 1
	}
	store, err := g.resolveStore()
	if err != nil {
		fmt.Fprintf(stderr, "ctxls: %v\n", err)
		return 2
	}
	log.Info(what, "version", version(), "pid", os.Getpid(), "dataDir", dir, "store", storeKind(store))
	if path := os.Getenv("CTXLS_CPUPROFILE"); path != "" {
		// For profiling a daemon as an editor drives it (see docs/benchmarks.md).
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	return run(log, dir, store)
}

// resolveStore is the store's URL: --store, else $CTXLS_STORE; "" for the
// SQLite store in the data directory (also what --store "" asks for). Any
// other value than a postgres:// URL is a usage error, which never repeats
// the value: it may hold a password.
func (g *globals) resolveStore() (string, error) {
	url, from := g.store, "--store"
	if g.storeSet == nil || !g.storeSet() {
		url, from = os.Getenv(service.StoreEnv), service.StoreEnv
	}
	if url == "" || service.IsPostgresURL(url) {
		return url, nil
	}
	return "", usageError{fmt.Errorf("%s is not a PostgreSQL URL: want postgres://user@host/database (or nothing, for the local store in the data directory)", from)}
}

// storeKind names the store for logs and messages, without a password:
// "sqlite" or "postgres user@host/database".
func storeKind(url string) string {
	if url == "" {
		return "sqlite"
	}
	return "postgres " + service.RedactDSN(url)
}
