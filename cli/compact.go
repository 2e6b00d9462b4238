package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// compactCmd is "ctxls sessions compact": a session's earlier turns
// summarised now (ctxls.session.compact in the LSP door, /compact in ACP).
func compactCmd(g *globals) *cobra.Command {
	var prov chat.Provider
	cmd := &cobra.Command{
		Use:   "compact SESSION_ID",
		Short: "Summarise a session's earlier turns now; the originals are kept (SESSION_ID may be a unique prefix)",
		Long: `Asks the model for a summary of every whole turn since the last summary except the newest, folding
the previous summary in (the goal, decisions, relevant files and why, open questions, exact next steps).
The summary is stored as a message of its own; later turns are given the system prompt, the summary and
the turns after it. Nothing is deleted: show, export and history.md keep every message and mark where the
model's view starts. Needs a provider, as "ctxls chat" does.`,
		Args: exactArgs(1, "a session id"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			ctx := cmd.Context()
			id, err := st.ResolveID(ctx, args[0])
			if err != nil {
				return err
			}
			if prov.Model == "" { // the session's model, if it has one
				if cur, gerr := st.Get(ctx, id); gerr == nil {
					prov.Model = cur.Meta.Model
				}
			}
			resolved, err := chat.Resolve(prov, os.Getenv, chat.ProbeOllama)
			if err != nil {
				return err
			}
			engine := &chat.Engine{Store: st, Buffers: noBuffers{}, Log: discardLogger()}
			defer engine.Close()
			c, err := engine.Compact(ctx, id, resolved)
			if err != nil {
				return err
			}
			sp := c.Summary.SummaryOf
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sessionId": id, "summary": c.Summary,
					"compactedThrough": sp.Last, "covered": c.Covered, "tokens": c.Tokens})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\nThe model now sees this summary and the turns after message %d.\n\n%s\n",
				session.SummaryMarker(*sp), sp.Last, c.Summary.Content)
			return nil
		}),
	}
	providerFlags(cmd, &prov)
	return cmd
}
