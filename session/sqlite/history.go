package sqlite

import (
	"context"
)

// historyLater marks a session's history.md for rewriting (see
// HistoryWriter.later).
func (s *Store) historyLater(ctx context.Context, id string) error { return s.history.Later(ctx, id) }

// FlushHistory writes every pending history.md now and returns the first
// failure of a background write since the last call, if any.
func (s *Store) FlushHistory() error { return s.history.Flush() }
