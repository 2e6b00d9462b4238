package service

import "github.com/ctxls/ctxls/turn"

// A running turn and its events, as the doors read them. Package turn is
// the one relay from the engine to a door (the service sees each event on
// the way, turn.Request.Observe); these are its types under the names the
// doors use, so a door imports the service alone.
type (
	// Turn is a running turn: read Events to its end (or defer Abandon).
	// Its events carry the answer (TextDelta, Activity, the tool events,
	// TokenUsage, Compacted) and end with exactly one Done, Cancelled or
	// Failed; what the turn changes in the session (title, context, files)
	// is published as the service's Updates instead.
	Turn  = turn.Turn
	Event = turn.Event

	TextDelta    = turn.TextDelta
	Activity     = turn.Activity
	ToolCall     = turn.ToolCall
	ToolStarted  = turn.ToolStarted
	ToolAllowed  = turn.ToolAllowed
	ToolProgress = turn.ToolProgress
	ToolFinished = turn.ToolFinished
	EditProposed = turn.EditProposed
	PlanChanged  = turn.PlanChanged
	TitleChanged = turn.TitleChanged
	Compacted    = turn.Compacted
	TokenUsage   = turn.TokenUsage
	Done         = turn.Done
	Cancelled    = turn.Cancelled
	Failed       = turn.Failed
)
