package lsp

import (
	"context"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/service"
)

// Live updates: with the PostgreSQL store, changes other daemons make to
// sessions go out to this editor as the same notifications a change made
// here sends (the service publishes them as its events). This daemon's own
// changes are skipped: their operations announced them already.

// watchStopWait bounds how long the end of the connection waits for the
// watch goroutine (a notification blocked on an editor that stopped
// reading must not keep the daemon from exiting).
const watchStopWait = 2 * time.Second

// watcher is the connection's Watch goroutine.
type watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startWatch waits on a goroutine of its own for the store initialize
// started opening, tells the user if it cannot be opened (the commands that
// need it fail with the same error), then follows the store's live updates
// (service.Follow) until stopWatch (shutdown, or the end of Run); only
// the session the editor shows (the current one) is followed: an editor
// with no current session would otherwise take any session changed on any
// machine for the one its own first turn made. The SQLite store's looks
// for other processes' changes every half second.
func (s *Server) startWatch(svc *service.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.watch = w
	s.mu.Unlock()
	showing := func() []string {
		if id := svc.Current(); id != "" {
			return []string{id}
		}
		return nil
	}
	go func() {
		defer close(w.done)
		var pc panics.Catcher
		pc.Try(func() {
			if err := svc.WaitStore(ctx); err != nil {
				if ctx.Err() == nil {
					s.log.Error("cannot open the session store", "err", err)
					s.showMessage(ctx, 1, err.Error())
				}
				return
			}
			if err := svc.Follow(ctx, showing); err != nil && ctx.Err() == nil {
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
