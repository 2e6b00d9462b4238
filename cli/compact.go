package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// compactCmd is "ctxls sessions compact": a session's earlier turns
// summarised now (ctxls.session.compact in the LSP door, /compact in ACP).
func compactCmd(g *globals) *cobra.Command {
	var prov api.Provider
	cmd := &cobra.Command{
		Use:   "compact SESSION_ID",
		Short: "Summarise a session's earlier turns now; the originals are kept (SESSION_ID may be a unique prefix)",
		Long: `Asks the model for a summary of every whole turn since the last summary except the newest, folding
the previous summary in (the goal, decisions, relevant files and why, open questions, exact next steps).
The summary is stored as a message of its own; later turns are given the system prompt, the summary and
the turns after it. Nothing is deleted: show, export and history.md keep every message and mark where the
model's view starts. Needs a provider, as "ctxls chat" does.`,
		Args: exactArgs(1, "a session id"),
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, _ []string) error {
			c, err := svc.Compact(cmd.Context(), &api.SessionIDArgs{SessionID: id}, prov)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sessionId": id, "summary": c.Summary,
					"compactedThrough": c.CompactedThrough, "covered": c.Covered, "tokens": c.Tokens})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\nThe model now sees this summary and the turns after message %d.\n\n%s\n",
				service.SummaryMarker(c.Summary.SummaryOf), c.CompactedThrough, c.Summary.Content)
			return nil
		}),
	}
	providerFlags(cmd, &prov)
	return cmd
}
