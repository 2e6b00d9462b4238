package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// FileEdit is one change the model's tools made to one of the user's
// files in a turn (edit_file, create_file), kept so the turn can be undone
// and redone. It holds only the changed span, both ways: the file's text
// before was Before[:Start] + Removed + ..., and after it Inserted stood in
// Removed's place. The hashes of the whole text before and after tell
// whether the file is still as the change left it (undo) or as it found
// it (redo); a file the user changed since is not touched.
type FileEdit struct {
	ID        int64
	SessionID string
	// Turn is the id of the user message whose turn made the change.
	Turn int64
	// Path is the file, absolute.
	Path string
	// Created: the change made the file (undo removes it).
	Created bool
	// Start is the byte offset where the texts differ; Removed was there
	// before, Inserted after.
	Start             int
	Removed, Inserted string
	// BeforeHash and AfterHash are TextHash of the whole text before and
	// after the change.
	BeforeHash, AfterHash string
	// OnDisk: the change was written to the file on disk, not to an
	// editor's buffer.
	OnDisk bool
	// Undone: the change was undone (and not redone since); ToggledAt is
	// when it was last undone or redone (zero: never), so redo takes back
	// the turn undone last.
	Undone    bool
	ToggledAt time.Time
	CreatedAt time.Time
}

// TextHash is the hash FileEdit keeps of a file's whole text, given as
// the parts it is made of (an edit's text after it is hashed without being
// built), read through a small buffer (never a copy of a 10 MB text).
func TextHash(parts ...string) string {
	h := sha256.New()
	var buf [32 << 10]byte
	for _, p := range parts {
		for len(p) > 0 {
			n := copy(buf[:], p)
			h.Write(buf[:n])
			p = p[n:]
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MaxEditBytes bounds what one FileEdit keeps (Removed and Inserted
// together); a larger change is not recorded and cannot be undone.
const MaxEditBytes = 64 << 20

// EditLog is a store that keeps the changes the model's tools made to
// the user's files, per session, for undo and redo.
//
// RecordEdit stores c (its ID and CreatedAt set). Edits lists a
// session's changes, oldest first. SetUndone marks changes of the session
// undone or not (their ToggledAt now) and, in the same transaction, adds
// note to the session's Meta.EditNotes (what the model is told on its next
// turn; "" adds none); ids not of the session are an error and nothing
// changes. TakeEditNotes removes the first n of the session's notes (the
// ones a turn told the model). The changes go with their session when it
// is deleted.
type EditLog interface {
	RecordEdit(ctx context.Context, c *FileEdit) error
	Edits(ctx context.Context, sessionID string) ([]FileEdit, error)
	SetUndone(ctx context.Context, sessionID string, ids []int64, undone bool, note string) error
	TakeEditNotes(ctx context.Context, sessionID string, n int) error
}

// Distinct is ids without repeats, in their order.
func Distinct(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// CheckEdit checks a change before it is stored.
func CheckEdit(c *FileEdit) error {
	switch {
	case c.SessionID == "":
		return Invalidf("a change needs its session")
	case c.Path == "":
		return Invalidf("a change needs its file")
	case c.Start < 0:
		return Invalidf("a change's start is negative")
	case len(c.Removed)+len(c.Inserted) > MaxEditBytes:
		return Invalidf("a change of %d bytes is over the %d kept for undo", len(c.Removed)+len(c.Inserted), MaxEditBytes)
	}
	return nil
}
