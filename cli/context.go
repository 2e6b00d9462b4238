package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
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
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, _ []string) error {
			ctx := cmd.Context()
			wd, _ := os.Getwd()
			for _, change := range []struct {
				items  []string
				remove bool
			}{{add, false}, {drop, true}} {
				if len(change.items) == 0 {
					continue
				}
				ch, err := svc.AddFiles(ctx, id, change.items, change.remove, []string{wd})
				if err != nil {
					return err
				}
				for _, w := range ch.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
				}
			}
			st, err := svc.ContextState(ctx, id)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sessionId": id, "context": st.Context, "missing": st.Missing})
			}
			printContext(cmd.OutOrStdout(), id, st.Context, st.Missing)
			return nil
		}),
	}
	cmd.Flags().StringArrayVar(&add, "add", nil, "add a file to the files set (repeatable)")
	cmd.Flags().StringArrayVar(&drop, "drop", nil, "remove a file from the files set (repeatable)")
	return cmd
}

// printContext shows a session's sets, a missing relevant file marked.
func printContext(w io.Writer, id string, sets api.Context, missing []string) {
	if len(sets) == 0 {
		fmt.Fprintf(w, "Session %s has no relevant context.\n", id)
		return
	}
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "%s:\n", n)
		for _, it := range sets[n] {
			note := ""
			if n == api.SetFiles && slices.Contains(missing, it) {
				note = "  (missing)"
			}
			fmt.Fprintf(w, "  %s%s\n", it, note)
		}
	}
}
