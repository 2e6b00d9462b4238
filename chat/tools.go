package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/session"
)

// MaxToolRounds bounds the tool calls of one turn.
const MaxToolRounds = 8

// maxReadBytes is how much read_file returns.
const maxReadBytes = 256 << 10

// toolDefs are the functions the model may call.
var toolDefs = []openai.Tool{
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "set_relevant_context",
		Description: "Set or extend one named set of the session's relevant context (files, applet, endpoints, ports, or another name). At most 10 items per set and 50 in all.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"setName":{"type":"string","description":"files, applet, endpoints, ports, or a custom name"},` +
			`"items":{"type":"array","items":{"type":"string"}},` +
			`"mode":{"type":"string","enum":["replace","merge"],"description":"replace (default) or merge"}},` +
			`"required":["setName","items"]}`),
	}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "get_relevant_context",
		Description: "Read the session's relevant context: all sets as an object of set name to items, or the items of the one named as a list ([] for a set that does not exist).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"setName":{"type":"string"}}}`),
	}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "read_file",
		Description: "Read a file: sources/NAME for files uploaded to the session, a path relative to the workspace, or an absolute path inside the workspace or the session folder.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "list_session_files",
		Description: "List the files in one folder of the session folder: sources (uploaded by the user, the default), results, scripts or data. Files in folders below results, scripts and data are listed as sub/name.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"subdir":{"type":"string","enum":` + jsonList(session.Subdirs) + `}}}`),
	}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "write_file",
		Description: "Write a text file into the session folder: results/NAME for final outputs (the default: a bare NAME goes there), scripts/NAME for programs you write, data/NAME for intermediate data. " +
			"Folders below those are made as needed (results/charts/q1.csv). An existing file is replaced. sources/ holds the user's files and cannot be written; nothing outside the session folder can. At most 25 MiB.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"results/NAME, scripts/NAME, data/NAME, or a bare NAME for results/"},` +
			`"content":{"type":"string","description":"the whole content of the file"}},` +
			`"required":["path","content"]}`),
	}},
}

// OwnTools is how many tools of ctxls's own every turn offers.
var OwnTools = len(toolDefs)

// isOwnTool reports whether name is one of ctxls's own tools.
func isOwnTool(name string) bool {
	return slices.ContainsFunc(toolDefs, func(t openai.Tool) bool { return t.Function.Name == name })
}

// toolEnv is what the tools may touch in one turn.
type toolEnv struct {
	e       *Engine
	turn    Turn
	folder  string // the session folder when the turn started; see sessionFolder
	userSet map[string]bool
	ev      Events
}

var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^\.env(\..*)?$|\.pem$|\.key$|^id_(rsa|dsa|ecdsa|ed25519)|\.p12$|\.pfx$|^\.netrc$|^credentials(\.json)?$)`)
})

// LooksSecret reports whether a file looks like it holds secrets, by name
// or by a private-key header in its content.
func LooksSecret(path, content string) bool {
	return secretName().MatchString(filepath.Base(path)) || hasPrivateKey(content)
}

// hasPrivateKey reports whether text holds "PRIVATE KEY-----". It looks for
// "KEY-----" first: an upper-case K is rare in code, where the P of
// "PRIVATE" is on every line that prints, so the search reads the text at
// the speed of memory.
func hasPrivateKey(text string) bool {
	for {
		i := strings.Index(text, "KEY-----")
		if i < 0 {
			return false
		}
		if i >= 8 && text[i-8:i] == "PRIVATE " {
			return true
		}
		text = text[i+8:]
	}
}

// sessionFolder is the session folder now: a rename during the turn (the
// user's, or the model's title) moves it.
func (t *toolEnv) sessionFolder() string {
	if s, err := t.e.Store.Get(context.Background(), t.turn.SessionID); err == nil {
		return s.Folder
	}
	return t.folder
}

// refusal says why the model may not read path, or "" when it may: it may
// read inside a workspace folder or the session folder (after resolving
// symbolic links) a file without several hard links (another name for it
// may be anywhere on the same filesystem), and any file the user added to
// the context by name.
func (t *toolEnv) refusal(path string) string {
	if t.userSet[path] {
		return ""
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	within := func(dir string) bool {
		rd, err := filepath.EvalSymlinks(dir)
		if err != nil {
			rd = dir
		}
		return session.Within(path, dir) && session.Within(real, rd)
	}
	// The session folder (a store query) is looked up only for a path
	// outside every workspace folder.
	if !slices.ContainsFunc(t.turn.Roots, within) && !within(t.sessionFolder()) {
		return "is outside the workspace and the session folder; ask the user to add it"
	}
	if n := hardLinks(real); n > 1 {
		return fmt.Sprintf("has %d hard links, so it may be a file from outside the workspace; ask the user to add it by name", n)
	}
	return ""
}

// run executes one tool call and returns the text given back to the model.
// failed says the tool refused or failed (the text says why).
func (t *toolEnv) run(ctx context.Context, name, args string) (out string, failed bool) {
	out, err := t.dispatch(ctx, name, args)
	if err != nil {
		return "error: " + err.Error(), true
	}
	return out, false
}

func (t *toolEnv) dispatch(ctx context.Context, name, args string) (string, error) {
	var a struct {
		SetName string   `json:"setName"`
		Items   []string `json:"items"`
		Mode    string   `json:"mode"`
		Path    string   `json:"path"`
		Subdir  string   `json:"subdir"`
		Content *string  `json:"content"`
	}
	if strings.TrimSpace(args) != "" {
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return "", fmt.Errorf("the arguments are not valid JSON: %v", err)
		}
	}
	store := t.e.Store
	switch name {
	case "set_relevant_context":
		t.ev.Emit(Activity{Message: fmt.Sprintf("updating the %s context", a.SetName)})
		ch, err := store.UpdateContext(ctx, t.turn.SessionID, a.SetName, a.Items, session.Mode(a.Mode), session.AddedByModel, t.turn.Roots)
		if err != nil {
			return "", err
		}
		t.ev.Emit(ContextChanged{SessionID: t.turn.SessionID, Change: ch})
		b, _ := json.Marshal(map[string]any{"setName": ch.SetName, "items": ch.Items, "warnings": ch.Warnings})
		return string(b), nil
	case "get_relevant_context":
		sets, err := store.Context(ctx, t.turn.SessionID)
		if err != nil {
			return "", err
		}
		if a.SetName != "" {
			b, _ := json.Marshal(append([]string{}, sets[a.SetName]...)) // [] for a set that does not exist
			return string(b), nil
		}
		if len(sets) == 0 {
			return "No context stored for this session", nil
		}
		b, _ := json.Marshal(sets)
		return string(b), nil
	case "list_session_files":
		names, err := store.ListFiles(ctx, t.turn.SessionID, a.Subdir)
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(names)
		return string(b), nil
	case "read_file":
		return t.readFile(a.Path)
	case "write_file":
		return t.writeFile(ctx, a.Path, a.Content)
	}
	return "", fmt.Errorf("unknown tool %q", name)
}

func (t *toolEnv) readFile(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", errors.New("path is required")
	}
	var path string
	switch {
	case strings.HasPrefix(p, "sources/") || strings.HasPrefix(p, "results/") || strings.HasPrefix(p, "scripts/") || strings.HasPrefix(p, "data/"):
		path = filepath.Join(t.sessionFolder(), filepath.Clean("/" + p)[1:])
	case filepath.IsAbs(p):
		path = filepath.Clean(p)
	case len(t.turn.Roots) > 0:
		path = filepath.Join(t.turn.Roots[0], p)
	default:
		return "", errors.New("relative path with no workspace folder")
	}
	if why := t.refusal(path); why != "" {
		return "", fmt.Errorf("%s %s", p, why)
	}
	t.ev.Emit(Activity{Message: "reading " + filepath.Base(path)})
	content, ok := t.e.buffers(t.turn).TextByPath(path)
	if !ok {
		data, err := readLimited(path, maxReadBytes+1)
		if err != nil {
			return "", fmt.Errorf("cannot read %s: %v", p, err)
		}
		content = data
	}
	if LooksSecret(path, content) && !t.userSet[path] {
		return "", fmt.Errorf("%s looks like it holds secrets and is withheld; the user can add it by name", p)
	}
	if len(content) > maxReadBytes {
		content = content[:maxReadBytes] + fmt.Sprintf("\n[truncated: first %d bytes shown]", maxReadBytes)
	}
	return content, nil
}

// writeFile runs write_file: the store checks the path and writes; the
// client is told with FilesChanged.
func (t *toolEnv) writeFile(ctx context.Context, path string, content *string) (string, error) {
	if content == nil {
		return "", errors.New("content is required (an empty string for an empty file)")
	}
	if sub, name, err := session.ParseOutputPath(path); err == nil {
		t.ev.Emit(Activity{Message: "writing " + sub + "/" + name})
	}
	w, err := t.write(ctx, path, *content)
	if err != nil {
		return "", err
	}
	t.ev.Emit(FilesChanged{SessionID: t.turn.SessionID, Subdir: w.Subdir, Name: w.Name, Size: w.Size, By: session.AddedByModel})
	verb := "created"
	if w.Replaced {
		verb = "replaced the existing file"
	}
	return fmt.Sprintf("%s %s/%s (%s)", verb, w.Subdir, w.Name, session.Bytes(w.Size)), nil
}

// write writes a model's output: through Turn.WriteFile when the front
// door has one (an ACP client's fs/write_text_file, so the editor sees the
// file change), else, or when that fails, straight to the disk.
func (t *toolEnv) write(ctx context.Context, path, content string) (*session.Written, error) {
	if t.turn.WriteFile != nil {
		target, w, err := t.e.Store.OutputTarget(ctx, t.turn.SessionID, path, int64(len(content)))
		if err != nil {
			return nil, err
		}
		werr := t.turn.WriteFile(ctx, target, content)
		if werr == nil {
			// A store whose folders mirror a database takes the content too.
			werr = t.e.Store.OutputWritten(ctx, t.turn.SessionID, path, []byte(content))
		}
		if werr == nil {
			return w, nil
		}
		t.e.Log.Info("the front door's write failed; writing to the disk", "path", target, "err", werr)
	}
	return t.e.Store.WriteOutput(ctx, t.turn.SessionID, path, []byte(content))
}

// storedCalls is what is stored of a round's tool calls: write_file's
// content becomes a note of its size, since the file itself is in the
// session folder. Stored whole, a 25 MiB output was kept twice more, in the
// database and in history.md (re-rendered on every message change).
func storedCalls(calls []openai.ToolCall) []openai.ToolCall {
	out := slices.Clone(calls)
	for i, c := range out {
		if c.Function.Name != "write_file" {
			continue
		}
		var a map[string]any
		if json.Unmarshal([]byte(c.Function.Arguments), &a) != nil {
			continue
		}
		if content, ok := a["content"].(string); ok {
			a["content"] = fmt.Sprintf("[%s, not stored here: see the file]", session.Bytes(int64(len(content))))
			b, _ := json.Marshal(a)
			out[i].Function.Arguments = string(b)
		}
	}
	return out
}

// toolEnv gathers what a turn may read and who added which relevant file,
// from what the turn read of its session.
func (e *Engine) toolEnv(t Turn, st *session.TurnState, ev Events) *toolEnv {
	env := &toolEnv{e: e, turn: t, folder: st.Session.Folder, ev: ev, userSet: map[string]bool{}}
	for p, by := range st.AddedBy {
		if by == session.AddedByUser {
			env.userSet[p] = true
		}
	}
	for _, p := range t.Files {
		env.userSet[p] = true
	}
	return env
}

// jsonList is a list of strings as JSON.
func jsonList(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}
