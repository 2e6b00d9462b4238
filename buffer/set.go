package buffer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrNotOpen reports an edit to a document the editor never opened.
var ErrNotOpen = errors.New("document is not open")

// Change is one content change of a didChange notification.
type Change struct {
	Range *Range // nil replaces the whole text
	Text  string
}

// Candidate is an open or recently edited file.
type Candidate struct {
	URI          string    `json:"uri"`
	Path         string    `json:"path"`
	LanguageID   string    `json:"languageId"`
	Open         bool      `json:"open"`
	Dirty        bool      `json:"dirty"`
	Active       bool      `json:"active"`
	LastEditedAt time.Time `json:"lastEditedAt"`
	Size         int       `json:"size"`
}

type entry struct {
	Candidate
	version int32
	doc     *Doc // nil once closed
}

// Set is the daemon's view of the editor's files: open documents with their
// text, and recently closed ones as candidates. It is safe for concurrent
// use.
type Set struct {
	maxRecent int
	now       func() time.Time

	// mu guards the fields below.
	mu      sync.Mutex
	entries map[string]*entry // by URI
	active  string            // URI of the focused file
}

// NewSet returns an empty set that remembers up to maxRecent closed files.
func NewSet(maxRecent int) *Set {
	return &Set{maxRecent: maxRecent, now: time.Now, entries: make(map[string]*entry)}
}

// Open records a didOpen.
func (s *Set) Open(uri, path, languageID string, version int32, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[uri] = &entry{
		Candidate: Candidate{URI: uri, Path: path, LanguageID: languageID, Open: true, LastEditedAt: s.now().UTC(), Size: len(text)},
		version:   version,
		doc:       NewDoc(text),
	}
}

// Change applies a didChange's changes in order. If one fails, the earlier
// ones stay applied (as in the editor) and the error is returned.
func (s *Set) Change(uri string, version int32, changes []Change, enc Encoding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	if e == nil || e.doc == nil {
		return fmt.Errorf("%w: %s", ErrNotOpen, uri)
	}
	for i, c := range changes {
		if err := e.doc.Apply(c.Range, c.Text, enc); err != nil {
			return fmt.Errorf("%s: change %d: %w", uri, i, err)
		}
	}
	e.version = version
	e.Dirty = true
	e.Size = e.doc.Len()
	e.LastEditedAt = s.now().UTC()
	return nil
}

// Close drops a document's text and keeps it as a recent candidate.
func (s *Set) Close(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	if e == nil {
		return
	}
	e.doc = nil
	e.Open = false
	e.Dirty = false
	s.pruneLocked()
}

// Save marks a document clean.
func (s *Set) Save(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[uri]; e != nil {
		e.Dirty = false
		e.LastEditedAt = s.now().UTC()
	}
}

// Focus records the active file; an unknown one becomes a candidate.
func (s *Set) Focus(uri, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	if e == nil {
		e = &entry{Candidate: Candidate{URI: uri, Path: path}}
		s.entries[uri] = e
	}
	e.LastEditedAt = s.now().UTC()
	s.active = uri
	s.pruneLocked()
}

// pruneLocked forgets the oldest closed files beyond maxRecent.
func (s *Set) pruneLocked() {
	var closed []*entry
	for _, e := range s.entries {
		if e.doc == nil {
			closed = append(closed, e)
		}
	}
	if len(closed) <= s.maxRecent {
		return
	}
	slices.SortFunc(closed, func(a, b *entry) int { return a.LastEditedAt.Compare(b.LastEditedAt) })
	for _, e := range closed[:len(closed)-s.maxRecent] {
		delete(s.entries, e.URI)
	}
}

// Text returns an open document's text and version.
func (s *Set) Text(uri string) (string, int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	if e == nil || e.doc == nil {
		return "", 0, false
	}
	return e.doc.String(), e.version, true
}

// TextByPath returns the text of the open document at a filesystem path.
func (s *Set) TextByPath(path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.doc != nil && e.Path == path && path != "" {
			return e.doc.String(), true
		}
	}
	return "", false
}

// Candidates lists open and recently edited files, most recent first.
func (s *Set) Candidates() []Candidate {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Candidate, 0, len(s.entries))
	for _, e := range s.entries {
		c := e.Candidate
		c.Active = e.URI == s.active
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		if c := b.LastEditedAt.Compare(a.LastEditedAt); c != 0 {
			return c
		}
		return strings.Compare(a.URI, b.URI)
	})
	return out
}
