package storetest

import (
	"testing"

	"github.com/ctxls/ctxls/session"
)

func testAddedBy(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	s.UpdateContext(ctx, a.ID, "files", []string{"/w/a.go"}, "", session.AddedByUser, nil)
	s.UpdateContext(ctx, a.ID, "files", []string{"/home/u/.ssh/id_rsa"}, session.ModeMerge, session.AddedByModel, nil)
	by, err := s.AddedBy(ctx, a.ID, "files")
	if err != nil || by["/w/a.go"] != session.AddedByUser || by["/home/u/.ssh/id_rsa"] != session.AddedByModel {
		t.Fatalf("origins %v %v", by, err)
	}
	// A user merge of something else keeps the model's item the model's.
	s.UpdateContext(ctx, a.ID, "files", []string{"/w/b.go"}, session.ModeMerge, session.AddedByUser, nil)
	by, _ = s.AddedBy(ctx, a.ID, "files")
	if by["/home/u/.ssh/id_rsa"] != session.AddedByModel || by["/w/b.go"] != session.AddedByUser {
		t.Errorf("after user merge: %v", by)
	}
	// The user naming it makes it the user's.
	s.UpdateContext(ctx, a.ID, "files", []string{"/home/u/.ssh/id_rsa"}, session.ModeMerge, session.AddedByUser, nil)
	by, _ = s.AddedBy(ctx, a.ID, "files")
	if by["/home/u/.ssh/id_rsa"] != session.AddedByUser {
		t.Errorf("after user restated: %v", by)
	}
}
