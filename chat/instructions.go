package chat

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxls/ctxls/internal/human"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// The project instructions files: AGENTS.md (Codex, Zed, Copilot,
// opencode, Cursor read it) at each workspace root and in the folders of the
// files a turn involves; at a root without one, the first of the others
// (Claude Code's, Copilot's).
const InstructionsName = "AGENTS.md"

// RootFallbacks are read at a workspace root that has no AGENTS.md, the
// first found.
var RootFallbacks = []string{"CLAUDE.md", filepath.Join(".github", "copilot-instructions.md")}

// Caps of the instructions given to the model, in bytes: each file's, and
// all of them together (the root's first).
const (
	MaxInstructionBytes  = 32 << 10
	MaxInstructionsBytes = 64 << 10
)

// Instructions finds and reads the project instructions a turn with these
// workspace folders and files (the relevant-context files and the turn's
// own) gives the model: AGENTS.md at each root (else CLAUDE.md, else
// .github/copilot-instructions.md), then AGENTS.md in each folder between
// a file and its root, from the root down (deeper folders later: what
// every turn shares comes first, and the nearest file takes precedence).
// Only files inside a workspace folder, links resolved, are read (the
// workspace guard the tools use), never below .git; the editor's text when
// it has the file open (b; nil: the engine's), else the disk's. Each file is
// cut to MaxInstructionBytes and all of them to MaxInstructionsBytes, in
// whole lines, with a note of what was cut; a binary or non-UTF-8 file is
// skipped with a log line.
func (e *Engine) Instructions(roots, files []string, b Buffers) []prompts.Instruction {
	if b == nil {
		b = e.Buffers
	}
	log := e.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return findInstructions(roots, files, b, log)
}

func findInstructions(roots, files []string, b Buffers, log *slog.Logger) []prompts.Instruction {
	r := instructionsReader{guard: &workspace.Guard{Roots: roots}, b: b, log: log, left: MaxInstructionsBytes}
	var out []prompts.Instruction
	for _, p := range r.paths(roots, files) {
		if in, ok := r.read(p); ok {
			r.left -= len(in.Content)
			out = append(out, in)
		}
	}
	return out
}

// instructionsReader reads a turn's instructions files, the editor's text
// first.
type instructionsReader struct {
	guard *workspace.Guard
	b     Buffers
	log   *slog.Logger
	left  int // bytes the files read next may still take
}

// open is path's text in the editor, if it is open there.
func (r *instructionsReader) open(p string) (string, bool) {
	if r.b == nil {
		return "", false
	}
	return r.b.TextByPath(p)
}

func (r *instructionsReader) exists(p string) bool {
	if _, ok := r.open(p); ok {
		return true
	}
	_, err := os.Lstat(p)
	return err == nil
}

// paths are the instructions files in the order the model gets them:
// each root's (AGENTS.md, else a fallback), then the AGENTS.md files of
// the folders between the turn's files and their root, shallowest first.
func (r *instructionsReader) paths(roots, files []string) []string {
	var paths []string
	for _, root := range roots {
		for _, name := range append([]string{InstructionsName}, RootFallbacks...) {
			if p := filepath.Join(root, name); r.exists(p) {
				paths = append(paths, p)
				break
			}
		}
	}
	var nested []string
	for _, f := range files {
		root := rootOf(roots, f)
		if root == "" {
			continue
		}
		for dir := filepath.Dir(f); dir != root && session.Within(dir, root); dir = filepath.Dir(dir) {
			if p := filepath.Join(dir, InstructionsName); !underGit(root, p) && r.exists(p) {
				nested = append(nested, p)
			}
		}
	}
	slices.SortFunc(nested, func(a, b string) int {
		return cmp.Or(cmp.Compare(strings.Count(a, string(filepath.Separator)), strings.Count(b, string(filepath.Separator))), cmp.Compare(a, b))
	})
	for _, p := range nested {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// read reads one instructions file within what is left of the budget;
// not ok when it may not or cannot be read (logged).
func (r *instructionsReader) read(p string) (prompts.Instruction, bool) {
	log := r.log
	if why := r.guard.Refusal(p); why != "" {
		log.Info("instructions file not read", "path", p, "why", why)
		return prompts.Instruction{}, false
	}
	in := prompts.Instruction{Path: p}
	text, ok := r.open(p)
	if ok {
		// Open in the editor: unsaved when its text is not the disk's.
		in.Unsaved = !sameOnDisk(p, text)
		in.Size = len(text)
	} else {
		fi, err := os.Stat(p)
		if err != nil {
			log.Info("instructions file not read", "path", p, "err", err)
			return prompts.Instruction{}, false
		}
		if text, err = workspace.ReadLimited(p, MaxInstructionBytes+1); err != nil {
			log.Info("instructions file not read", "path", p, "err", err)
			return prompts.Instruction{}, false
		}
		in.Size = int(fi.Size())
	}
	if workspace.Binary(text) {
		log.Info("instructions file skipped: binary", "path", p)
		return prompts.Instruction{}, false
	}
	limit, why := MaxInstructionBytes, fmt.Sprintf("instructions files are given up to %s bytes each", human.Thousands(MaxInstructionBytes))
	if r.left < limit {
		limit, why = r.left, fmt.Sprintf("the instructions files together are given up to %s bytes", human.Thousands(MaxInstructionsBytes))
	}
	// A file of one long line is shown in part; what is left of the total
	// shows whole lines or nothing.
	in.Content = wholeLines(text, limit, limit == MaxInstructionBytes)
	if !utf8.ValidString(in.Content) {
		log.Info("instructions file skipped: not UTF-8", "path", p)
		return prompts.Instruction{}, false
	}
	switch {
	case in.Content == "" && in.Size > 0:
		in.Cut = fmt.Sprintf("not shown: %s", why)
	case len(in.Content) < in.Size:
		in.Cut = fmt.Sprintf("cut: the first %s bytes of its %s shown; %s", human.Thousands(len(in.Content)), human.Thousands(in.Size), why)
	}
	return in, true
}

// rootOf is the deepest workspace folder holding path ("" when none).
func rootOf(roots []string, path string) string {
	best := ""
	for _, r := range roots {
		if session.Within(path, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// underGit: path lies in a .git folder below root.
func underGit(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err != nil || slices.Contains(strings.Split(rel, string(filepath.Separator)), ".git")
}

// wholeLines is text when it fits in limit bytes, else as many of its
// whole lines as fit; with partial, a first line longer than limit is cut
// at a character's start instead of left out.
func wholeLines(text string, limit int, partial bool) string {
	if len(text) <= limit {
		return text
	}
	if limit <= 0 {
		return ""
	}
	if i := strings.LastIndexByte(text[:limit], '\n'); i >= 0 {
		return text[:i+1]
	}
	if !partial {
		return ""
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// sameOnDisk reports whether the file at p holds exactly text.
func sameOnDisk(p, text string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.Size() != int64(len(text)) {
		return false
	}
	disk, err := workspace.ReadLimited(p, int64(len(text))+1)
	return err == nil && disk == text
}
