package session

// Hit is one search result. MessageID is 0 for a title match.
type Hit struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	MessageID int64  `json:"messageId"`
	Role      Role   `json:"role"`
	Snippet   string `json:"snippet"`
}

// SearchWindow is how many of the most recent matching messages bm25 ranks.
// bm25 costs a few microseconds a match (it reads each match's length and
// positions), so ranking every match of a broad query took 50-60 ms of CPU
// with 10% of 100,000 messages matching and 110 ms with 30%; with a window
// of 2,000 such a search takes about 20 ms. The trade-off: when more
// messages match, older ones are not considered, however relevant. A query
// with fewer matches ranks them all.
const SearchWindow = 2000
