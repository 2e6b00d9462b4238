package buffer

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	s := NewSet(2)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	s.Open("file:///a", "/a", "go", 1, "package a\n")
	s.Open("file:///b", "/b", "go", 1, "b")
	if err := s.Change("file:///a", 2, []Change{{Range: &Range{Position{1, 0}, Position{1, 0}}, Text: "x"}}, UTF16); err != nil {
		t.Fatal(err)
	}
	if err := s.Change("file:///nope", 2, []Change{{Text: "x"}}, UTF16); !errors.Is(err, ErrNotOpen) {
		t.Errorf("unknown uri: %v", err)
	}
	if err := s.Change("file:///a", 3, []Change{{Range: &Range{Position{0, 3}, Position{0, 1}}, Text: "x"}}, UTF16); err == nil {
		t.Error("reversed range accepted")
	}
	text, v, ok := s.Text("file:///a")
	if !ok || text != "package a\nx" || v != 2 {
		t.Errorf("text %q v %d ok %v", text, v, ok)
	}
	if got, ok := s.TextByPath("/a"); !ok || got != text {
		t.Errorf("by path: %q %v", got, ok)
	}
	s.Focus("file:///b", "/b")
	c := s.Candidates()
	if len(c) != 2 || c[0].URI != "file:///b" || !c[0].Active || c[1].Active || !c[1].Dirty || c[1].Size != 11 {
		t.Fatalf("candidates %+v", c)
	}
	s.Save("file:///a")
	s.Close("file:///a")
	if _, _, ok := s.Text("file:///a"); ok {
		t.Error("closed text kept")
	}
	c = s.Candidates()
	if len(c) != 2 || c[0].URI != "file:///a" || c[0].Open || c[0].Dirty {
		t.Fatalf("after close: %+v", c)
	}
	// Closed files beyond maxRecent are forgotten, oldest first.
	for i := range 3 {
		u := fmt.Sprintf("file:///c%d", i)
		s.Open(u, "", "go", 1, "")
		s.Close(u)
	}
	c = s.Candidates()
	if len(c) != 3 { // b (open) + the 2 most recent closed
		t.Fatalf("pruning: %+v", c)
	}
	// Reopen works.
	s.Open("file:///a", "/a", "go", 5, "again")
	if text, _, _ := s.Text("file:///a"); text != "again" {
		t.Errorf("reopen: %q", text)
	}
}

func TestSetConcurrent(t *testing.T) {
	s := NewSet(10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := fmt.Sprintf("file:///%d", g)
			s.Open(u, "", "txt", 1, "")
			for i := range 200 {
				if err := s.Change(u, int32(i), []Change{{Range: &Range{Position{0, uint32(i)}, Position{0, uint32(i)}}, Text: "x"}}, UTF16); err != nil {
					t.Error(err)
				}
				s.Candidates()
				s.Focus(u, "")
			}
		}()
	}
	wg.Wait()
	for g := range 4 {
		if text, _, _ := s.Text(fmt.Sprintf("file:///%d", g)); len(text) != 200 {
			t.Errorf("doc %d: %d bytes", g, len(text))
		}
	}
}
