package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxls/ctxls/service"
)

// setStorageLimit takes settings.ctxls.storageSoftLimitMB: absent leaves
// the limit as it is, null or 0 goes back to the command line's or the
// default, a bad value is ignored with a warning.
func (s *Server) setStorageLimit(svc *service.Service, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var mb *int
	if err := json.Unmarshal(raw, &mb); err != nil || mb != nil && *mb < 0 {
		s.showMessage(context.Background(), 2, fmt.Sprintf("settings ignored: ctxls.storageSoftLimitMB is %s; want a whole number of MiB, at least 1 (or 0 for the default)", truncate(string(raw), 40)))
		return
	}
	limit := 0
	if mb != nil {
		limit = *mb
	}
	svc.SetStorageLimitMB(limit)
}
