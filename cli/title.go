package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// titleCmd is "ctxls sessions title": show, set, regenerate or clear a
// session's title.
func titleCmd(g *globals) *cobra.Command {
	var (
		regenerate, clearIt bool
		prov                api.Provider
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if regenerate && clearIt {
				return usageError{errors.New("give --regenerate or --clear, not both")}
			}
			if len(args) > 1 && (regenerate || clearIt) {
				return usageError{errors.New("give a new title or a flag, not both")}
			}
			return withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, rest []string) error {
				ctx := cmd.Context()
				ref := &api.SessionIDArgs{SessionID: id}
				var res *api.SessionResult
				var err error
				switch {
				case len(rest) > 0:
					res, err = svc.SessionRename(ctx, &api.SessionRenameArgs{SessionID: id, Title: strings.Join(rest, " ")})
				case clearIt:
					res, err = svc.SessionClearTitle(ctx, ref)
				case regenerate:
					res, err = svc.RegenerateTitle(ctx, ref, prov)
				default:
					var s *api.Session
					if s, err = svc.Session(ctx, id); err == nil {
						res = &api.SessionResult{V: api.V, Session: s}
					}
				}
				if err != nil {
					return err
				}
				s := res.Session
				if g.jsonOut {
					return writeJSON(cmd.OutOrStdout(), map[string]any{"session": s})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "title:  %s\nsource: %s\n", s.Title, s.TitleSource)
				return nil
			})(cmd, args)
		},
	}
	cmd.Flags().BoolVar(&regenerate, "regenerate", false, "ask the model for a new title")
	cmd.Flags().BoolVar(&clearIt, "clear", false, "make the title automatic again (from the first message)")
	providerFlags(cmd, &prov)
	return cmd
}
