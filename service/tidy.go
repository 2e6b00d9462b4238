package service

import (
	"context"
	"time"

	"github.com/ctxls/ctxls/session"
)

// Empty sessions (session.EmptyAfter) pile up: an ACP session/new, a new
// session made from an editor and left, a first question refused before
// it was stored. Lists leave them out (list, ListOptions.NonEmpty), and
// the service removes those left behind: when the store opens (a daemon's
// start, a CLI command) and when a new session is made. A session this
// connection made, resumed or used is never removed while the connection
// lasts, empty or not; one another daemon holds is protected by
// session.EmptyAfter alone, which is why it is wide.

// tidyEmpty deletes the empty sessions left behind (see above); a failure
// is logged, the clean-up is best effort.
func (s *Service) tidyEmpty(ctx context.Context) {
	if s.store == nil {
		return
	}
	s.mu.Lock()
	keep := make([]string, 0, len(s.held)+1)
	for id := range s.held {
		keep = append(keep, id)
	}
	if s.current != "" {
		keep = append(keep, s.current)
	}
	s.mu.Unlock()
	gone, err := s.store.PruneEmpty(context.WithoutCancel(ctx), time.Now().Add(-session.EmptyAfter), keep)
	if err != nil {
		s.log.Warn("removing empty sessions failed", "err", err)
	}
	if len(gone) > 0 {
		s.log.Info("empty sessions removed", "count", len(gone))
	}
}

// tidyLater is tidyEmpty on a goroutine of its own (after the store has
// opened, with Start); Close waits for it. The channel is closed when this
// clean-up is over (at once when the service is closing): start-up waits
// for its own clean-up on it, not on s.tidy, which a new session's
// clean-up may Add to while that Wait is returning (sync.WaitGroup panics
// then: "WaitGroup is reused before previous Wait has returned", seen in
// an ACP daemon whose client made a session at once).
func (s *Service) tidyLater() <-chan struct{} {
	done := make(chan struct{})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tidy.closed {
		close(done)
		return done
	}
	s.tidy.wg.Add(1)
	go func() {
		defer s.tidy.wg.Done()
		defer close(done)
		if s.WaitStore(context.Background()) != nil {
			return
		}
		s.tidyEmpty(context.Background())
	}()
	return done
}
