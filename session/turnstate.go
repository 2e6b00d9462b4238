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
	// among them).
	Summary *Message
	History []Message
}
