package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// Undo and redo of a turn's changes to the user's files. Every change an
// edit tool applied is kept in the session's edit log (session.FileEdit:
// the changed span both ways and hashes of the whole text before and
// after). Undo takes back the most recent turn with changes not undone:
// each file through the door, as the turn changed it (the editor's buffer
// over LSP, at its current version, so the editor's own undo can take the
// undo back; fs/write_text_file over ACP; the disk in the CLI); a file the
// turn created is removed. A file that is not as the turn left it (the
// user typed in it since, or a later change did) is left alone and named,
// and the turn's other files are still undone: a partial undo the user
// can see beats refusing the whole of it for one file they kept working
// on. Redo applies the turn undone last again on the same rules.

// undoParallel is how many files an undo changes at once.
const undoParallel = 8

// FileRemover is an EditDoor that removes a file the model created its
// own way (the LSP door: a DeleteFile through the editor, which closes its
// buffer). A door without it has the file removed from the disk.
type FileRemover interface {
	Remove(ctx context.Context, sessionID, path, uri string) (EditResult, error)
}

// Undone is what an undo or redo did.
type Undone struct {
	// Turn is the id of the user message whose turn was undone or redone.
	Turn int64
	// Restored are the files undone (redone), in the order of their first
	// change.
	Restored []string
	// Left are the files not touched, each with why.
	Left []api.LeftFile
}

// RecordEdit keeps an applied edit in the session's edit log, for undo
// (turn: the id of the turn's user message). The hashes are of the whole
// texts; the new text is hashed from its parts, not built.
func RecordEdit(ctx context.Context, l session.EditLog, turn int64, r EditRequest, onDisk bool) error {
	return l.RecordEdit(ctx, &session.FileEdit{
		SessionID: r.SessionID, Turn: turn, Path: r.Path, Created: r.Create,
		Start: r.Start, Removed: r.OldText[r.Start:r.OldEnd], Inserted: r.Inserted,
		BeforeHash: session.TextHash(r.OldText), AfterHash: session.TextHash(r.OldText[:r.Start], r.Inserted, r.OldText[r.OldEnd:]), OnDisk: onDisk,
	})
}

// Undo takes back the most recent turn of the session whose changes are
// not all undone (redo: applies again the turn undone last) through the
// connection's edit door, and notes it for the model's next turn. With
// from (not for redo), every turn from that question on is undone, newest
// first (the turns a rewind to it removes).
func (b *Box) Undo(ctx context.Context, sessionID string, redo bool, from int64) (*Undone, error) {
	l, ok := b.cfg.Store.(session.EditLog)
	if !ok {
		return nil, errors.New("this store keeps no changes to undo")
	}
	all, err := l.Edits(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	turn, changes := pickTurn(all, redo, from)
	if turn == 0 {
		if redo {
			return nil, session.Invalidf("nothing to redo: no turn's changes are undone")
		}
		return nil, session.Invalidf("nothing to undo: the model changed no file in this session that is not undone already")
	}
	door := b.door()
	if door == nil {
		return nil, session.Invalidf("this client cannot apply edits (it lacks workspace.applyEdit), so it cannot undo them")
	}
	res := &Undone{Turn: turn}
	// Each file's changes in order; files apart, a few at a time (each
	// change is a round trip to the editor).
	var order []string
	byPath := map[string][]session.FileEdit{}
	for _, c := range changes {
		if _, ok := byPath[c.Path]; !ok {
			order = append(order, c.Path)
		}
		byPath[c.Path] = append(byPath[c.Path], c)
	}
	type outcome struct {
		done []int64
		why  string
	}
	outcomes := make([]outcome, len(order))
	var wg sync.WaitGroup
	sem := make(chan struct{}, undoParallel)
	for i, p := range order {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, c := range byPath[p] {
				if why := b.undoOne(ctx, door, c, redo); why != "" {
					outcomes[i].why = why // the rest of this file's changes are left too
					return
				}
				outcomes[i].done = append(outcomes[i].done, c.ID)
			}
		})
	}
	wg.Wait()
	var done []int64
	for i, p := range order {
		done = append(done, outcomes[i].done...)
		if why := outcomes[i].why; why != "" {
			res.Left = append(res.Left, api.LeftFile{Path: p, Reason: why})
		} else {
			res.Restored = append(res.Restored, p)
		}
	}
	if err := l.SetUndone(ctx, sessionID, done, !redo, undoNote(res, redo)); err != nil {
		return res, fmt.Errorf("the files were changed, but the session did not record it: %w", err)
	}
	return res, nil
}

// pickTurn is the turn an undo takes back (the newest with a change not
// undone) or a redo applies again (the one undone last), with the changes
// to make in the order to make them.
func pickTurn(all []session.FileEdit, redo bool, from int64) (int64, []session.FileEdit) {
	var turn int64
	if !redo && from != 0 {
		var changes []session.FileEdit
		for _, c := range all {
			if !c.Undone && c.Turn >= from {
				changes = append(changes, c)
				if turn == 0 || c.Turn < turn {
					turn = c.Turn
				}
			}
		}
		slices.Reverse(changes)
		return turn, changes
	}
	if redo {
		var last session.FileEdit
		for _, c := range all {
			if c.Undone && (turn == 0 || c.ToggledAt.After(last.ToggledAt) || c.ToggledAt.Equal(last.ToggledAt) && c.Turn > turn) {
				turn, last = c.Turn, c
			}
		}
	} else {
		for _, c := range all {
			if !c.Undone && c.Turn > turn {
				turn = c.Turn
			}
		}
	}
	var changes []session.FileEdit
	for _, c := range all {
		if c.Turn == turn && c.Undone == redo {
			changes = append(changes, c)
		}
	}
	if !redo {
		slices.Reverse(changes) // the newest change first
	}
	return turn, changes
}

// undoOne undoes (redoes) one change; "" when done, else why it was not.
func (b *Box) undoOne(ctx context.Context, door EditDoor, c session.FileEdit, redo bool) string {
	text, uri, version, err := currentText(ctx, door, c.SessionID, c.Path)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err.Error()
	case c.Created && !redo && !exists:
		return "it no longer exists"
	case c.Created && redo && exists:
		return "a file of that name exists now"
	case !c.Created && !exists:
		return "it no longer exists"
	}
	want := c.AfterHash
	if redo {
		want = c.BeforeHash
	}
	if exists && session.TextHash(text) != want {
		if redo {
			return "it changed since the undo"
		}
		return "it changed since the turn, after the model's change"
	}
	r := EditRequest{SessionID: c.SessionID, Path: c.Path, URI: uri, Version: version, OldText: text, Start: c.Start, whole: &wholeText{},
		Label: "ctxls: undo the model's change to " + filepath.Base(c.Path)}
	if redo {
		r.Label = "ctxls: redo the model's change to " + filepath.Base(c.Path)
	}
	if redo {
		r.OldEnd, r.Inserted, r.Create = c.Start+len(c.Removed), c.Inserted, c.Created
	} else {
		r.OldEnd, r.Inserted = c.Start+len(c.Inserted), c.Removed
	}
	if r.OldEnd > len(text) {
		return "it is not as the turn left it"
	}
	if c.Created && !redo {
		return b.remove(ctx, door, r)
	}
	res, err := door.Apply(ctx, r)
	return notDone(res, err, "the editor refused the change")
}

// notDone is why a door did not do what it was asked ("" when it did).
func notDone(res EditResult, err error, refused string) string {
	switch {
	case err != nil:
		return err.Error()
	case !res.Applied && res.Reason != "":
		return refused + ": " + res.Reason
	case !res.Applied:
		return refused
	}
	return ""
}

// remove removes a file the turn created: through the door when it can,
// else from the disk (the text checked again just before).
func (b *Box) remove(ctx context.Context, door EditDoor, r EditRequest) string {
	if fr, ok := door.(FileRemover); ok {
		res, err := fr.Remove(ctx, r.SessionID, r.Path, r.URI)
		return notDone(res, err, "the editor did not remove it")
	}
	if r.URI == "" { // on disk: still the turn's text?
		now, err := os.ReadFile(r.Path)
		if err != nil {
			return err.Error()
		}
		if string(now) != r.OldText {
			return "it changed since the turn, after the model's change"
		}
	}
	if err := os.Remove(r.Path); err != nil {
		return err.Error()
	}
	return ""
}

// undoNote is what the model is told on its next turn.
func undoNote(res *Undone, redo bool) string {
	if len(res.Restored) == 0 {
		return ""
	}
	verb := "undid"
	if redo {
		verb = "redid"
	}
	note := fmt.Sprintf("The user %s the changes one of your turns made to: %s.", verb, strings.Join(res.Restored, ", "))
	if !redo {
		note += " Those files are back as they were before that turn; do not make the changes again unless the user asks."
	}
	if len(res.Left) > 0 {
		var names []string
		for _, f := range res.Left {
			names = append(names, f.Path)
		}
		note += fmt.Sprintf(" Left as they are (changed since): %s.", strings.Join(names, ", "))
	}
	return note
}
