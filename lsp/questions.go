package lsp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/ctxls/ctxls/api"
)

// questionBox holds the questions asked with ctxls/question (clients that
// set initializationOptions.questions) until they end: answered with
// ctxls.question.answer, timed out, or cancelled with their turn. Every
// question ends in ask, which sends ctxls/questionClosed exactly once.
type questionBox struct {
	// mu guards open and seq.
	mu   sync.Mutex
	open map[string]*openQuestion // by id
	seq  int64
}

// openQuestion is a question waiting for its answer.
type openQuestion struct {
	actions []string    // the action ids it offers
	answer  chan string // the chosen action's id (buffered: one answer)
}

// ask sends q as ctxls/question (its id set here) and waits until it is
// answered (the action's id) or ctx ends (ctx's error; the outcome told
// is "timeout" for a deadline, else "cancelled").
func (s *Server) ask(ctx context.Context, q api.QuestionParams) (string, error) {
	b := &s.questions
	o := &openQuestion{answer: make(chan string, 1)}
	for _, a := range q.Actions {
		o.actions = append(o.actions, a.ID)
	}
	b.mu.Lock()
	if b.open == nil {
		b.open = map[string]*openQuestion{}
	}
	b.seq++
	q.ID = "q" + strconv.FormatInt(b.seq, 10)
	b.open[q.ID] = o
	b.mu.Unlock()
	s.notify(ctx, api.Question, q)
	var action string
	var err error
	select {
	case action = <-o.answer:
	case <-ctx.Done():
		b.mu.Lock()
		_, stillOpen := b.open[q.ID]
		delete(b.open, q.ID)
		b.mu.Unlock()
		if stillOpen {
			err = ctx.Err()
		} else {
			action = <-o.answer // answered as ctx ended: the answer stands
		}
	}
	outcome := action
	switch {
	case err == context.DeadlineExceeded:
		outcome = api.OutcomeTimeout
	case err != nil:
		outcome = api.OutcomeCancelled
	}
	s.notify(ctx, api.QuestionClosed, api.QuestionClosedParams{ID: q.ID, Outcome: outcome})
	return action, err
}

// answer is ctxls.question.answer: it ends question a.ID with a.Action.
func (s *Server) answer(a *api.QuestionAnswerArgs) (*api.QuestionAnswerResult, error) {
	b := &s.questions
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.open[a.ID]
	if !ok {
		return nil, api.Errorf(api.KindNotFound, "question %q is not open: it was answered, timed out or cancelled (or never asked)", a.ID)
	}
	if !slices.Contains(o.actions, a.Action) {
		return nil, api.Errorf(api.KindInvalidArgument, "question %q has no action %q; its actions: %s", a.ID, a.Action, fmt.Sprint(o.actions))
	}
	delete(b.open, a.ID)
	o.answer <- a.Action
	return &api.QuestionAnswerResult{V: api.V, ID: a.ID, Action: a.Action}, nil
}

// QuestionAnswer answers the questions this door asked.
func (o ops) QuestionAnswer(_ context.Context, a *api.QuestionAnswerArgs) (*api.QuestionAnswerResult, error) {
	return o.s.answer(a)
}
