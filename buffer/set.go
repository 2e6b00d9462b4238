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

// Limits of a Set.
const (
	// MaxOpenBytes bounds the text a Set holds for open documents, each
	// counted with its URI, path and docOverhead bytes. A didOpen or edit that
	// would go over it is refused (see OverBudgetError): the document stays
	// listed as open, without text, until the editor closes it.
	MaxOpenBytes = 128 << 20
	// MaxURIBytes bounds a document's URI; a longer one is refused.
	MaxURIBytes = 16 << 10
	// maxLanguageID bounds a stored languageId (a longer one is cut).
	maxLanguageID = 64
	// docOverhead is what an open document is counted for besides its text:
	// the entry, the chunk list, allocation slack.
	docOverhead = 512
)

// ErrNotHeld reports an edit to an open document whose text is not held
// (it was refused by the budget).
var ErrNotHeld = errors.New("document text not held")

// OverBudgetError reports a document whose text is not held because the
// open documents would exceed the budget. First is set on the first refusal
// since the set was last within budget, so the user can be told once.
type OverBudgetError struct {
	URI   string
	Size  int // the document's text
	Held  int // what the set held, this document left out
	Limit int
	First bool
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("%s (%d bytes) not held: open documents would take more than the limit of %d MiB",
		truncateURI(e.URI), e.Size, e.Limit>>20)
}

func truncateURI(u string) string {
	if len(u) > 200 {
		return u[:200] + "…"
	}
	return u
}

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
	doc     *Doc // nil once closed, or when the budget refused the text
}

// cost is what an open document counts against the budget.
func cost(uri, path string, size int) int { return size + len(uri) + len(path) + docOverhead }

// Set is the daemon's view of the editor's files: open documents with their
// text, and recently closed ones as candidates. It is safe for concurrent
// use.
type Set struct {
	maxRecent int
	maxBytes  int
	now       func() time.Time

	// mu guards the fields below.
	mu      sync.Mutex
	entries map[string]*entry // by URI
	active  string            // URI of the focused file
	held    int               // cost of the open documents whose text is held
	refused bool              // a document was refused since held was last within budget
}

// NewSet returns an empty set that remembers up to maxRecent closed files
// and holds up to MaxOpenBytes of open documents.
func NewSet(maxRecent int) *Set {
	return &Set{maxRecent: maxRecent, maxBytes: MaxOpenBytes, now: time.Now, entries: make(map[string]*entry)}
}

// Held returns the bytes the open documents are counted for and the limit.
func (s *Set) Held() (held, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.maxBytes
}

// Open records a didOpen. Over the budget, the document is listed as open
// without its text and an *OverBudgetError is returned; a URI over
// MaxURIBytes is refused.
func (s *Set) Open(uri, path, languageID string, version int32, text string) error {
	if len(uri) > MaxURIBytes {
		return fmt.Errorf("document URI of %d bytes refused: the limit is %d", len(uri), MaxURIBytes)
	}
	if len(languageID) > maxLanguageID {
		languageID = languageID[:maxLanguageID]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(s.entries[uri])
	e := &entry{
		Candidate: Candidate{URI: uri, Path: path, LanguageID: languageID, Open: true, LastEditedAt: s.now().UTC(), Size: len(text)},
		version:   version,
	}
	s.entries[uri] = e
	if c := cost(uri, path, len(text)); s.held+c > s.maxBytes {
		return s.refuseLocked(e, len(text))
	}
	e.doc = NewDoc(text)
	s.held += cost(uri, path, len(text))
	return nil
}

// dropLocked forgets the text of e (nil allowed) and its cost.
func (s *Set) dropLocked(e *entry) {
	if e == nil || e.doc == nil {
		return
	}
	s.held -= cost(e.URI, e.Path, e.doc.Len())
	e.doc = nil
	if s.held <= s.maxBytes*9/10 {
		s.refused = false // well within budget again: tell the user next time
	}
}

func (s *Set) refuseLocked(e *entry, size int) error {
	err := &OverBudgetError{URI: e.URI, Size: size, Held: s.held, Limit: s.maxBytes, First: !s.refused}
	s.refused = true
	return err
}

// Change applies a didChange's changes in order. If one fails, the earlier
// ones stay applied (as in the editor) and the error is returned. If the
// document grows past the budget, its text is dropped (ctxls never holds a
// text that differs from the editor's) and an *OverBudgetError returned;
// later edits to it fail with ErrNotHeld until the editor opens it again.
func (s *Set) Change(uri string, version int32, changes []Change, enc Encoding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	if e == nil || !e.Open {
		return fmt.Errorf("%w: %s", ErrNotOpen, truncateURI(uri))
	}
	if e.doc == nil {
		return fmt.Errorf("%w: %s", ErrNotHeld, truncateURI(uri))
	}
	before := e.doc.Len()
	var err error
	for i, c := range changes {
		if aerr := e.doc.Apply(c.Range, c.Text, enc); aerr != nil {
			err = fmt.Errorf("%s: change %d: %w", truncateURI(uri), i, aerr)
			break // the earlier changes stay applied
		}
	}
	after := e.doc.Len()
	s.held += after - before
	e.Size = after
	if err == nil {
		e.version = version
		e.Dirty = true
		e.LastEditedAt = s.now().UTC()
	}
	if s.held > s.maxBytes {
		s.dropLocked(e)
		return s.refuseLocked(e, after)
	}
	return err
}

// Close drops a document's text and keeps it as a recent candidate.
func (s *Set) Close(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	if e == nil {
		return
	}
	s.dropLocked(e)
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

// Focus records the active file; an unknown one becomes a candidate. A URI
// over MaxURIBytes is refused.
func (s *Set) Focus(uri, path string) error {
	if len(uri) > MaxURIBytes {
		return fmt.Errorf("document URI of %d bytes refused: the limit is %d", len(uri), MaxURIBytes)
	}
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
	return nil
}

// pruneLocked forgets the oldest closed files beyond maxRecent.
func (s *Set) pruneLocked() {
	var closed []*entry
	for _, e := range s.entries {
		if !e.Open {
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

// IsOpen reports whether the editor has the document open (its text may
// still not be held, see Open).
func (s *Set) IsOpen(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uri]
	return e != nil && e.Open
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

// EachText calls fn with the path and text of each open document whose
// text is held, until fn returns false. The texts are read under the lock
// and fn is called after it is released.
func (s *Set) EachText(fn func(path, text string) bool) {
	type doc struct{ path, text string }
	s.mu.Lock()
	docs := make([]doc, 0, len(s.entries))
	for _, e := range s.entries {
		if e.doc != nil && e.Path != "" {
			docs = append(docs, doc{e.Path, e.doc.String()})
		}
	}
	s.mu.Unlock()
	for _, d := range docs {
		if !fn(d.path, d.text) {
			return
		}
	}
}

// Document returns the open document at a filesystem path: its URI, text
// and version.
func (s *Set) Document(path string) (uri, text string, version int32, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.doc != nil && e.Path == path && path != "" {
			return e.URI, e.doc.String(), e.version, true
		}
	}
	return "", "", 0, false
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
