package service

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Image is one image a question carries.
type Image = chat.Image

// QuestionImages are the images a stored question names that are still in
// the session folder (chat.QuestionImages).
func QuestionImages(folder, question string) []Image { return chat.QuestionImages(folder, question) }

// storeImages copies a question's images, checked already (StartTurn:
// chat.CheckImage, chat.MaxImages), into the session folder's sources/ and
// returns the names they got there.
func (s *Service) storeImages(ctx context.Context, sessionID string, images []Image) ([]string, error) {
	taken, err := s.store.ListFiles(ctx, sessionID, "sources")
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		return nil, err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	var names []string
	for i, im := range images {
		info, err := s.store.AddFile(ctx, sessionID, chat.ImageName(im, stamp, i, taken), bytes.NewReader(im.Data))
		if err != nil {
			return names, err
		}
		taken = append(taken, info.Name)
		s.publish(SessionFilesChanged{api.SessionFilesChangedParams{SessionID: sessionID, Subdir: "sources", Name: info.Name, Size: info.Size, By: session.AddedByUser}})
		names = append(names, info.Name)
	}
	return names, nil
}
