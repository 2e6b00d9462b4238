package service

import (
	"context"

	"github.com/ctxls/ctxls/api"
)

// QuestionAnswer is ctxls.question.answer. The questions are a door's (the
// LSP door asks with ctxls/question and keeps them open; its ops answer
// them): a door that asks otherwise has none open, so every id is unknown.
func (s *Service) QuestionAnswer(_ context.Context, a *api.QuestionAnswerArgs) (*api.QuestionAnswerResult, error) {
	return nil, api.Errorf(api.KindNotFound, "no question %q is open here", a.ID)
}
