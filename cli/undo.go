package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// undoCmd is "ctxls sessions undo" (redo: "ctxls sessions redo"):
// ctxls.session.undo and redo on the files on disk (ACP's /undo, /redo).
// An editor holding one of the files unsaved sees it changed on disk.
func undoCmd(g *globals, redo bool) *cobra.Command {
	use, short := "undo SESSION_ID", "Undo the changes the model made to files in the session's last turn whose changes are not undone (SESSION_ID may be a unique prefix)"
	if redo {
		use, short = "redo SESSION_ID", "Make again the changes of the session's turn undone last (SESSION_ID may be a unique prefix)"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(1, "a session id"),
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, _ []string) error {
			svc.Tools().SetEditDoor(cliEdits{errOut: cmd.ErrOrStderr(), asker: &toolAsker{errOut: cmd.ErrOrStderr()}})
			var res *api.UndoResult
			var err error
			if redo {
				res, err = svc.SessionRedo(cmd.Context(), &api.SessionIDArgs{SessionID: id})
			} else {
				res, err = svc.SessionUndo(cmd.Context(), &api.UndoArgs{SessionID: id})
			}
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprint(cmd.OutOrStdout(), service.UndoText(res, redo))
			return nil
		}),
	}
}
