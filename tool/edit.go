package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.lsp.dev/uri"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/internal/human"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// The model's edits to the user's files: edit_file and create_file,
// computed against the text the user sees (the editor's, unsaved edits
// included; the disk's for a file not open), reviewed as the session's
// review mode says, and applied through the door (the editor's buffer over
// LSP, fs/write_text_file over ACP, the disk in the CLI).

// MaxEditBytes is the largest file the model may edit or create.
const MaxEditBytes = 32 << 20

// Edit tool names.
const (
	toolEditFile   = "edit_file"
	toolCreateFile = "create_file"
)

// editArgs are the edit tools' arguments.
type editArgs struct {
	Path       string  `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
	Content    *string `json:"content"`
	// partOfAll: the user accepted a part of a replace_all edit (partOf),
	// which is made only against the text it was computed against.
	partOfAll bool
}

type editFileArgs struct {
	Path       string `json:"path" jsonschema:"the file: relative to the workspace, or absolute inside it"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence (default false)"`
}

type createFileArgs struct {
	Path    string `json:"path" jsonschema:"the new file: relative to the workspace, or absolute inside it"`
	Content string `json:"content" jsonschema:"the whole content of the file"`
}

// editsOffered: the edit tools are offered when the door can apply edits
// and the session's review mode is not off.
func editsOffered(ctx context.Context, t *TurnTools) bool {
	return t.box.door() != nil && ReviewMode(t.session(ctx)) != session.ReviewOff
}

var editFileTool = Tool{
	Name: toolEditFile,
	Kind: "edit",
	Description: "Edit one of the user's files in the workspace: replace old_string with new_string in its current text (the editor's, unsaved edits included). " +
		"old_string must occur exactly once (give enough surrounding lines), unless replace_all is true. The user may review the edit first; the result says whether it was applied.",
	schema:  lazySchema[editFileArgs](nil),
	Asks:    true,
	Offered: editsOffered,
	run:     runEdit,
}

var createFileTool = Tool{
	Name:        toolCreateFile,
	Kind:        "edit",
	Description: "Create a new file in the workspace with the given content (not for a file that exists: use edit_file). The user may review it first.",
	schema:      lazySchema[createFileArgs](nil),
	Asks:        true,
	Offered:     editsOffered,
	run:         runEdit,
}

// EditRequest is an edit the model proposes, as a door shows and applies
// it.
type EditRequest struct {
	SessionID string
	Call      chat.ToolCall
	// Path is the file, absolute; URI is the editor's URI of the open
	// document ("" when it is not open).
	Path, URI string
	Create    bool
	// OldText is the file's text the edit was computed against ("" for a
	// new file).
	OldText string
	// Start and OldEnd are where the texts differ: OldText[Start:OldEnd]
	// became Inserted (for a new file, Inserted is its whole text). The
	// text after the edit is NewText.
	Start, OldEnd int
	Inserted      string
	// Version is the open document's version the edit was computed
	// against; nil when the file is not open (its text is the disk's).
	Version *int32
	// Diff is the edit as a unified diff; Summary says it in one line.
	Diff, Summary string
	// Label names the change in the editor's undo history ("": the
	// door's own, "ctxls: edit main.go").
	Label string
	// whole holds NewText once built, shared by the request's copies.
	whole *wholeText
}

// wholeText is an edit's new text, built once when a door asks for it.
type wholeText struct {
	once sync.Once
	text string
}

// NewText is the file's whole text after the edit. It is built when asked
// (once per edit): a door that sends only the change (LSP's
// workspace/applyEdit) does not copy a 10 MB file for a one-line edit.
func (r EditRequest) NewText() string {
	build := func() string { return r.OldText[:r.Start] + r.Inserted + r.OldText[r.OldEnd:] }
	if r.whole == nil {
		return build()
	}
	r.whole.once.Do(func() { r.whole.text = build() })
	return r.whole.text
}

// NewLen is the length of NewText, without building it.
func (r EditRequest) NewLen() int { return len(r.OldText) - (r.OldEnd - r.Start) + len(r.Inserted) }

// EditResult is what became of an edit the door tried to apply.
type EditResult struct {
	Applied bool
	// OnDisk: it was written to the file on disk (not to an editor's
	// buffer).
	OnDisk bool
	// Reason says why the editor refused it (a newer version, the file
	// changed on disk).
	Reason string
}

// EditDoor shows and applies the model's edits the door's way. Review is
// asked in the ask mode: AllowOnce accepts, AllowAlways accepts this and
// the rest of the turn's edits, a rejection (or an error) does not apply
// it. Read gives the text the user sees of a file the door holds (ok false:
// the disk's is used).
type EditDoor interface {
	Read(ctx context.Context, sessionID, path string) (text, uri string, version *int32, ok bool)
	Review(ctx context.Context, r EditRequest) (Decision, error)
	Apply(ctx context.Context, r EditRequest) (EditResult, error)
}

// PartReviewer is an EditDoor whose review may accept a part of an edit
// (the LSP door's ctxls/reviewEdit): ReviewParts answers as Review does
// and, when the user accepted only some of the edit's changes, gives the
// file's whole text as they chose it (nil: the edit as proposed).
type PartReviewer interface {
	ReviewParts(ctx context.Context, r EditRequest) (Decision, *string, error)
}

// ReviewMode is the session's review mode ("": ask).
func ReviewMode(sess *session.Session) string {
	if sess == nil || sess.Meta.ReviewMode == "" {
		return session.ReviewAsk
	}
	return sess.Meta.ReviewMode
}

// edit runs one edit tool call: it computes the edit, has it reviewed as
// the session's mode says and applied through the door, and returns what
// the model is told (the outcome with the edit's diff).
func runEdit(ctx context.Context, c *Call, args string) (string, error) {
	b, t, call := c.box, c.TurnTools, c.Call
	door := b.door()
	if door == nil {
		return "", errors.New("this client cannot apply edits")
	}
	var a editArgs
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "", fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	sess, err := c.store().Get(ctx, c.TT.SessionID)
	if err != nil {
		return "", err
	}
	mode := ReviewMode(sess)
	if mode == session.ReviewOff {
		return "", errors.New("edits are off in this session; tell the user what to change instead")
	}
	r, err := proposeEdit(ctx, door, sess, &c.TT.Guard, call, a)
	if err != nil {
		return "", err
	}
	c.emit(chat.EditProposed{Call: call, Path: r.Path, OldText: r.OldText, NewText: r.NewText, Create: r.Create, Diff: r.Diff})
	partly := false
	if mode == session.ReviewAsk && !t.acceptsAll() {
		var d Decision
		var chosen *string
		if pr, ok := door.(PartReviewer); ok {
			d, chosen, err = pr.ReviewParts(ctx, r)
		} else {
			d, err = door.Review(ctx, r)
		}
		if err == nil && chosen != nil && (d == AllowOnce || d == AllowAlways) && *chosen != r.NewText() {
			if *chosen == r.OldText {
				d = RejectOnce // every change left out
			} else if r, a, err = partOf(r, a, *chosen, &c.TT.Guard); err != nil {
				return "", err
			} else {
				partly = true
			}
		}
		if err != nil {
			b.log.Info("the edit was not reviewed", "path", r.Path, "err", err)
			return "", Declined(unanswered(ctx, err, "the review of this edit", "nothing changed"))
		}
		switch d {
		case AllowAlways:
			t.setAcceptAll()
		case AllowOnce:
		default:
			return "", Declined(fmt.Sprintf("The user rejected this edit of %s; nothing changed. Do not make it again unless the user asks.\n\n%s", r.Path, fenced(r.Diff)))
		}
	}
	c.emit(chat.ToolAllowed{Call: call})
	// Applied to the text the user has now (they may have typed while the
	// edit waited for its review).
	r, res, err := applyCurrent(ctx, door, &c.TT.Guard, r, a)
	var cf *conflict
	switch {
	case errors.As(err, &cf):
		c.emit(chat.Activity{Warning: true, Message: fmt.Sprintf("the model's edit of %s was not applied: %s", r.Path, cf.what)})
		return "", Refused(refused(ctx, door, r, cf.what))
	case err != nil:
		return "", fmt.Errorf("the edit of %s could not be applied: %v", r.Path, err)
	case !res.Applied:
		return "", Refused(refused(ctx, door, r, res.Reason))
	}
	t.changed(r.Path)
	c.recordEdit(ctx, r, res.OnDisk)
	c.Summarize(r.Summary)
	verb := "edited"
	if r.Create {
		verb = "created"
	}
	where := "the change is in the editor, unsaved until the user saves it"
	if res.OnDisk {
		where = "written to the file"
	}
	out := fmt.Sprintf("%s %s (%s); %s.\n\n%s", verb, r.Path, r.Summary, where, fenced(r.Diff))
	if partly {
		out = fmt.Sprintf("%s %s (%s), only in part: the user took some of the edit's changes and left the others out; the diff below is what was applied. %s.\n\n%s",
			verb, r.Path, r.Summary, upperFirst(where), fenced(r.Diff))
	}
	return out + c.errorsAfter(ctx, r.Path, c.TT.Roots), nil
}

// recordEdit keeps an applied edit in the session's edit log, for undo;
// a failure is logged (the edit stands, but cannot be undone).
func (c *Call) recordEdit(ctx context.Context, r EditRequest, onDisk bool) {
	l, ok := c.store().(session.EditLog)
	if !ok || c.TT == nil || c.TT.Question == nil {
		return
	}
	turn := c.TT.Question()
	if turn == 0 {
		return
	}
	if err := RecordEdit(ctx, l, turn, r, onDisk); err != nil {
		c.box.log.Warn("the edit was not recorded for undo", "path", r.Path, "err", err)
	}
}

// editDiagnosticsWait is how long the editor is given to check a file the
// model edited before its errors are read (ctxls/diagnostics' waitMs): the
// editor answers as soon as the file's diagnostics have changed and
// rested, so this bounds the wait for a file no language server checks or
// whose diagnostics did not change.
const editDiagnosticsWait = 2 * time.Second

// errorsAfter is what the editor reports of a file the model just edited
// there, as a paragraph for the tool's result: its errors once its
// diagnostics have settled ("" when the connection gives no diagnostics or
// they cannot be read).
func (c *Call) errorsAfter(ctx context.Context, path string, roots []string) string {
	door := c.box.diagnosticsDoor()
	if door == nil {
		return ""
	}
	files, err := door.Diagnostics(ctx, []string{string(uri.File(path))}, editDiagnosticsWait)
	if err != nil {
		c.box.log.Info("the edited file's diagnostics were not read", "path", path, "err", err)
		return ""
	}
	var errs []shownDiagnostic
	for _, d := range collectDiagnostics(roots, files, path) {
		if d.severity == api.SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) == 0 {
		return "\n\nThe editor reports no errors in the file now."
	}
	return fmt.Sprintf("\n\nThe editor reports %s in the file now:\n%s", human.Count(len(errs), "error"), formatShown(errs))
}

// refused tells the model the editor refused an edit, with the file's
// text now around the place of the edit.
func refused(ctx context.Context, door EditDoor, r EditRequest, reason string) string {
	if reason == "" {
		reason = "the editor refused it"
	}
	msg := fmt.Sprintf("error: the edit of %s was not applied: %s. The file may have changed since; read it again before another edit.", r.Path, reason)
	// The text now is quoted unless it came to hold a private key since.
	if now, _, _, err := currentText(ctx, door, r.SessionID, r.Path); err == nil && now != r.OldText && !workspace.HasPrivateKey([]byte(now)) {
		msg += "\n\nIts text now around the edit:\n" + linesAround(now, r.Start, 5)
	}
	return msg
}

// proposeEdit checks the path and computes the edit against the text the
// user sees. A file read_file would refuse or withhold (a hard link, a
// system file, a name or text that looks like it holds secrets) is refused
// before its text is read or quoted (an old_string that does not occur
// shows the nearest lines), unless the user added it by name.
func proposeEdit(ctx context.Context, door EditDoor, sess *session.Session, g *workspace.Guard, call chat.ToolCall, a editArgs) (EditRequest, error) {
	r := EditRequest{SessionID: sess.ID, Call: call, Create: call.Name == toolCreateFile, whole: &wholeText{}}
	path, err := editPath(sess, g.Roots, a.Path, r.Create)
	if err != nil {
		return r, err
	}
	r.Path = path
	if why := g.Refusal(path); why != "" {
		return r, fmt.Errorf("%s %s", a.Path, why)
	}
	secret := func(text string) error {
		if g.Withheld(path, text) {
			return fmt.Errorf("%s looks like it holds secrets; ctxls edits it only when the user added it to the context by name", path)
		}
		return nil
	}
	if err := secret(""); err != nil {
		return r, err
	}
	text, uri, version, err := currentText(ctx, door, sess.ID, path)
	switch {
	case r.Create && err == nil:
		return r, fmt.Errorf("%s exists; use edit_file to change it", path)
	case r.Create && !errors.Is(err, fs.ErrNotExist):
		return r, err
	case !r.Create && err != nil:
		return r, err
	}
	if err := secret(text); err != nil {
		return r, err
	}
	r.URI, r.Version, r.OldText = uri, version, text
	if r.Create {
		if a.Content == nil {
			return r, errors.New("content is required (an empty string for an empty file)")
		}
		r.Inserted = *a.Content
	} else {
		if a.OldString == nil || *a.OldString == "" || a.NewString == nil {
			return r, errors.New("old_string (not empty) and new_string are required")
		}
		if *a.OldString == *a.NewString {
			return r, errors.New("old_string and new_string are the same: nothing would change")
		}
		if r.Start, r.OldEnd, r.Inserted, err = replaceIn(path, text, *a.OldString, *a.NewString, a.ReplaceAll); err != nil {
			return r, err
		}
	}
	if r.NewLen() > MaxEditBytes {
		return r, fmt.Errorf("the file would be %d bytes; the limit is %d", r.NewLen(), MaxEditBytes)
	}
	// The old text is valid UTF-8 (the editor's, or checked when read), so
	// only what the model wrote is checked.
	if !utf8.ValidString(r.Inserted) {
		return r, errors.New("the new text is not valid UTF-8")
	}
	// The new text is the old one but for its changed span (and the few
	// bytes around it a header could straddle).
	around := r.OldText[max(r.Start-16, 0):r.Start] + r.Inserted + r.OldText[r.OldEnd:min(r.OldEnd+16, len(r.OldText))]
	if err := secret(around); err != nil {
		return r, err
	}
	r.Diff, r.Summary = unifiedDiff(shownPath(path, g.Roots), r.OldText, r.Create, r.Start, r.OldEnd, r.Inserted)
	return r, nil
}

// shownPath is how a diff names a file: relative to the workspace folder
// holding it, as git names files.
func shownPath(path string, roots []string) string {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, path); err == nil && session.Within(path, r) {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// currentText is the file's text as the user sees it: the door's (the
// editor's buffer) when it holds the file, else the disk's.
func currentText(ctx context.Context, door EditDoor, sessionID, path string) (text, uri string, version *int32, err error) {
	if text, uri, version, ok := door.Read(ctx, sessionID, path); ok {
		return text, uri, version, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", "", nil, err
	}
	if !info.Mode().IsRegular() {
		return "", "", nil, fmt.Errorf("%s is not a regular file", path)
	}
	if info.Size() > MaxEditBytes {
		return "", "", nil, fmt.Errorf("%s is %d bytes; the limit is %d", path, info.Size(), MaxEditBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", nil, err
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return "", "", nil, fmt.Errorf("%s is not a text file", path)
	}
	return string(data), "", nil, nil
}

// editPath is the absolute path the model may edit or create: inside a
// workspace folder once symbolic links are resolved (a new file's folder
// resolved), never in .git, never in the session folder.
func editPath(sess *session.Session, roots []string, p string, create bool) (string, error) {
	if p == "" {
		return "", errors.New("path is required")
	}
	if err := workspace.CheckPath(p); err != nil {
		return "", err
	}
	if len(roots) == 0 {
		return "", errors.New("there is no workspace folder to edit in")
	}
	path := p
	if !filepath.IsAbs(path) {
		path = filepath.Join(roots[0], path)
	}
	path = filepath.Clean(path)
	real := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		real = resolved
	} else if create {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
			real = filepath.Join(dir, filepath.Base(path))
		}
	}
	within := func(root string) bool {
		rr, err := filepath.EvalSymlinks(root)
		if err != nil {
			rr = root
		}
		return session.Within(path, root) && session.Within(real, rr)
	}
	switch {
	case !slices.ContainsFunc(roots, within):
		return "", fmt.Errorf("%s is outside the workspace folders (symbolic links followed); ctxls edits only files inside them", p)
	case workspace.InGitDir(real):
		return "", fmt.Errorf("%s is inside a .git folder; ctxls does not edit it", p)
	case sess.Folder != "" && (session.Within(path, sess.Folder) || session.Within(real, sess.Folder)):
		return "", fmt.Errorf("%s is in the session folder; use write_file for the session's files", p)
	}
	return path, nil
}

// WriteToDisk applies an edit to the file on disk, for a door with no
// editor to apply it in (the CLI; an ACP client without
// fs/write_text_file): the file is written whole (staged, then renamed into
// place, its mode kept), and only if its text is still the one the edit was
// computed against (a new file only if it does not exist yet); otherwise
// it is refused and the reason says so.
func WriteToDisk(r EditRequest) (EditResult, error) {
	mode := os.FileMode(0o644)
	if r.Create {
		if _, err := os.Lstat(r.Path); err == nil {
			return EditResult{Reason: "the file exists now"}, nil
		}
		if err := os.MkdirAll(filepath.Dir(r.Path), 0o755); err != nil {
			return EditResult{}, err
		}
	} else {
		info, err := os.Stat(r.Path)
		if err != nil {
			return EditResult{}, err
		}
		mode = info.Mode().Perm()
		now, err := os.ReadFile(r.Path)
		if err != nil {
			return EditResult{}, err
		}
		if string(now) != r.OldText {
			return EditResult{Reason: "the file changed on disk since the edit was made"}, nil
		}
	}
	if err := session.WriteFileAtomicMode(r.Path, []byte(r.NewText()), mode); err != nil {
		return EditResult{}, err
	}
	return EditResult{Applied: true, OnDisk: true}, nil
}

// replaceIn replaces old with new in text: old must occur exactly once
// unless all; otherwise the error says how often it occurs, and where (or
// the nearest lines when it does not). It returns where the texts differ
// and what replaces that span: text[start:oldEnd] becomes inserted (see
// EditRequest). A single replacement reads the text once and copies none
// of it.
func replaceIn(path, text, old, new string, all bool) (start, oldEnd int, inserted string, err error) {
	i := indexLarge(text, old)
	if i < 0 {
		return 0, 0, "", fmt.Errorf("old_string does not occur in %s; nothing changed. The nearest lines:\n%s", path, nearest(text, old))
	}
	again := indexLarge(text[i+len(old):], old) >= 0
	switch {
	case again && !all:
		n := strings.Count(text, old)
		return 0, 0, "", fmt.Errorf("old_string occurs %d times in %s (lines %s); nothing changed. Give more surrounding lines to pick one, or replace_all", n, path, occurrenceLines(text, old, 10))
	case again:
		out := strings.ReplaceAll(text, old, new)
		start, oldEnd, newEnd := changed(text, out)
		return start, oldEnd, strings.Clone(out[start:newEnd]), nil
	}
	// Within the replaced span, what old and new share at their ends is
	// unchanged.
	p := commonPrefix(old, new)
	for p > 0 && p < len(old) && !utf8.RuneStart(old[p]) {
		p--
	}
	s := commonSuffix(old[p:], new[p:])
	for s > 0 && !utf8.RuneStart(old[len(old)-s]) {
		s--
	}
	return i + p, i + len(old) - s, new[p : len(new)-s], nil
}

// occurrenceLines lists the lines (1-based) where old starts, at most max.
func occurrenceLines(text, old string, max int) string {
	var lines []string
	line, from := 1, 0
	for len(lines) < max {
		i := strings.Index(text[from:], old)
		if i < 0 {
			break
		}
		line += strings.Count(text[from:from+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		from += i + len(old)
	}
	return strings.Join(lines, ", ")
}

// nearest shows the lines of text most like old's first line (with line
// numbers), for a model whose old_string did not match.
func nearest(text, old string) string {
	want := strings.TrimSpace(strings.SplitN(old, "\n", 2)[0])
	lines := strings.Split(text, "\n")
	best, bestScore := -1, 0
	for i, l := range lines {
		if score := common(strings.TrimSpace(l), want); score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return "(no line of the file is like old_string's first line)"
	}
	return numbered(lines, max(best-2, 0), min(best+3, len(lines)))
}

// common is how many characters a and b share from the start, or a's
// length when b contains it whole.
func common(a, b string) int {
	if a == "" {
		return 0
	}
	if strings.Contains(b, a) || strings.Contains(a, b) {
		return min(len(a), len(b)) + 1
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%6d  %s\n", i+1, lines[i])
	}
	return b.String()
}

// linesAround shows the lines of text around byte offset at.
func linesAround(text string, at, context int) string {
	at = min(at, len(text))
	line := strings.Count(text[:at], "\n")
	lines := strings.Split(text, "\n")
	return numbered(lines, max(line-context, 0), min(line+context+1, len(lines)))
}

// fenced is a diff in a Markdown code block.
func fenced(diff string) string {
	return "```diff\n" + strings.TrimRight(diff, "\n") + "\n```"
}
