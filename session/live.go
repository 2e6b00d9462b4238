package session

import (
	"errors"
)

// Change is a change another process made to a session, as Watch reports
// it.
type Change struct {
	SessionID string
	// Kinds of what changed, each once: "sessions" (title, visibility,
	// model, activity), "messages", "context_items", "files".
	Kinds []string
	// Deleted: the session is gone (or no longer visible to this role).
	Deleted bool
	// Files: for a "files" change, what this machine's mirror fetched or
	// removed to follow it.
	Files []FileChange
	// Reconnected: the connection was lost and is back; changes made
	// meanwhile were not seen, so what is shown should be read again.
	Reconnected bool
}

// ErrTurnLockLost: the connection that held a turn's lock broke, so
// another daemon may start a turn in the session; the turn must end.
var ErrTurnLockLost = errors.New("the connection holding the turn's lock to the session database was lost")

// ErrTurnElsewhere: a turn of the session is running in another process.
var ErrTurnElsewhere = errors.New("a turn is already running in this session on another machine or editor; wait for it or cancel it there")

// FileChange is a file the mirror fetched or removed.
type FileChange struct {
	Subdir  string
	Name    string
	Size    int64
	Removed bool
}
