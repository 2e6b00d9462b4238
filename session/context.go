package session

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Context is a session's relevant context: set name → items, in order.
type Context map[string][]string

// Mode is how ctxls.context.set combines items with a set.
type Mode string

// Modes.
const (
	ModeReplace Mode = "replace" // the default
	ModeMerge   Mode = "merge"   // union without duplicates, order kept
	ModeRemove  Mode = "remove"  // the set less these items
)

// Limits on relevant context.
const (
	MaxItemsPerSet = 10
	MaxItemsTotal  = 50
	maxItemBytes   = 4096
)

// KnownSets are the set names with a meaning; others are accepted with a
// warning.
var KnownSets = []string{SetFiles, "applet", "endpoints", "ports"}

// SetFiles is the set of relevant files, whose items are absolute paths.
const SetFiles = "files"

// ContextChange is the result of SetContext.
type ContextChange struct {
	SetName  string   `json:"setName"`
	Items    []string `json:"items"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Warnings []string `json:"warnings"`
	Context  Context  `json:"context"`
}

func validSetName(name string) error {
	if name == "" || len(name) > 64 {
		return Invalidf("set name must be 1 to 64 characters, got %d", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return Invalidf("set name %q may contain only letters, digits, '_', '.' and '-'", Truncate(name, 64))
		}
	}
	return nil
}

// cleanItems trims items, checks them and drops duplicates, keeping order.
func cleanItems(items []string) ([]string, error) {
	out := make([]string, 0, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		switch {
		case it == "":
			return nil, Invalidf("item %d is empty", i+1)
		case len(it) > maxItemBytes:
			return nil, Invalidf("item %d is %d bytes long; the limit is %d", i+1, len(it), maxItemBytes)
		case strings.ContainsRune(it, 0):
			return nil, Invalidf("item %d contains a NUL character", i+1)
		}
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out, nil
}

// Who adds context items.
const (
	AddedByUser  = "user"
	AddedByModel = "model"
)

// NormalizeItems normalises the items of the files set (see
// NormalizeFileItem); other sets' items are returned as they are.
func NormalizeItems(setName string, items, roots []string) ([]string, error) {
	if setName != SetFiles {
		return items, nil
	}
	norm := make([]string, 0, len(items))
	for _, it := range items {
		p, err := NormalizeFileItem(it, roots)
		if err != nil {
			return nil, err
		}
		norm = append(norm, p)
	}
	return norm, nil
}

// ContextRequest is one checked change of a set, the same for every store.
type ContextRequest struct {
	setName  string
	clean    []string
	mode     Mode
	by       string
	warnings []string
}

// NewContextRequest checks a change before any store is read.
func NewContextRequest(setName string, items []string, mode Mode, by string) (*ContextRequest, error) {
	if err := validSetName(setName); err != nil {
		return nil, err
	}
	if mode == "" {
		mode = ModeReplace
	}
	if mode != ModeReplace && mode != ModeMerge && mode != ModeRemove {
		return nil, Invalidf("mode must be \"replace\", \"merge\" or \"remove\", got %q", Truncate(string(mode), 40))
	}
	clean, err := cleanItems(items)
	if err != nil {
		return nil, err
	}
	req := &ContextRequest{setName: setName, clean: clean, mode: mode, by: by, warnings: []string{}}
	if !slices.Contains(KnownSets, setName) {
		w := fmt.Sprintf("unknown set name %q — typo?", setName)
		if near := nearest(setName); near != "" {
			w += fmt.Sprintf(" Did you mean %q?", near)
		}
		req.warnings = append(req.warnings, w)
	}
	return req, nil
}

// Apply computes the change against the session's current context (which
// it updates) and origin, who added each item of the set now. It returns
// the change and who added each of its items, in order; a change over the
// limits is refused.
func (r *ContextRequest) Apply(cur Context, origin map[string]string) (*ContextChange, []string, error) {
	old := cur[r.setName]
	next := r.clean
	switch r.mode {
	case ModeMerge:
		next = slices.Clone(old)
		for _, it := range r.clean {
			if !slices.Contains(next, it) {
				next = append(next, it)
			}
		}
	case ModeRemove:
		next = slices.DeleteFunc(slices.Clone(old), func(it string) bool { return slices.Contains(r.clean, it) })
	}
	if len(next) > MaxItemsPerSet {
		return nil, nil, Invalidf("set %q would have %d items; the limit is %d per set", r.setName, len(next), MaxItemsPerSet)
	}
	total := len(next)
	for name, its := range cur {
		if name != r.setName {
			total += len(its)
		}
	}
	if total > MaxItemsTotal {
		return nil, nil, Invalidf("the session would have %d context items; the limit is %d in all", total, MaxItemsTotal)
	}
	who := make([]string, len(next))
	for i, it := range next {
		w, ok := origin[it]
		if !ok || r.by == AddedByUser && slices.Contains(r.clean, it) {
			w = r.by // new, or restated by the user: the user's from now on
		}
		who[i] = w
	}
	ch := &ContextChange{SetName: r.setName, Items: slices.Clone(next), Added: []string{}, Removed: []string{}, Warnings: r.warnings}
	for _, it := range next {
		if !slices.Contains(old, it) {
			ch.Added = append(ch.Added, it)
		}
	}
	for _, it := range old {
		if !slices.Contains(next, it) {
			ch.Removed = append(ch.Removed, it)
		}
	}
	if ch.Items == nil {
		ch.Items = []string{}
	}
	if len(next) == 0 {
		delete(cur, r.setName)
	} else {
		cur[r.setName] = next
	}
	ch.Context = cur
	return ch, who, nil
}

// nearest returns the known set name within edit distance 2, if any.
func nearest(name string) string {
	for _, k := range KnownSets {
		if editDistance(strings.ToLower(name), k) <= 2 {
			return k
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// NormalizeFileItem turns an item of the "files" set into an absolute path:
// a file:// URI is converted, a relative path is joined to the first
// workspace root. A directory is refused (its files are to be added one by
// one); a path that does not exist is accepted (it is reported missing).
func NormalizeFileItem(item string, roots []string) (string, error) {
	p, err := normalizeFileItem(item, roots)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return "", Invalidf("%s is a directory; add the files in it one by one", Truncate(p, 200))
	}
	return p, nil
}

func normalizeFileItem(item string, roots []string) (string, error) {
	item = strings.TrimSpace(item)
	switch {
	case item == "":
		return "", Invalidf("file item is empty")
	case strings.ContainsRune(item, 0):
		return "", Invalidf("file item %q contains a NUL character", Truncate(item, 80))
	case strings.HasPrefix(item, "file://"):
		p, ok := PathFromURI(item)
		if !ok {
			return "", Invalidf("%q is not a usable file URI", Truncate(item, 200))
		}
		return p, nil
	case strings.Contains(item, "://"):
		return "", Invalidf("%q is not a file: only file:// URIs and paths are accepted in the files set", Truncate(item, 200))
	case filepath.IsAbs(item):
		return filepath.Clean(item), nil
	case len(roots) == 0:
		return "", Invalidf("%q is relative and the editor gave no workspace folder; use an absolute path", Truncate(item, 200))
	}
	return filepath.Join(roots[0], item), nil
}

// PathFromURI converts a file:// URI (percent-encoded, with no host or
// localhost) into a clean absolute path.
func PathFromURI(s string) (string, bool) {
	if !strings.HasPrefix(s, "file://") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Opaque != "" {
		return "", false
	}
	p := u.Path
	if p == "" || !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", false
	}
	return filepath.Clean(p), true
}
