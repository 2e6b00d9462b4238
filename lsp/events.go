package lsp

import (
	"context"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// onEvent sends what an operation changed (the service's events) as the
// ctxls/* notifications and window/showMessage. It runs on the operation's
// goroutine, before its answer is sent.
func (s *Server) onEvent(ev service.Update) {
	ctx := context.Background()
	switch ev := ev.(type) {
	case service.SessionUpdated:
		s.notify(ctx, api.SessionUpdated, ev.SessionUpdatedParams)
	case service.SessionContextChanged:
		s.notify(ctx, api.ContextChanged, ev.ContextChangedParams)
	case service.SessionFilesChanged:
		s.notify(ctx, api.SessionFilesChanged, ev.SessionFilesChangedParams)
	case service.Notice:
		kind := 3
		if ev.Warning {
			kind = 2
		}
		s.showMessage(ctx, kind, ev.Message)
	}
}

// showMessage sends window/showMessage (type 1 error, 2 warning, 3 info).
func (s *Server) showMessage(ctx context.Context, kind int, msg string) {
	s.notify(ctx, "window/showMessage", map[string]any{"type": kind, "message": "ctxls: " + msg})
}
