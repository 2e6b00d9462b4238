package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/human"
	"github.com/ctxls/ctxls/tool"
)

// SessionUndo undoes the changes of the session's most recent turn whose
// changes are not undone yet, through the connection's edit door
// (tool.Box.Undo), while no turn runs in the session.
func (s *Service) SessionUndo(ctx context.Context, a *api.UndoArgs) (*api.UndoResult, error) {
	return s.undo(ctx, a.SessionID, a.From, false)
}

// SessionRedo applies again the changes of the turn undone last.
func (s *Service) SessionRedo(ctx context.Context, a *api.SessionIDArgs) (*api.UndoResult, error) {
	return s.undo(ctx, a.SessionID, 0, true)
}

func (s *Service) undo(ctx context.Context, sessionID string, from int64, redo bool) (*api.UndoResult, error) {
	what := api.SessionUndo
	if redo {
		what = api.SessionRedo
	}
	sess, err := s.existing(ctx, sessionID, what)
	if err != nil {
		return nil, fail(err)
	}
	var res *tool.Undone
	err = s.engine.Exclusive(ctx, sess.ID, func(ctx context.Context) error {
		res, err = s.box.Undo(ctx, sess.ID, redo, from)
		return err
	})
	if err != nil {
		return nil, fail(err)
	}
	out := &api.UndoResult{V: api.V, SessionID: sess.ID, Turn: res.Turn, Restored: nonNil(res.Restored), Left: nonNil(res.Left)}
	return out, nil
}

// UndoText says what an undo (redo) did, as the ACP door and the CLI
// answer: the files restored, then those left with why.
func UndoText(res *api.UndoResult, redo bool) string {
	var b strings.Builder
	verb, none := "Undid", "Nothing was undone"
	if redo {
		verb, none = "Redid", "Nothing was redone"
	}
	if len(res.Restored) == 0 {
		b.WriteString(none + ": every file the turn changed is left as it is.\n")
	} else {
		fmt.Fprintf(&b, "%s the model's changes to %s:\n", verb, human.Count(len(res.Restored), "file"))
		for _, p := range res.Restored {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	if len(res.Left) > 0 {
		fmt.Fprintf(&b, "Left as %s:\n", map[bool]string{true: "it is", false: "they are"}[len(res.Left) == 1])
		for _, f := range res.Left {
			fmt.Fprintf(&b, "- %s: %s\n", f.Path, f.Reason)
		}
	}
	return b.String()
}
