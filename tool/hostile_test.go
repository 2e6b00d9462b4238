package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// What a hostile repository or model output cannot do through the file
// tools (issue 37): each test calls the real tool on real files.

// fakeStore is the one session the file tools read, in review mode ask.
type fakeStore struct {
	Store // nil: the tools here call only Get
	sess  *session.Session
}

func (s *fakeStore) Get(context.Context, string) (*session.Session, error) { return s.sess, nil }

// WriteOutput checks the path as the stores do, and writes nothing.
func (s *fakeStore) WriteOutput(_ context.Context, _, path string, _ []byte) (*session.Written, error) {
	if _, _, err := session.ParseOutputPath(path); err != nil {
		return nil, err
	}
	return nil, errors.New("this test's store has no session folder")
}

// fakeDoor holds no editor text, records the reviews asked and accepts
// them, and writes to the disk.
type fakeDoor struct {
	mu      sync.Mutex
	reviews []string
}

func (d *fakeDoor) Read(context.Context, string, string) (string, string, *int32, bool) {
	return "", "", nil, false
}

func (d *fakeDoor) Review(_ context.Context, r EditRequest) (Decision, error) {
	d.mu.Lock()
	d.reviews = append(d.reviews, r.Path)
	d.mu.Unlock()
	return AllowOnce, nil
}

func (d *fakeDoor) Apply(_ context.Context, r EditRequest) (EditResult, error) {
	return WriteToDisk(r)
}

// noBuffers: no file is open in the editor.
type noBuffers struct{}

func (noBuffers) TextByPath(string) (string, bool) { return "", false }

// toolRig runs the built-in tools of a turn whose workspace folders are
// roots.
type toolRig struct {
	door *fakeDoor
	turn *TurnTools
	tt   *chat.ToolTurn
}

func newToolRig(roots ...string) *toolRig {
	st := &fakeStore{sess: &session.Session{ID: "s1", Folder: "", Meta: session.Meta{ReviewMode: session.ReviewAsk}}}
	b := New(BoxConfig{Store: st})
	door := &fakeDoor{}
	b.SetEditDoor(door)
	tt := &chat.ToolTurn{SessionID: "s1", Buffers: noBuffers{}, Guard: workspace.Guard{Roots: roots, UserFiles: map[string]bool{}}}
	return &toolRig{door: door, turn: b.Turn("s1", true), tt: tt}
}

// call runs the tool name with args (marshalled to JSON) as the model
// calls it.
func (r *toolRig) call(t *testing.T, name string, args map[string]any) chat.ToolResult {
	t.Helper()
	bt := builtin(name)
	if bt == nil {
		t.Fatalf("no tool %s", name)
	}
	r.turn.mu.Lock()
	r.turn.offered = map[string]*Tool{name: bt}
	r.turn.mu.Unlock()
	b, _ := json.Marshal(args)
	// Bounded: a search of / that is not refused must not run for long.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return r.turn.Call(ctx, r.tt, chat.ToolCall{ID: "c1", Name: name, Arguments: string(b)})
}

func put(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEditFileQuotesNothingReadFileWithholds: an edit_file whose
// old_string does not occur quotes "the nearest lines" of the file; for a
// file read_file withholds (a private key in its text, a .env by its name,
// a hard link to a file outside the workspace) the edit is refused before
// the file is read or quoted, and before the user is asked.
func TestEditFileQuotesNothingReadFileWithholds(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	put(t, filepath.Join(root, "notes.txt"), "my notes\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-the-key\n-----END OPENSSH PRIVATE KEY-----\n")
	put(t, filepath.Join(root, ".env"), "API_KEY=sk-live-0123456789\n")
	put(t, filepath.Join(outside, "shadow"), "root:$6$the-hash-of-root:19000:0:99999:7:::\n")
	if err := os.Link(filepath.Join(outside, "shadow"), filepath.Join(root, "linked.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, c := range []struct {
		path, old, secret, why string
	}{
		{"notes.txt", "b3BlbnNzaC1rZXktdjEAAAAA-not-it", "the-key", "looks like it holds secrets"},
		{".env", "API_KEY=sk-live-999", "sk-live-0123456789", "looks like it holds secrets"},
		{"linked.txt", "root:$6$the-hash-of-someone", "the-hash-of-root", "hard links"},
	} {
		r := newToolRig(root)
		for _, name := range []string{"read_file", "edit_file"} {
			res := r.call(t, name, map[string]any{"path": c.path, "old_string": c.old, "new_string": "x"})
			if !res.Failed || strings.Contains(res.Output, c.secret) || !strings.Contains(res.Output, c.why) {
				t.Errorf("%s of %s: %+v; want a refusal saying %q, without the file's text", name, c.path, res, c.why)
			}
		}
		if len(r.door.reviews) != 0 {
			t.Errorf("%s: the user was asked about %q", c.path, r.door.reviews)
		}
	}
	// create_file: a new secret-named file, and one over a hard link.
	r := newToolRig(root)
	for _, p := range []string{".env.local", "linked.txt"} {
		res := r.call(t, "create_file", map[string]any{"path": p, "content": "x"})
		if !res.Failed || strings.Contains(res.Output, "the-hash-of-root") {
			t.Errorf("create_file %s: %+v", p, res)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".env.local")); err == nil || len(r.door.reviews) != 0 {
		t.Errorf("create_file .env.local: made it (%v), asked %q", err, r.door.reviews)
	}
	// A file the model may see is still quoted when old_string misses.
	put(t, filepath.Join(root, "main.go"), "package main\n\nfunc main() {}\n")
	res := newToolRig(root).call(t, "edit_file", map[string]any{"path": "main.go", "old_string": "func mian() {}", "new_string": "x"})
	if !res.Failed || !strings.Contains(res.Output, "func main() {}") {
		t.Errorf("edit_file main.go: %+v", res)
	}
}

// TestCredentialFilesWithheldByEveryTool: credential files (.npmrc,
// .git-credentials, a cloud command line's) are withheld as .env is, by
// every file tool: read_file and edit_file refuse them, grep neither
// quotes nor counts their lines as matches, find_files lists their names
// only (as it lists .env) and list_directory marks them withheld.
func TestCredentialFilesWithheldByEveryTool(t *testing.T) {
	root := t.TempDir()
	secrets := map[string]string{
		".env":                  "TOKEN=needle-env\n",
		".npmrc":                "//registry.npmjs.org/:_authToken=needle-npm\n",
		".git-credentials":      "https://ann:needle-git@github.com\n",
		".docker/config.json":   `{"auths":{"ghcr.io":{"auth":"needle-docker"}}}` + "\n",
		"infra/prod.tfstate":    `{"password":"needle-tf"}` + "\n",
		"deploy/.kube/config":   "token: needle-kube\n",
		"home/.aws/credentials": "aws_secret_access_key = needle-aws\n",
	}
	for p, text := range secrets {
		put(t, filepath.Join(root, filepath.FromSlash(p)), text)
	}
	put(t, filepath.Join(root, "main.go"), "package main // needle-main\n")
	r := newToolRig(root)
	for p := range secrets {
		for _, name := range []string{"read_file", "edit_file"} {
			res := r.call(t, name, map[string]any{"path": p, "old_string": "needle-x", "new_string": "y"})
			if !res.Failed || strings.Contains(res.Output, "needle") || !strings.Contains(res.Output, "secrets") {
				t.Errorf("%s %s: %+v", name, p, res)
			}
		}
	}
	res := r.call(t, "grep", map[string]any{"pattern": "needle"})
	if res.Failed || !strings.Contains(res.Output, "needle-main") || strings.Count(res.Output, "needle") != 1 ||
		!strings.Contains(res.Output, fmt.Sprintf("%d withheld files", len(secrets))) {
		t.Errorf("grep: %+v", res)
	}
	res = r.call(t, "find_files", map[string]any{"pattern": "**"})
	for p := range secrets {
		if !strings.Contains(res.Output, p) {
			t.Errorf("find_files does not list %s as it lists .env: %s", p, res.Output)
		}
	}
	res = r.call(t, "list_directory", map[string]any{})
	for _, p := range []string{".env", ".npmrc", ".git-credentials"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p) + `  \(.*withheld\)$`).MatchString(res.Output) {
			t.Errorf("list_directory does not mark %s withheld: %s", p, res.Output)
		}
	}
}

// TestSystemFilesRefused: with a workspace folder at /, read_file refuses
// /proc/self/environ (the daemon's environment, its API key in it) and the
// rest of /proc, /sys and /dev, by any path; grep and find_files refuse to
// search them.
func TestSystemFilesRefused(t *testing.T) {
	t.Setenv("CTXLS_TEST_SECRET", "needle-environ")
	r := newToolRig("/")
	for _, p := range []string{"proc/self/environ", "/proc/self/environ", "proc/self/root/proc/self/environ", "sys/devices/system/cpu/online", "dev/null"} {
		res := r.call(t, "read_file", map[string]any{"path": p})
		if !res.Failed || strings.Contains(res.Output, "needle") || !strings.Contains(res.Output, "system") {
			t.Errorf("read_file %s: %+v", p, res)
		}
	}
	for _, c := range []struct{ name, path string }{{"grep", "proc/self"}, {"find_files", "/proc"}, {"grep", "sys"}, {"list_directory", "dev"}} {
		res := r.call(t, c.name, map[string]any{"pattern": "needle", "path": c.path})
		if !res.Failed || strings.Contains(res.Output, "needle-environ") || !strings.Contains(res.Output, "system") {
			t.Errorf("%s %s: %+v", c.name, c.path, res)
		}
	}
	// Through a link in the workspace, whatever its root.
	root := t.TempDir()
	if err := os.Symlink("/proc/self/environ", filepath.Join(root, "env.txt")); err != nil {
		t.Fatal(err)
	}
	res := newToolRig("/").call(t, "read_file", map[string]any{"path": filepath.Join(root, "env.txt")})
	if !res.Failed || strings.Contains(res.Output, "needle") {
		t.Errorf("read_file through a link: %+v", res)
	}
}

// TestBinaryAndSparseFilesNotShown: read_file reports a binary file (a NUL
// byte in its first 8 KiB, as git decides) or a sparse one (its holes read
// as NULs) as what it is, not its bytes; grep skips them as binary.
func TestBinaryAndSparseFilesNotShown(t *testing.T) {
	root := t.TempDir()
	sparse := filepath.Join(root, "sparse.log")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil { // a hole of 1 MiB
		t.Fatal(err)
	}
	f.Close()
	// Text, then a hole past the first 8 KiB: git would call it text.
	holed := filepath.Join(root, "holed.log")
	put(t, holed, strings.Repeat("needle in the text\n", 1000))
	if err := os.Truncate(holed, 300<<10); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(root, "a.bin"), "\x7fELF\x00\x01needle")
	r := newToolRig(root)
	for _, c := range []struct {
		name string
		size int
	}{{"sparse.log", 1 << 20}, {"holed.log", 300 << 10}, {"a.bin", 12}} {
		res := r.call(t, "read_file", map[string]any{"path": c.name})
		want := fmt.Sprintf("binary file, %d bytes", c.size)
		if strings.ContainsRune(res.Output, 0) || len(res.Output) > 200 || !strings.Contains(res.Output, want) {
			t.Errorf("read_file %s: %d bytes, %d NULs, %.80q; want %q", c.name, len(res.Output), strings.Count(res.Output, "\x00"), res.Output, want)
		}
	}
	res := r.call(t, "grep", map[string]any{"pattern": "needle|\\x00"})
	if strings.ContainsRune(res.Output, 0) || strings.Contains(res.Output, "sparse.log") || strings.Contains(res.Output, "a.bin") || !strings.Contains(res.Output, "2 binary files") {
		t.Errorf("grep: %.300q", res.Output)
	}
}

// TestControlCharactersInPathsRefused: a path with a control character
// (C0 such as a line break or ESC, DEL, C1) is refused by every file tool
// with an error that shows it escaped, and nothing is made.
func TestControlCharactersInPathsRefused(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, "main.go"), "package main\n")
	r := newToolRig(root)
	for _, p := range []string{"a\nb.go", "x\x1b[31m.go", "tab\t.go", "del\x7f.go", "nel\u0085.go", "csi\u009b31m.go"} {
		for _, name := range []string{"create_file", "edit_file", "read_file", "grep", "find_files", "list_directory", "write_file"} {
			res := r.call(t, name, map[string]any{"path": p, "content": "x", "old_string": "package", "new_string": "pkg", "pattern": "x"})
			if !res.Failed || !strings.Contains(res.Output, "control character") || strings.ContainsAny(res.Output, "\n\x1b\t\x7f\u0085\u009b") {
				t.Errorf("%s %q: %+v", name, p, res)
			}
		}
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 || len(r.door.reviews) != 0 {
		t.Errorf("files made: %v; reviews %q", ents, r.door.reviews)
	}
}
