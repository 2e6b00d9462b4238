package chat

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/ctxls/ctxls/session"
)

// maxTitleInput is how much of the first message and of the first answer
// (each, in bytes) the title request carries: the opening says what the
// conversation is about, and a long answer would only cost tokens.
const maxTitleInput = 4000

// titleInput is the title request's user message: the first message and
// the first complete answer ("" when there is none yet), cut to size.
func titleInput(first, answer string) string {
	in := "The user wrote:\n\n" + cutText(first, maxTitleInput)
	if answer != "" {
		in += "\n\nThe assistant answered:\n\n" + cutText(answer, maxTitleInput)
	}
	return in
}

// cutText cuts s to at most n bytes on a rune boundary, marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ClearTitle makes a session's title the automatic one again: the first
// line of its first message ("New session" if it has none), titleSource
// "auto", the folder renamed with it. The model is asked for a title again
// after the next complete answer.
func ClearTitle(ctx context.Context, st *session.Store, id string) (*session.Session, error) {
	first, _, err := st.FirstExchange(ctx, id)
	if err != nil {
		return nil, err
	}
	title := FirstLineTitle(first)
	if title == "" {
		title = session.DefaultTitle
	}
	// Forgotten first: if the rename fails the title is not "auto", and
	// nothing asks the model for one.
	if err := st.ClearTitleRequested(ctx, id); err != nil {
		return nil, err
	}
	return st.Rename(ctx, id, title, session.TitleAuto)
}

// WaitBackground waits until the background jobs started so far (model
// titles) have finished, at most timeout or until ctx is done; it reports
// whether they finished. Close still has to be called.
func (e *Engine) WaitBackground(ctx context.Context, timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		e.bg.Wait()
		close(done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}
