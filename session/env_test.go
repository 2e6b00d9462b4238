package session

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGitBranch(t *testing.T) {
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := t.TempDir()
	branch := filepath.Join(base, "branch")
	write(filepath.Join(branch, ".git", "HEAD"), "ref: refs/heads/feature/login\n")
	detached := filepath.Join(base, "detached")
	write(filepath.Join(detached, ".git", "HEAD"), "3f786850e387550fdab836ed7e6dc881de23001b\n")
	worktree := filepath.Join(base, "worktree")
	write(filepath.Join(base, "main", ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/wt-branch\n")
	write(filepath.Join(worktree, ".git"), "gitdir: ../main/.git/worktrees/wt\n")
	absWorktree := filepath.Join(base, "abs")
	write(filepath.Join(absWorktree, ".git"), "gitdir: "+filepath.Join(base, "main", ".git", "worktrees", "wt")+"\n")
	plain := filepath.Join(base, "plain")
	write(filepath.Join(plain, "README"), "x")
	broken := filepath.Join(base, "broken")
	write(filepath.Join(broken, ".git"), "not a gitdir line\n")

	for dir, want := range map[string]string{
		branch: "feature/login", detached: "3f78685", worktree: "wt-branch", absWorktree: "wt-branch",
		plain: "", broken: "", filepath.Join(base, "missing"): "",
	} {
		if got := GitBranch(dir); got != want {
			t.Errorf("GitBranch(%s) = %q, want %q", filepath.Base(dir), got, want)
		}
	}

	if got, want := EnvHint("vscode 1.90.0", []string{plain, branch}), "vscode 1.90.0; workspace "+plain+", "+branch+"; git branch feature/login"; got != want {
		t.Errorf("EnvHint = %q, want %q", got, want)
	}
	if got, want := EnvHint("", []string{plain}), "workspace "+plain; got != want {
		t.Errorf("EnvHint without client or repository = %q, want %q", got, want)
	}
	if got := EnvHint("  ", nil); got != "" {
		t.Errorf("EnvHint of nothing = %q", got)
	}
}
