package turn

import (
	"sync"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Event is one thing a turn reports. The final event of every stream is
// Done, Cancelled or Failed, and there is exactly one.
type Event interface{ event() }

// TextDelta is the next piece of the answer.
type TextDelta struct{ Text string }

// Activity says what the turn is doing (retrying, reading a file).
type Activity struct{ Message string }

// ToolStarted: the model called a tool.
type ToolStarted struct{ Call chat.ToolCall }

// ToolFinished: a tool call ended; Output is what the model got back.
type ToolFinished struct {
	Call   chat.ToolCall
	Output string
	Failed bool
}

// ContextChanged: the model changed a relevant-context set.
type ContextChanged struct {
	SessionID string
	Change    *session.ContextChange
}

// FilesChanged: a file in the session folder was written (by "model") or
// removed (Size 0).
type FilesChanged struct {
	SessionID, Subdir, Name string
	Size                    int64
	By                      string
}

// TitleChanged: the session has a new title (the instant one, the model's,
// or a rename a front door published).
type TitleChanged struct{ Session *session.Session }

// Usage is what the turn's provider requests cost; Window is the model's
// context window.
type Usage struct {
	Usage  session.Usage
	Window int
}

// Compacted: before calling the model the turn summarised the session's
// earlier turns (Compaction.Summary covers them); Compaction.Tokens is the
// input's size now.
type Compacted struct{ Compaction chat.Compaction }

// Done: the turn ended with an answer (Result.FinishReason stop or length;
// Result.ToolLimit when it stopped at the tool round cap).
type Done struct{ Result *chat.Result }

// Cancelled: the turn was cancelled; the partial answer is stored as
// interrupted.
type Cancelled struct{ Result *chat.Result }

// Failed: the turn failed. Result is nil when nothing of an answer was
// stored (a busy session, a store error before the provider was called).
type Failed struct {
	Result *chat.Result
	Err    error
}

func (TextDelta) event()      {}
func (Activity) event()       {}
func (ToolStarted) event()    {}
func (ToolFinished) event()   {}
func (ContextChanged) event() {}
func (FilesChanged) event()   {}
func (TitleChanged) event()   {}
func (Usage) event()          {}
func (Compacted) event()      {}
func (Done) event()           {}
func (Cancelled) event()      {}
func (Failed) event()         {}

// stream adapts chat.Events to the turn's channel. A title that arrives
// after the stream ended (the model names the session in the background)
// goes to the service's subscribers.
type stream struct {
	s      *Service
	sessID string
	mu     sync.Mutex
	ch     chan Event
	closed bool
}

func (st *stream) send(ev Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		if _, ok := ev.(TitleChanged); ok {
			go st.s.Publish(ev)
		}
		return
	}
	st.ch <- ev
}

// end sends the final event and closes the stream.
func (st *stream) end(final Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ch <- final
	close(st.ch)
	st.closed = true
}

func (st *stream) Delta(text string)                  { st.send(TextDelta{Text: text}) }
func (st *stream) Activity(message string)            { st.send(Activity{Message: message}) }
func (st *stream) TitleChanged(sess *session.Session) { st.send(TitleChanged{Session: sess}) }
func (st *stream) ToolStarted(c chat.ToolCall)        { st.send(ToolStarted{Call: c}) }
func (st *stream) Compacted(c chat.Compaction)        { st.send(Compacted{Compaction: c}) }
func (st *stream) ContextChanged(ch *session.ContextChange) {
	st.send(ContextChanged{SessionID: st.sessID, Change: ch})
}
func (st *stream) ToolFinished(c chat.ToolCall, output string, failed bool) {
	st.send(ToolFinished{Call: c, Output: output, Failed: failed})
}
func (st *stream) FilesChanged(sessionID, subdir, name string, size int64, by string) {
	st.send(FilesChanged{SessionID: sessionID, Subdir: subdir, Name: name, Size: size, By: by})
}
