package cli

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/mcp"
)

// mcpCmd is `ctxls mcp`: the user's sessions for other agents.
func mcpCmd(g *globals, stdin io.Reader, stdout, stderr io.Writer, exit *int) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer the sessions to other agents as an MCP server (ctxls mcp serve)",
		Args:  cobra.NoArgs,
	}
	var (
		write bool
		addr  string
	)
	serveCmd := &cobra.Command{
		Use:   "serve [--write] [--http 127.0.0.1:PORT]",
		Short: "Serve MCP on stdin/stdout (or streamable HTTP on a loopback port): search, show and read the sessions",
		Long: `serve runs an MCP server on the same store as the daemon (the data directory, or
--store's PostgreSQL with its row-level security), so agents such as Claude Code,
Codex or the Copilot CLI can use the user's sessions: the tools search_sessions,
list_sessions, show_session, get_relevant_context, list_session_files and
read_session_file, and each session as the resource ctxls://session/{id}. It is
read-only unless started with --write (set_relevant_context).

With --http ADDR it serves streamable HTTP at http://ADDR/mcp instead, on a
loopback address only, and refuses a request whose Host or Origin is not
localhost or that lacks the bearer token: $` + mcp.TokenEnv + `, else one it makes
and prints on stderr.`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			*exit = daemon(g, stderr, "serving MCP", func(log *slog.Logger, dir, store string) int {
				return mcp.Serve(cmd.Context(), stdin, stdout, mcp.Config{
					DataDir: dir, Store: store, Version: version(), Log: log, Write: write, HTTP: addr, Stderr: stderr,
				})
			})
		},
	}
	serveCmd.Flags().BoolVar(&write, "write", false, "also offer the tools that change a session (set_relevant_context)")
	serveCmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	cmd.AddCommand(serveCmd)
	return cmd
}
