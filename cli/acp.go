package cli

import (
	"context"
	"io"
	"log/slog"

	"github.com/ctxls/ctxls/service"
	"github.com/spf13/cobra"
)

// acpCmd is `ctxls acp`: the Agent Client Protocol agent on stdin/stdout,
// over the same data directory, store and provider settings as serve.
func acpCmd(g *globals, stdin io.Reader, stdout, stderr io.Writer, exit *int) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Speak the Agent Client Protocol (v1) on stdin/stdout, for Zed, JetBrains, CodeCompanion, agent-shell",
		Long: `acp runs ctxls as an ACP agent: editors that talk to external agents start it and
speak JSON-RPC on its stdin and stdout. Its sessions are the same as the LSP
clients' and the CLI's: one store in the data directory. The provider comes from
the flags, the environment (OPENAI_BASE_URL, OPENAI_API_KEY, CTXLS_MODEL) or
initialize's _meta.ctxls.provider.`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			*exit = serveACP(cmd.Context(), g, stdin, stdout, stderr)
		},
	}
	providerFlags(cmd, &g.provider)
	return cmd
}

func serveACP(ctx context.Context, g *globals, stdin io.Reader, stdout, stderr io.Writer) int {
	return daemon(g, stderr, "serving ACP", func(log *slog.Logger, dir, store string) int {
		return g.doors.ACP(ctx, stdin, stdout, service.Config{DataDir: dir, Store: store, Version: version(), Log: log, Provider: g.provider, Opened: g.doors.started(log)})
	})
}
