package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// titleCmd is "ctxls sessions title": show, set, regenerate or clear a
// session's title.
func titleCmd(g *globals) *cobra.Command {
	var (
		regenerate, clearIt bool
		prov                chat.Provider
	)
	cmd := &cobra.Command{
		Use:   "title SESSION_ID [NEW TITLE...] [--regenerate | --clear]",
		Short: "Show, set, regenerate or clear a session's title (SESSION_ID may be a unique prefix)",
		Long: `Without a new title or a flag, prints the session's title and who set it (auto, model or user).

  NEW TITLE      sets the title (source "user": the model never replaces it)
  --regenerate   asks the model for a title from the first message and the first complete answer
                 (needs a provider, as "ctxls chat" does)
  --clear        makes the title automatic again: the first line of the first message, source
                 "auto"; the model is asked again after the next complete answer`,
		Args: minArgs(1, "a session id"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			if regenerate && clearIt {
				return usageError{errors.New("give --regenerate or --clear, not both")}
			}
			if len(args) > 1 && (regenerate || clearIt) {
				return usageError{errors.New("give a new title or a flag, not both")}
			}
			ctx := cmd.Context()
			id, err := st.ResolveID(ctx, args[0])
			if err != nil {
				return err
			}
			var s *session.Session
			switch {
			case len(args) > 1:
				s, err = st.Rename(ctx, id, strings.Join(args[1:], " "), session.TitleUser)
			case clearIt:
				s, err = chat.ClearTitle(ctx, st, id)
			case regenerate:
				if prov.Model == "" { // the session's model, if it has one
					if cur, gerr := st.Get(ctx, id); gerr == nil {
						prov.Model = cur.Meta.Model
					}
				}
				resolved, rerr := chat.Resolve(prov, os.Getenv, chat.ProbeOllama)
				if rerr != nil {
					return rerr
				}
				engine := &chat.Engine{Store: st, Buffers: noBuffers{}, Log: discardLogger()}
				defer engine.Close()
				s, err = engine.RegenerateTitle(ctx, id, resolved)
			default:
				s, err = st.Get(ctx, id)
			}
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": s})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "title:  %s\nsource: %s\n", s.Title, s.TitleSource)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&regenerate, "regenerate", false, "ask the model for a new title")
	cmd.Flags().BoolVar(&clearIt, "clear", false, "make the title automatic again (from the first message)")
	providerFlags(cmd, &prov)
	return cmd
}
