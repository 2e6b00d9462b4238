package lsp

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// TestQuestionBoxEndsOnce: a question ends exactly once, whether its answer
// or its context's end comes first or both at once: an answer taken is the
// outcome even when the context ends as it is given, and an answer after
// the end is refused (notFound).
func TestQuestionBoxEndsOnce(t *testing.T) {
	t.Parallel()
	s := NewServer(service.Config{})
	actions := []api.QuestionAction{{ID: "allow"}, {ID: "deny"}}
	for i := range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*100*time.Microsecond)
		var wg sync.WaitGroup
		var action string
		var err error
		wg.Add(1)
		go func() {
			defer wg.Done()
			action, err = s.ask(ctx, api.QuestionParams{Kind: api.QuestionPermission, Actions: actions})
		}()
		var id string
		for id == "" {
			s.questions.mu.Lock()
			for k := range s.questions.open {
				id = k
			}
			s.questions.mu.Unlock()
			if id == "" {
				select {
				case <-ctx.Done():
					id = "gone"
				default:
				}
			}
		}
		res, aerr := s.answer(&api.QuestionAnswerArgs{ID: id, Action: "deny"})
		wg.Wait()
		cancel()
		switch {
		case aerr == nil && (res.Action != "deny" || action != "deny" || err != nil):
			t.Fatalf("answer taken, but ask got %q, %v", action, err)
		case aerr != nil && !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("answer refused (%v), but ask got %q, %v", aerr, action, err)
		}
		s.questions.mu.Lock()
		n := len(s.questions.open)
		s.questions.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d questions left open", n)
		}
	}
	if _, err := s.answer(&api.QuestionAnswerArgs{ID: "q1", Action: "allow"}); api.KindOf(err) != api.KindNotFound {
		t.Errorf("a closed question's answer: %v", err)
	}
}
