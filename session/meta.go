package session

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Meta fields are written one at a time, each with its own JSON path inside
// one statement, so writers of different fields never overwrite each other
// (no read-modify-write of the whole object).

// MaxModel is the longest model name a session accepts, in bytes.
const MaxModel = 200

// ValidModel checks a model name, trimmed.
func ValidModel(model string) (string, error) {
	model = strings.TrimSpace(model)
	switch {
	case len(model) > MaxModel:
		return "", Invalidf("model is %d bytes long; the limit is %d", len(model), MaxModel)
	case !utf8.ValidString(model):
		return "", Invalidf("model is not valid UTF-8")
	case HasControl(model) || strings.ContainsAny(model, " \t"):
		return "", Invalidf("model %q must not contain spaces or control characters", Truncate(model, 60))
	}
	return model, nil
}

// ValidToolPermission checks a tool's name and a decision for it.
func ValidToolPermission(tool, decision string) error {
	switch {
	case tool == "" || len(tool) > 128 || HasControl(tool):
		return Invalidf("a tool's name is 1 to 128 characters without control characters")
	case decision != "" && decision != ToolAllow && decision != ToolDeny:
		return Invalidf("a tool decision is %q, %q or empty, got %q", ToolAllow, ToolDeny, Truncate(decision, 20))
	}
	return nil
}

// ValidReviewMode checks a review mode.
func ValidReviewMode(mode string) error {
	switch mode {
	case ReviewAsk, ReviewAuto, ReviewOff:
		return nil
	}
	return Invalidf("a review mode is %q, %q or %q, got %q", ReviewAsk, ReviewAuto, ReviewOff, Truncate(mode, 20))
}

// MinIDPrefix is the shortest id prefix ResolveID accepts.
const MinIDPrefix = 4

// AmbiguousError is ResolveID's answer to a prefix of several sessions' ids.
type AmbiguousError struct {
	Prefix     string
	Candidates []Candidate // the most recently active first
	More       bool        // more sessions match than listed
}

// Candidate is one session an ambiguous prefix matches.
type Candidate struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session id prefix %q is ambiguous; it matches:", e.Prefix)
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s  %s", c.ID, c.Title)
	}
	if e.More {
		b.WriteString("\n  …and more")
	}
	b.WriteString("\ngive more characters of the id")
	return b.String()
}

// Unwrap makes an AmbiguousError an ErrInvalid.
func (e *AmbiguousError) Unwrap() error { return ErrInvalid }

// ShownCandidates is how many sessions an ambiguous prefix lists.
const ShownCandidates = 5

// CheckIDPrefix lowers and trims an id prefix, refusing a short one.
func CheckIDPrefix(prefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(prefix))
	if utf8.RuneCountInString(p) < MinIDPrefix {
		return "", Invalidf("session id %q is too short: give the id or at least its first %d characters", Truncate(prefix, 80), MinIDPrefix)
	}
	return p, nil
}

// ResolvedID picks the answer from the sessions a prefix p matched, an exact
// match first, at most shownCandidates+1 of them.
func ResolvedID(prefix, p string, found []Candidate) (string, error) {
	switch {
	case len(found) == 0:
		return "", fmt.Errorf("session %q: %w (no session id starts with it)", Truncate(prefix, 80), ErrNotFound)
	case len(found) == 1 || found[0].ID == p:
		return found[0].ID, nil
	}
	amb := &AmbiguousError{Prefix: p, Candidates: found}
	if len(found) > ShownCandidates {
		amb.Candidates, amb.More = found[:ShownCandidates], true
	}
	return "", amb
}
