package acp

import (
	"context"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// Live updates (PostgreSQL store): what another daemon changes in a
// session open on this connection reaches the client as the service's
// events do (onEvent): a new title as session_info_update, as a local
// rename sends it.

// watch waits for the store Serve started opening (logging an open that
// failed: every method that needs the store answers its error), then
// follows the live updates until stopped; the returned function ends them
// and waits (at most 2 s).
func (a *Agent) watch() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var pc panics.Catcher
		pc.Try(func() {
			if err := a.svc.WaitStore(ctx); err != nil {
				if ctx.Err() == nil {
					a.log.Error("cannot open the session store", "err", err)
				}
				return
			}
			_ = a.svc.Follow(ctx, a.openIDs)
		})
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

// openIDs are the sessions the client has open: only their changes are
// read.
func (a *Agent) openIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.open))
	for id := range a.open {
		ids = append(ids, id)
	}
	return ids
}

// isOpen reports whether the client has the session open.
func (a *Agent) isOpen(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.open[id] != nil
}
