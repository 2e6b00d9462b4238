package chat

import "github.com/ctxls/ctxls/session"

// Event is one thing a turn reports, declared once here: the engine emits
// them (Events.Emit), package turn streams them to the service with its own
// Usage and final events, and the doors adapt them.
type Event interface{ TurnEvent() }

// TextDelta is the next piece of the answer.
type TextDelta struct{ Text string }

// Activity says what the turn is doing (retrying, reading a file);
// Warning: something the user should see (an MCP server that cannot be
// used).
type Activity struct {
	Message string
	Warning bool
}

// TitleChanged: the session has a new title (the instant one, or the
// model's, which may come after the turn ended).
type TitleChanged struct{ Session *session.Session }

// ContextChanged: the model changed a relevant-context set.
type ContextChanged struct {
	SessionID string
	Change    *session.ContextChange
}

// PlanChanged: the model replaced the session's plan (Plan as stored;
// empty: cleared).
type PlanChanged struct {
	SessionID string
	Plan      []session.PlanItem
}

// FilesChanged: a file in the session folder was written by the model
// ("model") or removed (Size 0).
type FilesChanged struct {
	SessionID, Subdir, Name string
	Size                    int64
	By                      string
}

// ToolStarted and ToolFinished bracket each tool call of the model's.
// Pending: the call waits for the user's permission (a toolbox's tool);
// ToolAllowed follows when it may run.
type ToolStarted struct {
	Call    ToolCall
	Pending bool
}

// ToolAllowed: a pending call may run (the user allowed it, or allowed it
// before).
type ToolAllowed struct{ Call ToolCall }

// ToolProgress: the server reported progress of a running call.
type ToolProgress struct {
	Call    ToolCall
	Message string
}

// EditProposed: an edit tool's call proposes this change to a file (the
// whole text before and after, and the unified diff); it is reviewed and
// applied next. NewText builds the text after the edit when called (once
// per edit): a door that shows only the diff does not copy a large file.
type EditProposed struct {
	Call          ToolCall
	Path, OldText string
	NewText       func() string
	Create        bool
	Diff          string
}

// ToolFinished: a tool call ended; Output is what the model got back.
// Failed: the tool failed or refused (Output says why); Declined: the user
// did not allow it; Cancelled: the turn was cancelled while it waited or
// ran.
type ToolFinished struct {
	Call ToolCall
	ToolResult
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
func (PlanChanged) TurnEvent()    {}
func (ToolStarted) TurnEvent()    {}
func (ToolAllowed) TurnEvent()    {}
func (ToolProgress) TurnEvent()   {}
func (ToolFinished) TurnEvent()   {}
func (EditProposed) TurnEvent()   {}
func (Compacted) TurnEvent()      {}
