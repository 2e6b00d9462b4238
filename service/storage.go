package service

import (
	"context"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"

	"github.com/ctxls/ctxls/session"
)

// storageLimit is the data directory's soft limit in bytes: the client's
// (settings, else initializationOptions), else the command line's, else
// session.DefaultSoftLimitMB.
func (s *Service) storageLimit() int64 {
	s.mu.Lock()
	mb := s.conn.editorMB
	s.mu.Unlock()
	if mb <= 0 {
		mb = s.cliMB
	}
	if mb <= 0 {
		mb = session.DefaultSoftLimitMB
	}
	return int64(mb) << 20
}

// storageCheck is the last measure of the data directory, so a turn does
// not walk every session's folder when the directory is far below its
// limit. Its mutex also serialises clean-ups, so two at once do not both
// report the same files.
type storageCheck struct {
	mu    sync.Mutex
	at    time.Time // the last walk; zero: never
	limit int64     // the limit then
	size  int64     // its size then, plus what was written since
}

// storageRecheck is how long a measure below half the limit stands: until
// then a write adds only its own size (when known) to it. Another daemon
// on the same data directory, or a turn's messages, can grow it unseen for
// at most this long, and by less than half the limit in any likely use.
const storageRecheck = time.Minute

// enforceStorage keeps the data directory under its soft limit after a
// resume or a write of grew bytes (0: not known; see
// session.Store.EnforceSoftLimit) and publishes a Notice of what was
// removed. Failures are logged: the clean-up never fails what it follows.
func (s *Service) enforceStorage(ctx context.Context, grew int64) {
	st := &s.storage
	st.mu.Lock()
	defer st.mu.Unlock()
	limit := s.storageLimit()
	st.size += max(grew, 0)
	if limit == st.limit && time.Since(st.at) < storageRecheck && st.size < limit/2 {
		return // far below the limit, measured a moment ago
	}
	c, err := s.store.EnforceSoftLimit(context.WithoutCancel(ctx), limit)
	if err != nil {
		s.log.Warn("storage clean-up failed", "limit", limit, "err", err)
		s.publish(Notice{Warning: true, Message: "the storage clean-up failed: " + err.Error()})
		st.at = time.Time{} // measure again next time
	} else {
		st.at, st.limit, st.size = time.Now(), limit, c.After
	}
	if msg := c.Summary(); msg != "" {
		s.log.Info("storage clean-up", "limit", limit, "before", c.Before, "after", c.After, "removed", len(c.Removed))
		s.publish(Notice{Warning: true, Message: msg})
	}
}

// Prune deletes the sessions with no activity since cutoff (with dryRun,
// only lists them) and returns them; each goes only if it is still that
// old in its delete.
func (s *Service) Prune(ctx context.Context, cutoff time.Time, dryRun bool) ([]api.SessionSummary, error) {
	list, err := s.store.PruneInactive(ctx, cutoff, dryRun)
	out := make([]api.SessionSummary, len(list))
	for i := range list {
		out[i] = summary(&list[i])
	}
	return out, fail(err)
}
