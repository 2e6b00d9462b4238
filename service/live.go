package service

import (
	"context"
	"errors"
	"slices"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// Follow publishes, until ctx ends, what other daemons change in the
// sessions watching returns (the PostgreSQL store's live updates; the
// SQLite store's Watch looks every half second) as the events a change made here
// publishes: SessionUpdated for a session's row or messages,
// ContextChanged (reason "changed", added and removed empty: the change's
// items are not known) for its context, FilesChanged (by api.ByRemote) per
// file the mirror followed. A session deleted elsewhere is forgotten as a
// local delete forgets it (a turn of it here ends); after a reconnection
// every watched session's title is published again. It runs on the
// caller's goroutine, one change at a time.
func (s *Service) Follow(ctx context.Context, watching func() []string) error {
	interested := func(id string) bool { return slices.Contains(watching(), id) }
	return s.store.Watch(ctx, interested, func(ch session.Change) { s.liveChange(ctx, ch, watching) })
}

func (s *Service) liveChange(ctx context.Context, ch session.Change, watching func() []string) {
	if ch.Reconnected {
		for _, id := range watching() {
			s.liveSession(ctx, id)
		}
		return
	}
	id := ch.SessionID
	if ch.Deleted {
		s.Forget(id)
		return
	}
	if !slices.Contains(watching(), id) {
		return
	}
	if slices.Contains(ch.Kinds, "sessions") || slices.Contains(ch.Kinds, "messages") {
		if !s.liveSession(ctx, id) {
			return
		}
	}
	if slices.Contains(ch.Kinds, "context_items") {
		if sets, err := s.store.Context(ctx, id); err != nil {
			s.log.Warn("live context not read", "session", id, "err", err)
		} else {
			s.contextChanged(id, "changed", sets, nil, nil)
		}
	}
	for _, f := range ch.Files {
		s.publish(SessionFilesChanged{api.SessionFilesChangedParams{SessionID: id, Subdir: f.Subdir, Name: f.Name, Size: f.Size, By: api.ByRemote, Removed: f.Removed}})
	}
}

// liveSession publishes a session's title as the store has it now; false
// when it is gone (then it is forgotten) or could not be read.
func (s *Service) liveSession(ctx context.Context, id string) bool {
	// Read and published under s.titles: the model's title, stored after
	// this read, is announced after this one (a client kept the stale
	// first-line title when the two crossed).
	s.titles.Lock()
	sess, err := s.store.Get(ctx, id)
	if err == nil {
		s.publish(titleUpdate(sess))
	}
	s.titles.Unlock() // before Forget, which may wait for a turn that announces a title
	switch {
	case errors.Is(err, session.ErrNotFound):
		s.Forget(id)
		return false
	case err != nil:
		s.log.Warn("live update not read", "session", id, "err", err)
		return false
	}
	return true
}
