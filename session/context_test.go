package session

import (
	"testing"
)

func TestAddedBy(t *testing.T) { forEachStore(t, testAddedBy) }

func testAddedBy(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	s.SetContext(ctx, a.ID, "files", []string{"/w/a.go"}, "")
	s.SetContextBy(ctx, a.ID, "files", []string{"/home/u/.ssh/id_rsa"}, ModeMerge, AddedByModel)
	by, err := s.AddedBy(ctx, a.ID, "files")
	if err != nil || by["/w/a.go"] != AddedByUser || by["/home/u/.ssh/id_rsa"] != AddedByModel {
		t.Fatalf("origins %v %v", by, err)
	}
	// A user merge of something else keeps the model's item the model's.
	s.SetContext(ctx, a.ID, "files", []string{"/w/b.go"}, ModeMerge)
	by, _ = s.AddedBy(ctx, a.ID, "files")
	if by["/home/u/.ssh/id_rsa"] != AddedByModel || by["/w/b.go"] != AddedByUser {
		t.Errorf("after user merge: %v", by)
	}
	// The user naming it makes it the user's.
	s.SetContext(ctx, a.ID, "files", []string{"/home/u/.ssh/id_rsa"}, ModeMerge)
	by, _ = s.AddedBy(ctx, a.ID, "files")
	if by["/home/u/.ssh/id_rsa"] != AddedByUser {
		t.Errorf("after user restated: %v", by)
	}
}
