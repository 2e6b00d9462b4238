package turn

import (
	"sync"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Event is one thing a turn reports (chat.Event). The final event of every
// stream is Done, Cancelled or Failed, and there is exactly one.
type Event = chat.Event

// The engine's events, declared in package chat.
type (
	TextDelta      = chat.TextDelta
	Activity       = chat.Activity
	ToolStarted    = chat.ToolStarted
	ToolAllowed    = chat.ToolAllowed
	ToolProgress   = chat.ToolProgress
	ToolFinished   = chat.ToolFinished
	EditProposed   = chat.EditProposed
	ContextChanged = chat.ContextChanged
	FilesChanged   = chat.FilesChanged
	PlanChanged    = chat.PlanChanged
	TitleChanged   = chat.TitleChanged
	Compacted      = chat.Compacted
	// ToolCall is a tool call the tool events carry.
	ToolCall = chat.ToolCall
)

// TokenUsage is what the turn's provider requests cost; Window is the model's
// context window.
type TokenUsage struct {
	Usage  session.Usage
	Window int
}

// Done: the turn ended with an answer (Result.FinishReason stop or length;
// Result.ToolLimit when it stopped at the tool round cap).
type Done struct{ Result *chat.Result }

// Cancelled: the turn was cancelled; the partial answer is stored as
// cancelled.
type Cancelled struct{ Result *chat.Result }

// Failed: the turn failed. Result is nil when nothing of an answer was
// stored (a busy session, a store error before the provider was called).
type Failed struct {
	Result *chat.Result
	Err    error
}

func (TokenUsage) TurnEvent() {}
func (Done) TurnEvent()       {}
func (Cancelled) TurnEvent()  {}
func (Failed) TurnEvent()     {}

// stream takes the engine's events (chat.Events) onto the turn's channel,
// through the request's Observe. A title that arrives after the stream
// ended (the model names the session in the background) goes to Observe
// alone.
type stream struct {
	id      string
	observe func(string, Event) (Event, bool)
	mu      sync.Mutex
	ch      chan Event
	closed  bool
}

func (st *stream) send(ev Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		if _, ok := ev.(TitleChanged); ok && st.observe != nil {
			go st.observe(st.id, ev)
		}
		return
	}
	if ev, ok := st.look(ev); ok {
		st.ch <- ev
	}
}

// look is the request's Observe, if any.
func (st *stream) look(ev Event) (Event, bool) {
	if st.observe == nil {
		return ev, true
	}
	return st.observe(st.id, ev)
}

// end sends the final event, as Observe made it, and closes the stream;
// it returns the event sent. The final event is always sent, whatever
// Observe says of it.
func (st *stream) end(final Event) Event {
	st.mu.Lock()
	defer st.mu.Unlock()
	final, _ = st.look(final)
	st.ch <- final
	close(st.ch)
	st.closed = true
	return final
}

// Emit takes the engine's events (chat.Events).
func (st *stream) Emit(ev chat.Event) { st.send(ev) }
