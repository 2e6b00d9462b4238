package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetEnvHintPatchesOneField(t *testing.T) { forEachStore(t, testSetEnvHintPatchesOneField) }

func testSetEnvHintPatchesOneField(t *testing.T, s Store) {
	a, err := s.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// Other fields of the meta, which the patch must keep.
	if _, err := s.SetModel(ctx, a.ID, "gpt-4o"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkTitleRequested(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Get(ctx, a.ID)

	changed, err := s.SetEnvHint(ctx, a.ID, "vscode 1.90; workspace /w")
	if err != nil || !changed {
		t.Fatalf("first SetEnvHint: changed %v err %v", changed, err)
	}
	got, _ := s.Get(ctx, a.ID)
	if got.Meta.EnvHint != "vscode 1.90; workspace /w" || got.Meta.Model != "gpt-4o" || !got.Meta.TitleRequested {
		t.Errorf("meta after SetEnvHint: %+v", got.Meta)
	}
	if !got.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("updatedAt moved: %v → %v", before.UpdatedAt, got.UpdatedAt)
	}
	if changed, err := s.SetEnvHint(ctx, a.ID, "vscode 1.90; workspace /w"); err != nil || changed {
		t.Errorf("same hint again: changed %v err %v", changed, err)
	}
	if changed, err := s.SetEnvHint(ctx, a.ID, "nvim 0.10\n; workspace /x"); err != nil || !changed {
		t.Errorf("new hint: changed %v err %v", changed, err)
	}
	got, _ = s.Get(ctx, a.ID)
	if got.Meta.EnvHint != "nvim 0.10 ; workspace /x" || got.Meta.Model != "gpt-4o" {
		t.Errorf("meta after the second hint: %+v", got.Meta)
	}
	if changed, err := s.SetEnvHint(ctx, a.ID, ""); err != nil || !changed {
		t.Errorf("clearing: changed %v err %v", changed, err)
	}
	got, _ = s.Get(ctx, a.ID)
	if got.Meta.EnvHint != "" || got.Meta.Model != "gpt-4o" {
		t.Errorf("meta after clearing: %+v", got.Meta)
	}
	if _, err := s.SetEnvHint(ctx, "nosuchsession", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	long := strings.Repeat("é", MaxEnvHint)
	if _, err := s.SetEnvHint(ctx, a.ID, long); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, a.ID)
	if n := len(got.Meta.EnvHint); n > MaxEnvHint || n < MaxEnvHint-1 || !strings.HasPrefix(long, got.Meta.EnvHint) {
		t.Errorf("long hint kept as %d bytes", n)
	}
}

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
