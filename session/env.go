package session

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// MaxEnvHint is the longest envHint kept, in bytes.
const MaxEnvHint = 1024

// CleanEnvHint makes a hint safe to show on one line of the model's input:
// control characters (newlines included) become spaces, runs of spaces
// one, and it is cut to MaxEnvHint bytes on a character boundary.
func CleanEnvHint(hint string) string {
	hint = strings.Join(strings.FieldsFunc(hint, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(hint) > MaxEnvHint {
		cut := MaxEnvHint
		for cut > 0 && !isRuneStart(hint[cut]) {
			cut--
		}
		hint = hint[:cut]
	}
	return hint
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// EnvHint describes where a session is being used:
// "<client>; workspace <root>, <root>; git branch <b>". The client part is
// left out when empty, the workspace part when there are no roots, and the
// branch when no workspace folder is a git repository (the branch is that
// of the first one that is).
func EnvHint(client string, roots []string) string {
	var parts []string
	if client = strings.TrimSpace(client); client != "" {
		parts = append(parts, client)
	}
	if len(roots) > 0 {
		parts = append(parts, "workspace "+strings.Join(roots, ", "))
	}
	for _, r := range roots {
		if b := GitBranch(r); b != "" {
			parts = append(parts, "git branch "+b)
			break
		}
	}
	return CleanEnvHint(strings.Join(parts, "; "))
}

// GitBranch reads the checked-out branch of the repository whose work tree
// is dir, from dir/.git/HEAD, without running git: "ref: refs/heads/x"
// gives x, a detached HEAD the first 7 characters of its commit. .git may
// be a file ("gitdir: <path>", as in linked worktrees and submodules). ""
// when dir is not a repository's top folder or HEAD cannot be read.
func GitBranch(dir string) string {
	dotGit := filepath.Join(dir, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		return ""
	}
	gitDir := dotGit
	if !fi.IsDir() {
		b, err := readSmall(dotGit)
		if err != nil {
			return ""
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return ""
		}
		gitDir = strings.TrimSpace(rest)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
	}
	b, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		ref = strings.TrimSpace(ref)
		if branch, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			return branch
		}
		return ref
	}
	if len(head) >= 7 && isHex(head) {
		return head[:7]
	}
	return ""
}

// readSmall reads at most 4 KiB of a regular file: HEAD and .git files are
// a line long, and a FIFO or a huge file named .git must not hang or grow
// the daemon.
func readSmall(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return b, nil
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
