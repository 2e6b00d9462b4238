package acp

import (
	"context"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/session"
)

// Live updates (PostgreSQL store): a title another daemon gave a session
// open on this connection goes out as session_info_update, as a local
// rename does. Only the title: the rest of a session/update stream is the
// prompt's own.

// watch runs store.Watch until ctx ends; the returned function ends it
// and waits (at most 2 s) for it.
func (a *Agent) watch() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var pc panics.Catcher
		pc.Try(func() { _ = a.store.Watch(ctx, a.isOpen, func(ch session.Change) { a.liveChange(ctx, ch) }) })
		if r := pc.Recovered(); r != nil {
			a.log.Error("live updates panicked", "panic", r.Value)
		}
	}()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			a.log.Warn("live updates did not stop in time")
		}
	}
}

// liveChange sends session_info_update for an open session whose title is
// not the one this connection last sent (after a reconnection, every open
// session's is checked).
func (a *Agent) liveChange(ctx context.Context, ch session.Change) {
	a.mu.Lock()
	var ids []string
	for id := range a.open {
		if ch.Reconnected || id == ch.SessionID && !ch.Deleted {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		sess, err := a.store.Get(ctx, id)
		if err != nil {
			continue
		}
		a.mu.Lock()
		s := a.open[id]
		changed := s != nil && s.title != sess.Title
		if changed {
			s.title = sess.Title
		}
		a.mu.Unlock()
		if changed {
			a.send(ctx, id, infoUpdate(sess))
		}
	}
}

// isOpen reports whether the client has the session open: only those
// sessions' changes are read.
func (a *Agent) isOpen(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.open[id] != nil
}
