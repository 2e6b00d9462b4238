package service

import (
	"context"
	"time"

	"github.com/ctxls/ctxls/api"

	"github.com/ctxls/ctxls/session"
)

// storageLimit is the data directory's soft limit in bytes: the client's
// (settings, else initializationOptions), else the command line's, else
// session.DefaultSoftLimitMB.
func (s *Service) storageLimit() int64 {
	s.mu.Lock()
	mb := s.editorMB
	s.mu.Unlock()
	if mb <= 0 {
		mb = s.cliMB
	}
	if mb <= 0 {
		mb = session.DefaultSoftLimitMB
	}
	return int64(mb) << 20
}

// enforceStorage keeps the data directory under its soft limit after a
// resume or a write (see session.Store.EnforceSoftLimit) and publishes a
// Notice of what was removed. Failures are logged: the clean-up never fails
// what it follows.
func (s *Service) enforceStorage(ctx context.Context) {
	s.storageMu.Lock()
	defer s.storageMu.Unlock()
	limit := s.storageLimit()
	c, err := s.store.EnforceSoftLimit(context.WithoutCancel(ctx), limit)
	if err != nil {
		s.log.Warn("storage clean-up failed", "limit", limit, "err", err)
		s.publish(Notice{Warning: true, Message: "the storage clean-up failed: " + err.Error()})
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
