package session

import (
	"context"
	"strings"
	"unicode"
)

// Hit is one search result. MessageID is 0 for a title match.
type Hit struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	MessageID int64  `json:"messageId"`
	Role      Role   `json:"role"`
	Snippet   string `json:"snippet"`
}

// ftsQuery turns plain words into an FTS5 query: each word a quoted phrase,
// the last one a prefix. Words without letters or digits are dropped, so no
// user input is FTS syntax.
func ftsQuery(q string) string {
	var parts []string
	for _, w := range strings.Fields(q) {
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue
		}
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	parts[len(parts)-1] += "*"
	return strings.Join(parts, " ")
}

// Search finds sessions by title and messages by content. Title hits come
// first, then messages by relevance.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	switch {
	case limit < 0:
		return nil, invalid("limit must not be negative")
	case limit == 0:
		limit = 20
	case limit > 200:
		limit = 200
	}
	match := ftsQuery(query)
	hits := []Hit{}
	if match == "" {
		return hits, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT s.id, s.title, highlight(titles_fts, 0, '«', '»')
		FROM titles_fts JOIN sessions s ON s.rowid = titles_fts.rowid
		WHERE titles_fts MATCH ? ORDER BY rank LIMIT ?`, match, limit)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.SessionID, &h.Title, &h.Snippet); err != nil {
			rows.Close()
			return nil, err
		}
		hits = append(hits, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(hits) >= limit {
		return hits, nil
	}
	rows, err = s.db.QueryContext(ctx, `SELECT m.session_id, s.title, m.id, m.role, snippet(messages_fts, 0, '«', '»', '…', 16)
		FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
		WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?`, match, limit-len(hits))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.SessionID, &h.Title, &h.MessageID, &h.Role, &h.Snippet); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
