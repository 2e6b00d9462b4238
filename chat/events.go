package chat

import "github.com/ctxls/ctxls/session"

// Event is one thing a turn reports, declared once here: the engine emits
// them (Events.Emit), package turn streams them to the service with its own
// Usage and final events, and the doors adapt them.
type Event interface{ TurnEvent() }

// TextDelta is the next piece of the answer.
type TextDelta struct{ Text string }

// Activity says what the turn is doing (retrying, reading a file).
type Activity struct{ Message string }

// TitleChanged: the session has a new title (the instant one, or the
// model's, which may come after the turn ended).
type TitleChanged struct{ Session *session.Session }

// ContextChanged: the model changed a relevant-context set.
type ContextChanged struct {
	SessionID string
	Change    *session.ContextChange
}

// FilesChanged: a file in the session folder was written by the model
// ("model") or removed (Size 0).
type FilesChanged struct {
	SessionID, Subdir, Name string
	Size                    int64
	By                      string
}

// ToolStarted and ToolFinished bracket each tool call of the model's;
// Failed: the tool returned an error (the model got it as text).
type ToolStarted struct{ Call ToolCall }

// ToolFinished: a tool call ended; Output is what the model got back.
type ToolFinished struct {
	Call   ToolCall
	Output string
	Failed bool
}

// Compacted: before calling the model the turn summarised the session's
// earlier turns (Compaction.Summary covers them); Compaction.Tokens is the
// input's size now.
type Compacted struct{ Compaction Compaction }

func (TextDelta) TurnEvent()      {}
func (Activity) TurnEvent()       {}
func (TitleChanged) TurnEvent()   {}
func (ContextChanged) TurnEvent() {}
func (FilesChanged) TurnEvent()   {}
func (ToolStarted) TurnEvent()    {}
func (ToolFinished) TurnEvent()   {}
func (Compacted) TurnEvent()      {}
