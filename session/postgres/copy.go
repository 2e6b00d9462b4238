package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// CopyReport is what Copy did.
type CopyReport struct {
	Copied   []session.Session `json:"copied"`   // sessions copied by this run
	Skipped  []session.Session `json:"skipped"`  // already in the database (an earlier copy), left as they are
	Messages int               `json:"messages"` // messages copied
	Files    int               `json:"files"`    // session files copied
}

// Source is a store Copy reads: the local SQLite store (sqlite.Store).
type Source interface {
	// AllSessions returns every session, oldest first.
	AllSessions(ctx context.Context) ([]session.Session, error)
	Messages(ctx context.Context, sessionID string) ([]session.Message, error)
	Context(ctx context.Context, sessionID string) (session.Context, error)
	AddedBy(ctx context.Context, sessionID, setName string) (map[string]string, error)
}

// Copy copies every session of a local store into a PostgreSQL
// store: its messages (times, statuses, usage, models and tool calls as
// they are; an answer left streaming becomes interrupted), its relevant
// context with who added each item, and the files of its folder (sources/,
// results/, scripts/, data/). Each session is one transaction, keyed by its
// id, so a second run copies nothing twice and an interrupted run is
// finished by the next. The copies belong to the role dst connects as,
// private.
func Copy(ctx context.Context, src Source, dst *Store, progress func(session.Session, bool)) (*CopyReport, error) {
	all, err := src.AllSessions(ctx)
	if err != nil {
		return nil, err
	}
	rep := &CopyReport{Copied: []session.Session{}, Skipped: []session.Session{}}
	for _, ss := range all {
		copied, msgs, files, err := copySession(ctx, src, dst, ss)
		if err != nil {
			return rep, fmt.Errorf("copying session %s (%q): %w", ss.ID, session.OneLineTitle(ss.Title), err)
		}
		if copied {
			rep.Copied = append(rep.Copied, ss)
			rep.Messages += msgs
			rep.Files += files
		} else {
			rep.Skipped = append(rep.Skipped, ss)
		}
		if progress != nil {
			progress(ss, copied)
		}
	}
	return rep, nil
}

type copiedFile struct {
	sub, name string
	content   []byte
	mod       int64
}

// copySession copies one session in one transaction; copied is false when
// the database has it already.
func copySession(ctx context.Context, src Source, dst *Store, ss session.Session) (copied bool, msgs, nfiles int, err error) {
	messages, err := src.Messages(ctx, ss.ID)
	if err != nil {
		return false, 0, 0, err
	}
	sets, err := src.Context(ctx, ss.ID)
	if err != nil {
		return false, 0, 0, err
	}
	origin := map[string]map[string]string{}
	for name := range sets {
		if origin[name], err = src.AddedBy(ctx, ss.ID, name); err != nil {
			return false, 0, 0, err
		}
	}
	var files []copiedFile
	for _, sub := range session.Subdirs {
		depth := session.MaxOutputDepth
		if sub == "sources" {
			depth = 0
		}
		dir := filepath.Join(ss.Folder, sub)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		var werr error
		session.WalkFiles(dir, "", depth, func(name string, fi fs.FileInfo) {
			if werr != nil || !fi.Mode().IsRegular() || fi.Size() > session.MaxFileSize {
				return // links are not followed out of the folder; oversized files cannot be stored
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil {
				werr = err
				return
			}
			files = append(files, copiedFile{sub, name, b, fi.ModTime().UnixMilli()})
		})
		if werr != nil {
			return false, 0, 0, werr
		}
	}
	metaJSON, err := json.Marshal(ss.Meta)
	if err != nil {
		return false, 0, 0, err
	}
	err = dst.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, title, title_source, created_at, updated_at, meta, folder)
			VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) ON CONFLICT (id) DO NOTHING`,
			ss.ID, ss.Title, ss.TitleSource, ss.CreatedAt.UnixMilli(), ss.UpdatedAt.UnixMilli(), string(metaJSON), filepath.Base(ss.Folder))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		copied = true
		// Messages get new ids here, in the same order; a summary's range
		// names the new ids of the messages it covers.
		newID := make(map[int64]int64, len(messages))
		for _, m := range messages {
			status := m.Status
			if status == session.StatusStreaming {
				status = session.StatusInterrupted
			}
			var toolCalls any
			if len(m.ToolCalls) > 0 {
				toolCalls = string(m.ToolCalls)
			}
			pt, ct, cached := session.UsageArgs(m.Usage)
			var sf, sl, sc, sq any
			if m.SummaryOf != nil {
				sc, sq = m.SummaryOf.Covered, m.SummaryOf.Questions
				first, ok1 := newID[m.SummaryOf.First]
				last, ok2 := newID[m.SummaryOf.Last]
				if !ok1 || !ok2 {
					return fmt.Errorf("summary %d covers messages %d–%d, which the session does not have", m.ID, m.SummaryOf.First, m.SummaryOf.Last)
				}
				sf, sl = first, last
			}
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model, summary_first, summary_last, summary_count, summary_questions, cached_tokens, files)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
				ss.ID, m.Role, m.Content, toolCalls, session.Nullable(m.ToolCallID), status, m.CreatedAt.UnixMilli(), pt, ct, session.Nullable(m.Model), sf, sl, sc, sq, cached, session.FilesArg(m.Files)).Scan(&id); err != nil {
				return err
			}
			newID[m.ID] = id
		}
		batch := &pgx.Batch{}
		for name, items := range sets {
			for i, it := range items {
				by := origin[name][it]
				if by == "" {
					by = session.AddedByUser
				}
				batch.Queue("INSERT INTO context_items (session_id, set_name, position, item, added_by) VALUES ($1, $2, $3, $4, $5)", ss.ID, name, i, it, by)
			}
		}
		for _, f := range files {
			batch.Queue("INSERT INTO files (session_id, subdir, name, content, updated_at) VALUES ($1, $2, $3, $4, $5)", ss.ID, f.sub, f.name, f.content, f.mod)
		}
		return tx.SendBatch(ctx, batch).Close()
	})
	return copied, len(messages), len(files), err
}
