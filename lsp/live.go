package lsp

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// Live updates: with the PostgreSQL store, changes other daemons make to
// sessions (session.Store.Watch) go out to this editor as the same
// notifications a change made here sends. Watch skips this daemon's own
// changes, which their handlers announced already.

// watchStopWait bounds how long the end of the connection waits for the
// watch goroutine (a notification blocked on an editor that stopped
// reading must not keep the daemon from exiting).
const watchStopWait = 2 * time.Second

// watcher is the connection's Watch goroutine.
type watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startWatch runs store.Watch on a goroutine of its own until stopWatch
// (shutdown, or the end of Run). The SQLite store's Watch returns at once.
func (s *Server) startWatch(store session.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.watch = w
	s.mu.Unlock()
	go func() {
		defer close(w.done)
		var pc panics.Catcher
		pc.Try(func() {
			if err := store.Watch(ctx, s.showing, func(ch session.Change) { s.liveChange(ctx, store, ch) }); err != nil && ctx.Err() == nil {
				s.log.Warn("live updates ended", "err", err)
			}
		})
		if r := pc.Recovered(); r != nil {
			s.log.Error("live updates panicked", "panic", r.Value, "stack", string(r.Stack))
		}
	}()
}

// stopWatch ends the watch goroutine and waits (at most watchStopWait) for
// it, so the store can close under nothing that reads it.
// showing reports whether id is the session the editor shows (the
// connection's current one): only its changes are read and announced.
func (s *Server) showing(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id == s.current
}

func (s *Server) stopWatch() {
	s.mu.Lock()
	w := s.watch
	s.watch = nil
	s.mu.Unlock()
	if w == nil {
		return
	}
	w.cancel()
	select {
	case <-w.done:
	case <-time.After(watchStopWait):
		s.log.Warn("live updates did not stop in time")
	}
}

// liveChange sends the notifications for one change another daemon made:
// ctxls/sessionUpdated for the session's row or messages,
// ctxls/contextChanged (reason "changed", added and removed empty: the
// change's items are not known, the whole context is sent) for its context,
// one ctxls/sessionFilesChanged (by api.ByRemote) per file the mirror
// followed. A deleted session is dropped as a local delete drops it (a
// turn of it here ends, and it stops being current); a reconnection
// re-sends the current session's ctxls/sessionUpdated.
func (s *Server) liveChange(ctx context.Context, store session.Store, ch session.Change) {
	if ch.Reconnected {
		s.mu.Lock()
		id := s.current
		s.mu.Unlock()
		if id == "" {
			return
		}
		sess, err := store.Get(ctx, id)
		if errors.Is(err, session.ErrNotFound) {
			s.liveDeleted(id)
		} else if err == nil {
			s.sessionUpdated(ctx, sess)
		}
		return
	}
	id := ch.SessionID
	if ch.Deleted {
		s.liveDeleted(id)
		return
	}
	// Only the session the editor shows is announced: an editor with no
	// current session would otherwise take any session changed on any
	// machine (or a teammate's) for the one its own first turn made.
	s.mu.Lock()
	current := s.current
	s.mu.Unlock()
	if id != current {
		return
	}
	if slices.Contains(ch.Kinds, "sessions") || slices.Contains(ch.Kinds, "messages") {
		sess, err := store.Get(ctx, id)
		if errors.Is(err, session.ErrNotFound) {
			s.liveDeleted(id)
			return
		}
		if err != nil {
			s.log.Warn("live update not read", "session", id, "err", err)
		} else {
			s.sessionUpdated(ctx, sess)
		}
	}
	if slices.Contains(ch.Kinds, "context_items") {
		if sets, err := store.Context(ctx, id); err != nil {
			s.log.Warn("live context not read", "session", id, "err", err)
		} else {
			s.notifyContext(ctx, id, "changed", sets, nil, nil, s.missingFiles(sets))
		}
	}
	for _, f := range ch.Files {
		s.notifyFilesChanged(ctx, api.SessionFilesChangedParams{SessionID: id, Subdir: f.Subdir, Name: f.Name, Size: f.Size, By: api.ByRemote, Removed: f.Removed})
	}
}

// liveDeleted is sessionDelete's aftermath for a session deleted
// elsewhere.
func (s *Server) liveDeleted(id string) {
	s.mu.Lock()
	engine := s.engine
	s.mu.Unlock()
	if engine != nil {
		engine.Abort(id)
	}
	s.forgetCurrent(id)
}
