package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

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
	if _, err := s.SetEnvHint(ctx, "nosuchsession", "x"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	long := strings.Repeat("é", session.MaxEnvHint)
	if _, err := s.SetEnvHint(ctx, a.ID, long); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, a.ID)
	if n := len(got.Meta.EnvHint); n > session.MaxEnvHint || n < session.MaxEnvHint-1 || !strings.HasPrefix(long, got.Meta.EnvHint) {
		t.Errorf("long hint kept as %d bytes", n)
	}
}
