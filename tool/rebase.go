package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxls/ctxls/workspace"
)

// An edit waits for its review while the user goes on typing. When it is
// applied, it is applied to the text the user has then: the edit is
// computed again against the door's current text (the editor's buffer,
// unsaved edits included) wherever the text it replaces now is. Only when
// that text itself changed (old_string no longer occurs, or occurs more
// often) is the edit refused, as a conflict.

// conflict is an edit that cannot be made any more: the text it replaces
// changed while it waited. what says how, for the model and the user.
type conflict struct{ what string }

func (c *conflict) Error() string { return c.what }

// rebaseTries is how often an edit refused by the editor is computed again
// when the text changed meanwhile (the user typed between the daemon's
// read and the editor's apply); rebaseWait is how long the editor's news
// of a change is waited for after it refused an edit of a text the daemon
// still holds (its didChange may come a moment after).
const (
	rebaseTries = 3
	rebaseWait  = 600 * time.Millisecond
)

// applyCurrent applies r through the door against the file's current text,
// computing it again first when the text changed since it was computed
// (see rebase), and again when the editor refused it because the text
// changed once more meanwhile. It returns the edit as applied (or last
// tried).
func applyCurrent(ctx context.Context, door EditDoor, g *workspace.Guard, r EditRequest, a editArgs) (EditRequest, EditResult, error) {
	for try := 1; ; try++ {
		now, err := rebase(ctx, door, g, r, a)
		if err != nil {
			return r, EditResult{}, err
		}
		res, err := door.Apply(ctx, now)
		if err != nil || res.Applied || try == rebaseTries || now.Create {
			return now, res, err
		}
		// Refused: try again if the text changed since (wait a moment for
		// the editor's news of the change).
		if !changedSince(ctx, door, now) {
			return now, res, nil
		}
		r = now
	}
}

// changedSince reports whether the door's text of r's file differs from
// the one r was computed against, waiting up to rebaseWait for it to.
func changedSince(ctx context.Context, door EditDoor, r EditRequest) bool {
	deadline := time.Now().Add(rebaseWait)
	for {
		text, uri, version, err := currentText(ctx, door, r.SessionID, r.Path)
		if err == nil && (text != r.OldText || uri != r.URI || !sameVersion(version, r.Version)) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sameVersion(a, b *int32) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// rebase is r made against the file's current text: r itself when the
// text and its version are the ones it was computed against; the same
// replacement made where old_string now occurs when the text changed
// elsewhere; a *conflict when the text it replaces changed (old_string
// no longer occurs, occurs more than once, or, with replace_all, a
// different number of times), or a new file exists now.
func rebase(ctx context.Context, door EditDoor, g *workspace.Guard, r EditRequest, a editArgs) (EditRequest, error) {
	text, uri, version, err := currentText(ctx, door, r.SessionID, r.Path)
	if r.Create {
		switch {
		case err == nil:
			return r, &conflict{"the file was created meanwhile"}
		case !errors.Is(err, fs.ErrNotExist):
			return r, err
		}
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("the file cannot be read any more: %w", err)
	}
	if text == r.OldText {
		r.URI, r.Version = uri, version // the same text (undone, or opened since)
		return r, nil
	}
	if a.partOfAll {
		return r, &conflict{"the file changed while the edit waited, and only a part of it was accepted"}
	}
	old, new := *a.OldString, *a.NewString
	was := strings.Count(r.OldText, old)
	switch n := strings.Count(text, old); {
	case n == 0:
		return r, &conflict{"the text it replaces was changed in the editor while the edit waited"}
	case n != was:
		return r, &conflict{fmt.Sprintf("the text it replaces occurs %d times in the file now (%d when the edit was made)", n, was)}
	}
	next := EditRequest{SessionID: r.SessionID, Call: r.Call, Path: r.Path, URI: uri, Version: version, OldText: text, whole: &wholeText{}}
	if next.Start, next.OldEnd, next.Inserted, err = replaceIn(r.Path, text, old, new, a.ReplaceAll); err != nil {
		return r, &conflict{err.Error()}
	}
	if next.NewLen() > MaxEditBytes {
		return r, fmt.Errorf("the file would be %d bytes; the limit is %d", next.NewLen(), MaxEditBytes)
	}
	if g.Withheld(r.Path, text) {
		return r, fmt.Errorf("%s looks like it holds secrets now; ctxls edits it only when the user added it to the context by name", r.Path)
	}
	next.Diff, next.Summary = unifiedDiff(shownPath(r.Path, g.Roots), next.OldText, false, next.Start, next.OldEnd, next.Inserted)
	return next, nil
}

// partOf is r made the part of it the user chose in the review: chosen is
// the file's whole text with some of the edit's changes taken and the
// others left out, against r.OldText. It differs from r.OldText only
// where the edit changed it; what replaces old_string is that span of
// chosen (so a rebase makes the part where old_string now is). With
// replace_all the part is made only against the text as it was (a rebase
// is a conflict).
func partOf(r EditRequest, a editArgs, chosen string, g *workspace.Guard) (EditRequest, editArgs, error) {
	if r.Create || a.OldString == nil {
		// A new file: what the user kept of it is its text.
		if !utf8.ValidString(chosen) || len(chosen) > MaxEditBytes {
			return r, a, errors.New("the text the user chose for the new file cannot be used; nothing changed")
		}
		next := r
		next.Inserted, next.whole = chosen, &wholeText{}
		next.Diff, next.Summary = unifiedDiff(shownPath(r.Path, g.Roots), r.OldText, true, 0, 0, chosen)
		return next, a, nil
	}
	if !utf8.ValidString(chosen) {
		return r, a, errors.New("the text the user chose is not valid UTF-8; nothing changed")
	}
	if len(chosen) > MaxEditBytes {
		return r, a, fmt.Errorf("the chosen text is %d bytes; the limit is %d", len(chosen), MaxEditBytes)
	}
	start, oldEnd, newEnd := changed(r.OldText, chosen)
	// The part lies within the edit's own span of the text.
	from, to := r.Start, r.OldEnd
	if !a.ReplaceAll {
		i := strings.Index(r.OldText, *a.OldString)
		from, to = i, i+len(*a.OldString)
	}
	if from < 0 || start < from || oldEnd > to {
		return r, a, errors.New("the text the user chose changes the file outside the edit; nothing changed")
	}
	next := EditRequest{SessionID: r.SessionID, Call: r.Call, Path: r.Path, URI: r.URI, Version: r.Version, OldText: r.OldText,
		Start: start, OldEnd: oldEnd, Inserted: chosen[start:newEnd], whole: &wholeText{}}
	next.Diff, next.Summary = unifiedDiff(shownPath(r.Path, g.Roots), next.OldText, false, next.Start, next.OldEnd, next.Inserted)
	if !a.ReplaceAll {
		// old_string's span in the chosen text: the same start, its end as
		// far from the text's end as before.
		region := chosen[from : len(chosen)-(len(r.OldText)-to)]
		a.NewString = &region
	} else {
		a.partOfAll = true
	}
	return next, a, nil
}

// upperFirst is s with its first letter made upper case (ASCII).
func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
