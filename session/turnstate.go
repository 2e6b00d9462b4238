package session

// TurnState is what a turn reads of its session before it calls the
// model, besides the message: Store.TurnState begins the turn and reads it
// at once (on PostgreSQL in one round trip, where it was seven).
type TurnState struct {
	// Session is the session, its folder brought up to date.
	Session *Session
	// Context holds every set of the session.
	Context Context
	// AddedBy says who added each item of the files set (AddedByUser or
	// AddedByModel).
	AddedBy map[string]string
	// Sources are the names in the folder's sources/, sorted (ListFiles);
	// when they could not be listed, SourcesErr says why and the turn goes
	// on without them.
	Sources    []string
	SourcesErr error
	// Summary and History are ModelHistory's: the newest summary (nil when
	// none) and the messages after what it covers (the turn's message
	// among them unless Stored is set).
	Summary *Message
	History []Message
	// Stored, when not nil, waits until the turn's message is stored (a
	// store may write it in the background, so the turn's request goes out
	// meanwhile) and returns the error; the message's ID and CreatedAt are
	// set once it returned nil. History and Session were then read before
	// the message was stored: the message is not in History, nor counted
	// in Session.
	Stored func() error
	// Since is the mark's Through when the store honoured a HistoryMark:
	// History then holds only the messages after it (the caller holds the
	// rest). 0: History is whole.
	Since int64
}

// HistoryMark is what a caller holds of a session's model history from an
// earlier TurnState, so the next reads only what is new: the newest
// summary's id then (0: none), and Through, a message id such that the
// caller holds every message of the history after that summary up to it,
// all settled (none streaming: a settled message no longer changes). When
// the newest summary is still Summary, TurnState reads only the messages
// after Through and sets TurnState.Since; otherwise (a compaction since,
// here or elsewhere) it reads the whole history.
type HistoryMark struct {
	Summary, Through int64
}

// SummaryID is the id of a newest summary, 0 for none.
func SummaryID(summary *Message) int64 {
	if summary == nil {
		return 0
	}
	return summary.ID
}
