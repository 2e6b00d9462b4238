package service

import (
	"strings"
	"sync"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// Update is something an operation changed that a door tells its client
// about (the LSP door as ctxls/* notifications, the ACP door as
// session/update). Handlers are called on the operation's goroutine,
// before the operation returns, so a client hears of a change before the
// answer of the request that made it.
type Update interface{ isUpdate() }

// SessionUpdated: a session's title changed (a rename, the model's title,
// a title cleared), or it was compacted (CompactedThrough set).
type SessionUpdated struct {
	api.SessionUpdatedParams
	Session *api.Session // nil after a compaction
	// Tokens and Window after a compaction: what the model input takes now
	// and the context window.
	Tokens, Window int
}

// SessionContextChanged: a session's relevant context was changed, or shown again
// on a resume.
type SessionContextChanged struct{ api.ContextChangedParams }

// SessionFilesChanged: a file in a session folder was written or removed.
type SessionFilesChanged struct{ api.SessionFilesChangedParams }

// Notice is something to tell the user (window/showMessage): a storage
// clean-up, a new session after the current one was deleted.
type Notice struct {
	Warning bool
	Message string
}

func (SessionUpdated) isUpdate()        {}
func (SessionContextChanged) isUpdate() {}
func (SessionFilesChanged) isUpdate()   {}
func (Notice) isUpdate()                {}

// Subscribe calls f with every event of this connection's operations, and
// with the titles the model suggests after a turn ended.
func (s *Service) Subscribe(f func(Update)) {
	s.subs.mu.Lock()
	s.subs.fs = append(s.subs.fs, f)
	s.subs.mu.Unlock()
}

// subscribers are the doors' event handlers.
type subscribers struct {
	mu sync.Mutex
	fs []func(Update)
}

func (s *Service) publish(ev Update) {
	s.subs.mu.Lock()
	subs := s.subs.fs
	s.subs.mu.Unlock()
	for _, f := range subs {
		f(ev)
	}
}

// titleChanged publishes a session's new title (after it was stored).
func (s *Service) titleChanged(sess *session.Session) {
	s.titles.Lock()
	defer s.titles.Unlock()
	s.publish(titleUpdate(sess))
}

// titleUpdate is the event of a session's title.
func titleUpdate(sess *session.Session) SessionUpdated {
	w := wireSession(sess)
	return SessionUpdated{SessionUpdatedParams: api.SessionUpdatedParams{SessionID: w.ID, Title: w.Title, TitleSource: w.TitleSource}, Session: w}
}

// PlanParams are the params of ctxls/plan (and what ACP's plan update
// carries) for the model's change of a session's plan. The change travels
// with the turn's events, not as a service Event, so every door shows it
// after the card of the update_plan call that made it.
func PlanParams(ev PlanChanged) api.PlanParams {
	return api.PlanParams{SessionID: ev.SessionID, Entries: nonNil(ev.Plan)}
}

// contextChanged publishes a change (or, on resume, the state) of a
// session's relevant context.
func (s *Service) contextChanged(id, reason string, sets session.Context, added, removed []string) {
	s.publish(s.contextEvent(id, reason, sets, added, removed))
}

func (s *Service) contextEvent(id, reason string, sets session.Context, added, removed []string) SessionContextChanged {
	return SessionContextChanged{api.ContextChangedParams{
		SessionID: id, Reason: reason, Context: wireContext(sets),
		Added: nonNil(added), Removed: nonNil(removed), Missing: s.missingFiles(sets),
		Applet: appletOf(sets[prompts.SetApplet]),
	}}
}

// appletOf turns the applet set [slug, "key=value", ...] into its object;
// nil when there is none.
func appletOf(items []string) *api.Applet {
	if len(items) == 0 {
		return nil
	}
	a := &api.Applet{Slug: items[0], Params: map[string]string{}}
	for _, it := range items[1:] {
		k, v, _ := strings.Cut(it, "=")
		a.Params[k] = v
	}
	return a
}
