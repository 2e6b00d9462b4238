package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// FirstLineTitle is a new session's instant title: the message's first
// non-empty line, cut at a word boundary to at most 60 characters.
func FirstLineTitle(msg string) string {
	line := ""
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			line = l
			break
		}
	}
	r := []rune(line)
	if len(r) <= 60 {
		return line
	}
	cut := string(r[:60])
	if i := strings.LastIndex(cut, " "); i > 20 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:-") + "…"
}

func (e *Engine) background() context.Context {
	e.bgOnce.Do(func() { e.bgCtx, e.bgCancel = context.WithCancel(context.Background()) })
	return e.bgCtx
}

// Close cancels background jobs and waits for them.
func (e *Engine) Close() {
	e.background()
	e.bgCancel()
	e.bg.Wait()
}

// nameLater asks the model for a better title, once per session, in the
// background: from the session's first user message and its first complete
// answer, so a failed first turn does not move the request to a later
// message. It waits for a complete answer, records that the title was asked
// for (Meta.TitleRequested), and replaces only an "auto" title.
func (e *Engine) nameLater(t TurnSpec, ev Events) {
	if s := t.Session; s != nil && (s.TitleSource != session.TitleAuto || s.Meta.TitleRequested) {
		return // as the turn began: named already, or asked for
	}
	ctx := e.background()
	s, err := e.Store.Get(ctx, t.SessionID)
	if err != nil || s.TitleSource != session.TitleAuto || s.Meta.TitleRequested {
		return
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		var pc panics.Catcher
		pc.Try(func() {
			first, answer, err := e.Store.FirstExchange(ctx, t.SessionID)
			if err != nil || first == "" || answer == "" {
				return // no complete answer yet: a later turn asks
			}
			if asked, err := e.Store.MarkTitleRequested(ctx, t.SessionID); err != nil || !asked {
				return
			}
			title, err := e.suggestTitle(ctx, t.Provider, first, answer)
			if err != nil {
				e.Log.Info("title suggestion failed; keeping the title", "session", t.SessionID, "err", err)
				return
			}
			changed, err := e.Store.SetTitleIfAuto(ctx, t.SessionID, title)
			if err != nil || !changed {
				return
			}
			if s, err := e.Store.Get(ctx, t.SessionID); err == nil {
				ev.Emit(TitleChanged{Session: s})
			}
		})
		if r := pc.Recovered(); r != nil {
			e.Log.Error("title job panicked", "panic", r.Value)
		}
	}()
}

// RegenerateTitle asks the model for a title from the session's first user
// message and first complete answer and sets it (source "model"), even over
// a user's title.
func (e *Engine) RegenerateTitle(ctx context.Context, sessionID string, p Resolved) (*session.Session, error) {
	first, answer, err := e.Store.FirstExchange(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if first == "" {
		return nil, fmt.Errorf("%w: the session has no message to name it from", session.ErrInvalid)
	}
	title, err := e.suggestTitle(ctx, p, first, answer)
	if err != nil {
		return nil, fmt.Errorf("the title request failed; the title is unchanged: %w", err)
	}
	return e.Store.Rename(ctx, sessionID, title, session.TitleModel)
}

// suggestTitle asks p's title model for a title of the conversation that
// first and answer open.
func (e *Engine) suggestTitle(ctx context.Context, p Resolved, first, answer string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	text, err := e.complete(ctx, p, p.TitleModel, prompts.TitleSystem(), prompts.TitleInput(first, answer))
	if err != nil {
		return "", describe(err, p, false)
	}
	if strings.TrimSpace(text) == "" {
		return "", redactedError{err: errors.New("no title in the answer")}
	}
	title := strings.Trim(strings.TrimSpace(text), "\"'.")
	if title == "" || len(strings.Fields(title)) > 12 {
		return "", redactedError{err: fmt.Errorf("unusable title %q", title)}
	}
	return title, nil
}

// ClearTitle makes a session's title the automatic one again: the first
// line of its first message ("New session" if it has none), titleSource
// "auto", the folder renamed with it. The model is asked for a title again
// after the next complete answer.
func ClearTitle(ctx context.Context, st session.Store, id string) (*session.Session, error) {
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
