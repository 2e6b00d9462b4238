package chat

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/session"
)

// DefaultCheckpoint is how often a streaming answer is saved unless
// Engine.Checkpoint says otherwise: a daemon killed mid-answer loses at most
// the text of the last DefaultCheckpoint (plus the time one save takes).
const DefaultCheckpoint = 500 * time.Millisecond

// checkpoints saves a streaming answer every Engine.Checkpoint while its
// text changes, and otherwise writes a heartbeat at least every
// session.HeartbeatEvery (so other processes see the turn is alive), on a
// goroutine of its own: neither a pause of the provider nor an editor slow
// to take the deltas (ev.Delta blocks on a full pipe) holds a checkpoint
// up (found by the crash test). It starts once the answer's row exists
// (created, then ready reports how that went). set hands it the text so
// far; stop ends it and waits for a save in progress, so the final state
// is always written after the last checkpoint. When the row is gone (the
// session was deleted) it calls gone once and stops; when the store's
// database cannot be reached (StoreError), lost, and stops.
func (e *Engine) checkpoints(ctx context.Context, answer *session.Message, created <-chan struct{}, ready func() error, gone func(), lost func(error)) (set func(string), stop func()) {
	every := e.Checkpoint
	if every <= 0 {
		every = DefaultCheckpoint
	}
	var mu sync.Mutex
	latest := ""
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-quit:
			return
		case <-created:
		}
		if ready() != nil {
			return
		}
		var pc panics.Catcher
		pc.Try(func() {
			saved := 0 // the text only grows
			lastWrite := time.Now()
			tick := time.NewTimer(min(every, session.HeartbeatEvery))
			defer tick.Stop()
			for {
				select {
				case <-quit:
					return
				case <-tick.C:
				}
				if ctx.Err() != nil {
					return // the turn is ending; its final state is written by Run
				}
				mu.Lock()
				text := latest
				mu.Unlock()
				var err error
				switch {
				case len(text) != saved && time.Since(lastWrite) >= every*9/10:
					err = e.Store.UpdateMessage(ctx, answer.ID, text, session.StatusStreaming, nil)
					saved, lastWrite = len(text), time.Now()
				case time.Since(lastWrite) >= session.HeartbeatEvery:
					err = e.Store.Heartbeat(ctx, answer.ID)
					lastWrite = time.Now()
				}
				if errors.Is(err, session.ErrNotFound) {
					gone()
					return
				}
				if err != nil && ctx.Err() == nil && errors.Is(e.storeError(err), ErrStoreUnreachable) {
					lost(err)
					return
				}
				if err != nil && ctx.Err() == nil {
					e.Log.Warn("checkpoint failed", "err", err)
				}
				// A whole interval after this save ended: a slow save (a
				// long answer) never runs back to back with the next.
				tick.Reset(min(every, session.HeartbeatEvery))
			}
		})
		if r := pc.Recovered(); r != nil {
			e.Log.Error("checkpoints panicked", "panic", r.Value)
		}
	}()
	set = func(text string) {
		mu.Lock()
		latest = text
		mu.Unlock()
	}
	stop = func() {
		select {
		case <-quit:
		default:
			close(quit)
		}
		<-done
	}
	return set, stop
}
