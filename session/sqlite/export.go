package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"

	"github.com/ctxls/ctxls/session"
)

// writeHistory rewrites a session's history.md. It runs in a write
// transaction of its own (see inFolder), so history.md writers take turns
// and the last one renders the latest state.
func (s *Store) writeHistory(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return s.writeHistoryTx(ctx, tx, id) })
}

// writeHistoryTx renders history.md from what tx sees into the folder tx
// names; tx must be a write transaction.
func (s *Store) writeHistoryTx(ctx context.Context, tx *sql.Tx, id string) error {
	ss, _, err := s.get(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := s.findFolder(ctx, tx, filepath.Base(ss.Folder)); err != nil {
		return err
	}
	sets, err := loadContext(ctx, tx, id)
	if err != nil {
		return err
	}
	text, err := s.history.Cache.Render(ss, sets, func(after int64) ([]session.Message, error) {
		return queryMessages(ctx, tx, "session_id = ? AND id > ? ORDER BY id", id, after)
	})
	if err != nil {
		return err
	}
	return session.WriteFileAtomicFrom(filepath.Join(ss.Folder, "history.md"), text)
}

// Export writes the session as "markdown" or "json" into its folder and
// returns the file's path and content.
func (s *Store) Export(ctx context.Context, id, format string) (string, string, error) {
	name, content, err := session.ExportOf(ctx, s, id, format)
	if err != nil {
		return "", "", err
	}
	var path string
	err = s.inFolder(ctx, id, func(_ *sql.Tx, folder string) error { // the folder may have moved meanwhile
		path = filepath.Join(folder, name)
		return session.WriteFileAtomic(path, []byte(content))
	})
	if err != nil {
		return "", "", err
	}
	return path, content, nil
}
