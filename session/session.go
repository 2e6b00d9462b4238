package session

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxls/ctxls/api"
)

// TitleSource says who named a session (declared with the wire's, in
// package api).
type TitleSource = api.TitleSource

// Title sources.
const (
	TitleAuto  = api.TitleAuto  // from the first message, or the default
	TitleModel = api.TitleModel // suggested by the model
	TitleUser  = api.TitleUser  // set by the user; never overridden
)

// DefaultTitle names a session before its first message.
const DefaultTitle = "New session"

// Meta is what ctxls notes about a session's situation.
type Meta struct {
	EnvHint string `json:"envHint,omitempty"`
	// TitleRequested: the model was asked for a title after the first
	// complete answer (once per session; cleared by ClearTitleRequested).
	TitleRequested bool `json:"titleRequested,omitempty"`
	// Model is the session's model ("": the provider's default).
	Model string `json:"model,omitempty"`
	// Workspace is the folder the session was last used in: the editor's
	// first workspace folder, ACP's cwd, the CLI's working directory.
	Workspace string `json:"workspace,omitempty"`
	// Tools are the user's standing decisions about the model's tools in
	// this session, by the name the model calls them: ToolAllow ("always
	// allow") or ToolDeny ("always reject").
	Tools map[string]string `json:"tools,omitempty"`
	// ReviewMode is how the model's edits to the user's files are
	// reviewed: ReviewAsk ("" means it), ReviewAuto or ReviewOff.
	ReviewMode string `json:"reviewMode,omitempty"`
	// Plan is the model's plan for the session (its update_plan tool),
	// replaced whole each time; see ValidPlan.
	Plan []PlanItem `json:"plan,omitempty"`
	// EditNotes say what the user undid or redid of the model's changes
	// since its last turn (EditLog.SetUndone); the next turn tells the
	// model and takes them.
	EditNotes []string `json:"editNotes,omitempty"`
}

// Review modes (Meta.ReviewMode): the user sees each edit and accepts or
// rejects it; edits are applied at once; no edit tools are offered.
const (
	ReviewAsk  = string(api.ReviewAsk)
	ReviewAuto = string(api.ReviewAuto)
	ReviewOff  = string(api.ReviewOff)
)

// Standing decisions about a tool (Meta.Tools).
const (
	ToolAllow = "allow"
	ToolDeny  = "deny"
)

// Session is one chat session.
type Session struct {
	ID           string      `json:"id"`
	Title        string      `json:"title"`
	TitleSource  TitleSource `json:"titleSource"`
	CreatedAt    time.Time   `json:"createdAt"`
	UpdatedAt    time.Time   `json:"updatedAt"`
	Meta         Meta        `json:"meta"`
	Folder       string      `json:"folder"`       // absolute path of the session folder
	MessageCount int         `json:"messageCount"` // messages stored
	FileCount    int         `json:"fileCount"`    // files directly in sources/ (not folders), hidden ones excluded
	// Owner and Visibility are the PostgreSQL store's: the role that made
	// the session, and who sees it. Empty in the local store.
	Owner      string     `json:"owner,omitempty"`
	Visibility Visibility `json:"visibility,omitempty"`
}

// Visibility says who sees a session in the PostgreSQL store.
type Visibility = api.Visibility

// Visibilities.
const (
	VisibilityPrivate = api.VisibilityPrivate // its owner only (the default)
	VisibilityTeam    = api.VisibilityTeam    // every member of ctxls_user
)

// ListOptions select a page of sessions.
type ListOptions struct {
	Query  string // case-insensitive substring of the title
	Limit  int    // default 50, at most 500
	Cursor string // nextCursor of the previous page
	// Workspace keeps only the sessions last used in this folder.
	Workspace string
	// NonEmpty leaves out the empty sessions (see EmptyAfter): a session
	// is listed once it holds something.
	NonEmpty bool
}

// A session is empty while it holds nothing a person made: no messages,
// no files in its folder, no context items but the editor's view (the
// "applet" set, which ctxls captures by itself) and a title that is not
// the user's. Session lists leave empty sessions out (ListOptions.NonEmpty),
// and PruneEmpty deletes those whose last activity is older than
// EmptyAfter: old enough that no daemon, on this machine or another one
// sharing the database, can have just made one to use it (a session open
// in an editor that rests there is not touched, so the margin is wide;
// the daemon that holds one keeps it, see service).
const EmptyAfter = time.Hour

const maxTitle = 200

func ValidTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return "", Invalidf("title must not be empty")
	case len(title) > maxTitle:
		return "", Invalidf("title is %d bytes long; the limit is %d", len(title), maxTitle)
	case !utf8.ValidString(title):
		return "", Invalidf("title is not valid UTF-8")
	case HasControl(title):
		return "", Invalidf("title must not contain control characters")
	}
	return title, nil
}

// NewID returns 128 random bits as 26 lowercase base32 characters.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Slug is the folder-friendly form of a title that a session folder's name
// carries: lowercase letters and digits, runs of anything else as one
// dash, at most 40 bytes, "untitled" when nothing is left.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 40 {
				break
			}
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "untitled"
	}
	return b.String()
}

func FolderName(created time.Time, title, id string) string {
	return created.UTC().Format("2006-01-02T15-04-05") + "--" + Slug(title) + "--" + id[:6]
}

// Subdirs are a session folder's subfolders (api.Subfolders).
var Subdirs = api.Subfolders

// PageLimit is a page size asked for: def for 0, at most max, never
// negative.
func PageLimit(limit, def, max int) (int, error) {
	switch {
	case limit < 0:
		return 0, Invalidf("limit must not be negative")
	case limit == 0:
		return def, nil
	}
	return min(limit, max), nil
}

type Cursor struct {
	U  int64  `json:"u"`
	ID string `json:"i"`
}

// The conditions of the titles the engine sets: the model's replaces only
// an automatic title, the first message's only the default one.
func TitleIsAuto(_ string, src TitleSource) bool { return src == TitleAuto }

func TitleIsDefault(cur string, src TitleSource) bool { return src == TitleAuto && cur == DefaultTitle }
