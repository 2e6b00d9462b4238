package session

import (
	"context"
	"fmt"
)

// Rewinder is a store that can take a session back to before one of its
// questions, for asking it again (the same text: regenerate, retry) or
// asking another in its place (edit and resend).
//
// Rewind removes the user message fromID of session sessionID and every
// message after it (answers, tool results, summaries made since: a summary
// covers only messages before its own id, so what stays is consistent)
// and returns how many it removed. Message ids are never reused, so a
// model view or a kept rendering that held a removed message sees it gone
// (HistoryMark, HistoryCache) and reads the session again. The caller
// holds the session's turn lock: a turn still streaming is refused.
type Rewinder interface {
	Rewind(ctx context.Context, sessionID string, fromID int64) (removed int, err error)
}

// CheckRewind checks what Rewind is given against what the store read:
// role and status of message fromID ("" role: not in the session) and
// whether an answer of the session is still streaming.
func CheckRewind(sessionID string, fromID int64, role Role, streaming bool) error {
	switch {
	case role == "":
		return fmt.Errorf("message %d of session %s: %w", fromID, sessionID, ErrNotFound)
	case role != RoleUser:
		return Invalidf("message %d is not a question (it is a %s message); ask again from a question", fromID, role)
	case streaming:
		return Invalidf("an answer of this session is still streaming; stop it first")
	}
	return nil
}
