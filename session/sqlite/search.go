package sqlite

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/ctxls/ctxls/session"
)

// ftsQuery turns plain words into an FTS5 query: each word a quoted phrase,
// the last one a prefix. Words without letters or digits are dropped, so no
// user input is FTS syntax.
func ftsQuery(q string) string {
	parts := ftsPhrases(q)
	if len(parts) == 0 {
		return ""
	}
	parts[len(parts)-1] += "*"
	return strings.Join(parts, " ")
}

// ftsPhrases returns the words of q that have a letter or a digit, each as a
// quoted FTS5 phrase.
func ftsPhrases(q string) []string {
	var parts []string
	for _, w := range strings.Fields(q) {
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue
		}
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return parts
}

// maxExpansions is how many terms a trailing prefix is spelled out into.
const maxExpansions = 16

// messagesMatch returns the FTS5 query for messages_fts, with the trailing
// prefix spelled out as the terms it matches ("deploy" AND ("canary" OR
// "canaryd")) when it is plain ASCII letters and digits, at least 4 long
// (shorter ones have prefix indexes) and matches at most maxExpansions terms.
// FTS5 answers a prefix without a prefix index by merging the doclists of its
// terms into a new one, for every cursor: the window query, bm25's document
// counts and the snippet query each paid it (about 4 ms for a word in 30% of
// 100,000 messages), while the term lookup costs half of one. Each spelled-out
// term is then its own bm25 phrase, weighted by its own rarity. none reports
// that the prefix matches no term, so no message can match.
func (s *Store) messagesMatch(ctx context.Context, query string) (match string, none bool, err error) {
	parts := ftsPhrases(query)
	if len(parts) == 0 {
		return "", true, nil
	}
	last := strings.Fields(query)
	prefix := strings.ToLower(last[len(last)-1])
	if len(prefix) < 4 || strings.ContainsFunc(prefix, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
		return ftsQuery(query), false, nil
	}
	// ASCII letters and digits are one unicode61 token, folded to lower case
	// and nothing else, so the index stores it as prefix does.
	upper := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
	rows, err := s.db.QueryContext(ctx, "SELECT term FROM messages_vocab WHERE term >= ? AND term < ? LIMIT ?", prefix, upper, maxExpansions+1)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	var terms []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return "", false, err
		}
		terms = append(terms, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
	}
	if err := rows.Err(); err != nil {
		return "", false, err
	}
	switch {
	case len(terms) == 0:
		return "", true, nil
	case len(terms) > maxExpansions:
		return ftsQuery(query), false, nil
	}
	parts[len(parts)-1] = "(" + strings.Join(terms, " OR ") + ")"
	return strings.Join(parts, " AND "), false, nil
}

// Search finds sessions by title and messages by content; all words must
// match, the last one as a prefix. Title hits come first (by bm25), then
// messages by bm25 relevance, the newer first among equals. Messages are
// ranked among the searchWindow most recent matches only. Snippets mark the
// matched words with «».
func (s *Store) Search(ctx context.Context, query string, limit int) ([]session.Hit, error) {
	return s.search(ctx, query, limit, session.SearchWindow)
}

func (s *Store) search(ctx context.Context, query string, limit, window int) ([]session.Hit, error) {
	limit, err := session.PageLimit(limit, 20, 200)
	if err != nil {
		return nil, err
	}
	match := ftsQuery(query)
	hits := []session.Hit{}
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
		var h session.Hit
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
	match, none, err := s.messagesMatch(ctx, query)
	if err != nil || none {
		return hits, err
	}
	msgs, err := s.searchMessages(ctx, match, limit-len(hits), window)
	return append(hits, msgs...), err
}

// searchMessages ranks the window most recent messages matching match and
// returns the best limit of them. It takes two statements because an FTS5
// query that ranks with ORDER BY rank scores every match, and snippet() can
// only be computed in a query on the FTS table: the first scores the window
// and keeps the top rowids, the second computes snippets and joins for those
// rowids alone, scanning the matches between the lowest and the highest.
func (s *Store) searchMessages(ctx context.Context, match string, limit, window int) ([]session.Hit, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM (
			SELECT rowid AS id, bm25(messages_fts) AS score FROM messages_fts
			WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?)
		ORDER BY score, id DESC LIMIT ?`, match, window, limit)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	// "+f.rowid" keeps the id list from being offered to FTS5 as rowid =
	// constraints: each would run the whole query again (a prefix term
	// re-merges its doclists every time).
	rows, err = s.db.QueryContext(ctx, `SELECT f.rowid, m.session_id, s.title, m.role, snippet(messages_fts, 0, '«', '»', '…', 16)
		FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id
		WHERE messages_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND +f.rowid IN (SELECT value FROM json_each(?))`,
		match, lo, hi, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]session.Hit, len(ids))
	for rows.Next() {
		var h session.Hit
		if err := rows.Scan(&h.MessageID, &h.SessionID, &h.Title, &h.Role, &h.Snippet); err != nil {
			return nil, err
		}
		byID[h.MessageID] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	hits := make([]session.Hit, 0, len(ids))
	for _, id := range ids {
		// A message deleted between the two statements is left out.
		if h, ok := byID[id]; ok {
			hits = append(hits, h)
		}
	}
	return hits, nil
}
