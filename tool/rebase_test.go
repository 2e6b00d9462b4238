package tool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/workspace"
)

// textDoor holds one open document whose text the test changes.
type textDoor struct {
	text    string
	version int32
}

func (d *textDoor) Read(context.Context, string, string) (string, string, *int32, bool) {
	v := d.version
	return d.text, "file:///w/a.txt", &v, true
}
func (d *textDoor) Review(context.Context, EditRequest) (Decision, error) { return AllowOnce, nil }
func (d *textDoor) Apply(context.Context, EditRequest) (EditResult, error) {
	return EditResult{Applied: true}, nil
}

// TestRebase: an edit made again against the text the user has now: the
// same replacement where old_string now is; a conflict when the text it
// replaces changed, or (replace_all) occurs a different number of times;
// the text unchanged keeps the edit as it was but for the version.
func TestRebase(t *testing.T) {
	g := &workspace.Guard{Roots: []string{"/w"}}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name, was, now, old, new string
		all                      bool
		want                     string // the text after the edit; "" for a conflict
	}{
		{"unchanged", "a\nb\nc\n", "a\nb\nc\n", "b\n", "B\n", false, "a\nB\nc\n"},
		{"typed above and below", "a\nb\nc\n", "x\na\nb\nc\ny\n", "b\n", "B\n", false, "x\na\nB\nc\ny\n"},
		{"the replaced text changed", "a\nb\nc\n", "a\nb2\nc\n", "b\nc", "B\nc", false, ""},
		// (Still found once, though inside a longer line now: made there.)
		{"found inside a longer line", "a\nb\nc\n", "a\nbb\nc\n", "b\nc", "B\nc", false, "a\nbB\nc\n"},
		{"now twice", "a\nb\nc\n", "b\nc\na\nb\nc\n", "b\nc", "B\nc", false, ""},
		{"replace_all, same count", "b b\n", "x b b\n", "b", "B", true, "x B B\n"},
		{"replace_all, one more", "b b\n", "b b b\n", "b", "B", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := editArgs{Path: "a.txt", OldString: str(c.old), NewString: str(c.new), ReplaceAll: c.all}
			r := EditRequest{SessionID: "s", Path: "/w/a.txt", URI: "file:///w/a.txt", OldText: c.was, Version: new(int32), whole: &wholeText{}}
			var err error
			if r.Start, r.OldEnd, r.Inserted, err = replaceIn(r.Path, c.was, c.old, c.new, c.all); err != nil {
				t.Fatal(err)
			}
			door := &textDoor{text: c.now, version: 7}
			got, err := rebase(context.Background(), door, g, r, a)
			var cf *conflict
			switch {
			case c.want == "" && !errors.As(err, &cf):
				t.Fatalf("want a conflict, got %v (%q)", err, got.NewText())
			case c.want == "":
				return
			case err != nil:
				t.Fatal(err)
			}
			if got.NewText() != c.want || got.Version == nil || *got.Version != 7 {
				t.Errorf("got %q (version %v), want %q (version 7)", got.NewText(), got.Version, c.want)
			}
			if c.was != c.now && !strings.Contains(got.Diff, strings.Split(c.new, "\n")[0]) {
				t.Errorf("the diff: %s", got.Diff)
			}
		})
	}
}

// TestPartOf: the text the user chose (a change left out) is applied in
// place of the edit, and a rebase makes that part; a text that changes the
// file outside the edit is refused.
func TestPartOf(t *testing.T) {
	g := &workspace.Guard{Roots: []string{"/w"}}
	old, new := "a\nb\nc\nd\n", "A\nb\nc\nD\n"
	was := "0\n" + old + "9\n"
	a := editArgs{Path: "a.txt", OldString: &old, NewString: &new}
	r := EditRequest{SessionID: "s", Path: "/w/a.txt", OldText: was, whole: &wholeText{}}
	r.Start, r.OldEnd, r.Inserted, _ = replaceIn(r.Path, was, old, new, false)
	p, pa, err := partOf(r, a, "0\na\nb\nc\nD\n9\n", g)
	if err != nil {
		t.Fatal(err)
	}
	if p.NewText() != "0\na\nb\nc\nD\n9\n" || *pa.NewString != "a\nb\nc\nD\n" {
		t.Errorf("the part: %q, its new_string %q", p.NewText(), *pa.NewString)
	}
	// Typed above meanwhile: the part made where the edit's text now is.
	door := &textDoor{text: "typed\n" + was}
	got, err := rebase(context.Background(), door, g, p, pa)
	if err != nil || got.NewText() != "typed\n0\na\nb\nc\nD\n9\n" {
		t.Errorf("rebased: %q, %v", got.NewText(), err)
	}
	if _, _, err := partOf(r, a, "X\na\nb\nc\nD\n9\n", g); err == nil {
		t.Error("a text changed outside the edit was taken")
	}
}
