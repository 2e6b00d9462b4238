package session

import (
	"context"
	"fmt"
	"testing"
)

// fixture sizes shrink with -short (bench/run --short, CI).
func size(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

func BenchmarkList10kSessions(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	n := size(10000, 200)
	// Rows in one transaction (folders are not needed to list).
	tx, _ := s.db.Begin()
	for i := range n {
		tx.Exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES (?, ?, 'user', ?, ?, ?)",
			fmt.Sprintf("id%06d", i), fmt.Sprintf("session %d", i), i, i, fmt.Sprintf("f%06d", i))
	}
	tx.Commit()
	for b.Loop() {
		if list, _, err := s.List(ctx, ListOptions{}); err != nil || len(list) != 50 {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearch100kMessages(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	sess, _ := s.Create(ctx, "search fixture")
	n := size(100000, 2000)
	words := []string{"deploy", "canary", "redirect", "login", "database", "index", "migration", "cache", "token", "latency"}
	tx, _ := s.db.Begin()
	stmt, _ := tx.Prepare("INSERT INTO messages (session_id, role, content, status, created_at) VALUES (?, 'user', ?, 'complete', ?)")
	for i := range n {
		stmt.Exec(sess.ID, fmt.Sprintf("message %d about %s and %s with some more words", i, words[i%10], words[(i*7)%10]), i)
	}
	tx.Commit()
	for b.Loop() {
		if hits, err := s.Search(ctx, "canary login", 20); err != nil || len(hits) == 0 {
			b.Fatal(err, len(hits))
		}
	}
}

func BenchmarkResume1000Messages(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	sess, _ := s.Create(ctx, "long")
	tx, _ := s.db.Begin()
	for i := range 1000 {
		tx.Exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES (?, 'assistant', ?, 'complete', ?)", sess.ID, fmt.Sprintf("answer %d: %0200d", i, i), i)
	}
	tx.Commit()
	s.SetContext(ctx, sess.ID, "ports", []string{"8080"}, "")
	for b.Loop() {
		if _, err := s.Get(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Context(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
		if msgs, err := s.Messages(ctx, sess.ID); err != nil || len(msgs) != 1000 {
			b.Fatal(err)
		}
	}
}
