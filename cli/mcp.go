package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// mcpCmd is `ctxls mcp`: the user's sessions for other agents.
func mcpCmd(g *globals, stdin io.Reader, stdout, stderr io.Writer, exit *int) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP: list the servers configured for the model (ctxls mcp list); offer the sessions to other agents (ctxls mcp serve)",
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
localhost or that lacks the bearer token: $` + api.MCPTokenEnv + `, else one it makes
and prints on stderr.`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			*exit = daemon(g, stderr, "serving MCP", func(log *slog.Logger, dir, store string) int {
				return g.doors.MCP(cmd.Context(), stdin, stdout, service.Config{DataDir: dir, Store: store, Version: version(), Log: log},
					MCPOptions{Write: write, HTTP: addr, Stderr: stderr})
			})
		},
	}
	serveCmd.Flags().BoolVar(&write, "write", false, "also offer the tools that change a session (set_relevant_context)")
	serveCmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	cmd.AddCommand(serveCmd, mcpListCmd(g), mcpTrustCmd(g))
	return cmd
}

// mcpListCmd is `ctxls mcp list`: ctxls.mcp.list.
func mcpListCmd(g *globals) *cobra.Command {
	var tools, asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--tools]",
		Short: "List the MCP servers configured ($XDG_CONFIG_HOME/ctxls/mcp.json), where each came from; --tools starts each and lists its tools",
		Args:  cobra.NoArgs,
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, _ []string) error {
			svc.Tools().SetWorkspaceMCP(true)
			res, err := svc.McpList(cmd.Context(), &api.MCPListArgs{Tools: tools})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			printMCP(cmd.OutOrStdout(), res)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&tools, "tools", false, "start each server and list its tools")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// mcpTrustCmd is `ctxls mcp trust`: ctxls.mcp.trust.
func mcpTrustCmd(g *globals) *cobra.Command {
	var no bool
	cmd := &cobra.Command{
		Use:   "trust [--no] [PATH]",
		Short: "Trust a workspace's .mcp.json as it is now (PATH: the file or its folder, default .), so its MCP servers are used; --no distrusts it",
		Args:  cobra.MaximumNArgs(1),
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			res, err := svc.McpTrust(cmd.Context(), &api.MCPTrustArgs{Path: path, Trust: !no})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (servers: %s)\n", termsafe.Line(res.Path), res.State, strings.Join(termsafe.Lines(res.Servers), ", "))
			// What a trusted file runs, as the trust question shows it.
			if r, ok := service.WorkspaceTrustRequest(res.Path); ok && !no {
				for _, line := range service.TrustServers(r) {
					fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", line)
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&no, "no", false, "distrust it: its servers are not used, and ctxls does not ask again until it changes")
	return cmd
}

// printMCP shows the servers: how each is reached, where it was configured,
// its tools or why they could not be listed; env and header names only;
// everything from the configuration or a server escaped (termsafe).
func printMCP(w io.Writer, res *api.MCPListResult) {
	if len(res.Servers) == 0 && len(res.Errors) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured (see docs/editors.md, \"MCP servers\").")
	}
	for _, s := range res.Servers {
		how := termsafe.Line(s.URL)
		if s.Type == "stdio" {
			how = strings.Join(termsafe.Lines(append([]string{s.Command}, s.Args...)), " ")
		}
		running := ""
		if s.Running {
			running = "  (running)"
		}
		fmt.Fprintf(w, "%s  %s  %s%s\n  from %s", termsafe.Line(s.Name), s.Type, how, running, termsafe.Line(s.Source))
		if len(s.EnvKeys) > 0 {
			fmt.Fprintf(w, "; env %s", strings.Join(termsafe.Lines(s.EnvKeys), ", "))
		}
		if len(s.HeaderKeys) > 0 {
			fmt.Fprintf(w, "; headers %s", strings.Join(termsafe.Lines(s.HeaderKeys), ", "))
		}
		fmt.Fprintln(w)
		if s.Error != "" {
			fmt.Fprintf(w, "  ✗ %s\n", termsafe.Text(s.Error))
		}
		if s.ToolsLeftOut > 0 {
			fmt.Fprintf(w, "  ✗ %d of the tools it lists are left out: %s", s.ToolsLeftOut, strings.Join(termsafe.Lines(s.LeftOutReasons), "; "))
			if more := s.ToolsLeftOut - len(s.LeftOutReasons); more > 0 {
				fmt.Fprintf(w, "; and %d more", more)
			}
			fmt.Fprintln(w)
		}
		for _, t := range s.Tools {
			ro := ""
			if t.ReadOnly {
				ro = " (read-only)"
			}
			fmt.Fprintf(w, "  - %s%s: %s\n", termsafe.Line(t.Name), ro, oneLine(t.Description, 80))
		}
	}
	for _, f := range res.WorkspaceFiles {
		path := termsafe.Line(f.Path)
		fmt.Fprintf(w, "workspace file %s: %s", path, f.State)
		switch f.State {
		case api.TrustUndecided:
			fmt.Fprintf(w, " (its servers %s are not used until you trust it: ctxls mcp trust %s)", strings.Join(termsafe.Lines(f.Servers), ", "), path)
		case api.TrustUnreadable:
			fmt.Fprintf(w, " (%s)", termsafe.Line(f.Error))
		}
		fmt.Fprintln(w)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "✗ %s\n", termsafe.Text(e))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", termsafe.Text(n))
	}
}
