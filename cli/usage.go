package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// usageCmd is "ctxls sessions usage": ctxls.session.usage (ACP's /usage).
func usageCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "usage SESSION_ID",
		Short: "Show the tokens a session's turns have cost, in all and by model (SESSION_ID may be a unique prefix)",
		Args:  exactArgs(1, "a session id"),
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, _ []string) error {
			u, err := svc.SessionUsage(cmd.Context(), &api.SessionIDArgs{SessionID: id})
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), u)
			}
			fmt.Fprint(cmd.OutOrStdout(), u.Text())
			return nil
		}),
	}
}
