package cli

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// contextCmd is `ctxls sessions context`: shows a session's relevant
// context and changes its files set, with the same operation as the
// editor's ctxls.context.set, the model's tool and ACP's /add and /drop.
func contextCmd(g *globals) *cobra.Command {
	var add, drop []string
	cmd := &cobra.Command{
		Use:   "context SESSION_ID [--add PATH]... [--drop PATH]...",
		Short: "Show a session's relevant context; --add and --drop change its files (paths relative to the working directory)",
		Args:  exactArgs(1, "a session id"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			ctx := cmd.Context()
			id, err := st.ResolveID(ctx, args[0])
			if err != nil {
				return err
			}
			wd, _ := os.Getwd()
			for _, change := range []struct {
				items []string
				mode  session.Mode
			}{{add, session.ModeMerge}, {drop, session.ModeRemove}} {
				if len(change.items) == 0 {
					continue
				}
				ch, err := st.UpdateContext(ctx, id, session.SetFiles, change.items, change.mode, session.AddedByUser, []string{wd})
				if err != nil {
					return err
				}
				for _, w := range ch.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
				}
			}
			sets, err := st.Context(ctx, id)
			if err != nil {
				return err
			}
			missing := chat.MissingFiles(sets[session.SetFiles], noBuffers{})
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sessionId": id, "context": sets, "missing": missing})
			}
			w := cmd.OutOrStdout()
			if len(sets) == 0 {
				fmt.Fprintf(w, "Session %s has no relevant context.\n", id)
				return nil
			}
			names := make([]string, 0, len(sets))
			for n := range sets {
				names = append(names, n)
			}
			sort.Strings(names)
			gone := map[string]bool{}
			for _, m := range missing {
				gone[m] = true
			}
			for _, n := range names {
				fmt.Fprintf(w, "%s:\n", n)
				for _, it := range sets[n] {
					note := ""
					if n == session.SetFiles && gone[it] {
						note = "  (missing)"
					}
					fmt.Fprintf(w, "  %s%s\n", it, note)
				}
			}
			return nil
		}),
	}
	cmd.Flags().StringArrayVar(&add, "add", nil, "add a file to the files set (repeatable)")
	cmd.Flags().StringArrayVar(&drop, "drop", nil, "remove a file from the files set (repeatable)")
	return cmd
}
