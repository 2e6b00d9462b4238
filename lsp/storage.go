package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// storageLimit is the data directory's soft limit in bytes: the editor's
// storageSoftLimitMB (settings, else initializationOptions), else the
// command line's (flag, else environment), else session.DefaultSoftLimitMB.
func (s *Server) storageLimit() int64 {
	s.mu.Lock()
	mb := s.storageLimitMB
	s.mu.Unlock()
	if mb <= 0 {
		mb = s.cfg.StorageSoftLimitMB
	}
	if mb <= 0 {
		mb = session.DefaultSoftLimitMB
	}
	return int64(mb) << 20
}

// setStorageLimit takes settings.ctxls.storageSoftLimitMB: absent leaves
// the limit as it is, null or 0 goes back to the command line's or the
// default, a bad value is ignored with a warning.
func (s *Server) setStorageLimit(raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var mb *int
	if err := json.Unmarshal(raw, &mb); err != nil || mb != nil && *mb < 0 {
		s.showMessage(context.Background(), 2, fmt.Sprintf("settings ignored: ctxls.storageSoftLimitMB is %s; want a whole number of MiB, at least 1 (or 0 for the default)", truncate(string(raw), 40)))
		return
	}
	s.mu.Lock()
	s.storageLimitMB = 0
	if mb != nil {
		s.storageLimitMB = *mb
	}
	s.mu.Unlock()
}

// enforceStorage keeps the data directory under its soft limit after a
// resume or a write (see session.Store.EnforceSoftLimit) and tells the user
// what was removed with window/showMessage. store nil means the
// connection's. Failures are logged: the clean-up never fails the request
// it follows.
func (s *Server) enforceStorage(ctx context.Context, store session.Store) {
	if store == nil {
		var err error
		if store, err = s.storeOrErr(); err != nil {
			return
		}
	}
	s.storageMu.Lock()
	defer s.storageMu.Unlock()
	limit := s.storageLimit()
	c, err := store.EnforceSoftLimit(context.WithoutCancel(ctx), limit)
	if err != nil {
		s.log.Warn("storage clean-up failed", "limit", limit, "err", err)
	}
	if msg := c.Summary(); msg != "" {
		s.log.Info("storage clean-up", "limit", limit, "before", c.Before, "after", c.After, "removed", len(c.Removed))
		s.showMessage(ctx, 2, msg)
	}
}

// notifyFilesChanged sends ctxls/sessionFilesChanged.
func (s *Server) notifyFilesChanged(ctx context.Context, p api.SessionFilesChangedParams) {
	s.notify(ctx, api.SessionFilesChanged, p)
}
