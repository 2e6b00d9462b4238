package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Image is one image a question carries.
type Image struct {
	MIME string
	Data []byte
}

// ParseDataURL reads an image given as a data URL,
// "data:image/png;base64,…" (how a browser reads a pasted image).
func ParseDataURL(u string) (Image, error) {
	head, data, ok := strings.Cut(u, ",")
	mime, isBase64 := strings.CutSuffix(strings.TrimPrefix(head, "data:"), ";base64")
	if !ok || !strings.HasPrefix(head, "data:") || !isBase64 {
		return Image{}, session.Invalidf("an image must be a base64 data URL (data:image/png;base64,…), got %q", truncate(u, 40))
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, session.Invalidf("the image's base64 is not valid: %v", err)
	}
	return Image{MIME: mime, Data: b}, nil
}

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
		info, err := s.store.AddFile(ctx, sessionID, imageName(im, stamp, i, taken), bytes.NewReader(im.Data))
		if err != nil {
			return names, err
		}
		taken = append(taken, info.Name)
		s.publish(FilesChanged{api.SessionFilesChangedParams{SessionID: sessionID, Subdir: "sources", Name: info.Name, Size: info.Size, By: session.AddedByUser}})
		names = append(names, info.Name)
	}
	return names, nil
}

// imageName is the name image i of a question gets in sources/,
// "image-STAMP-N.ext", never one taken already.
func imageName(im Image, stamp string, i int, taken []string) string {
	ext := chat.ImageTypes[im.MIME]
	base := fmt.Sprintf("image-%s-%d", stamp, i+1)
	name := base + ext
	for k := 2; slices.Contains(taken, name); k++ {
		name = fmt.Sprintf("%s-%d%s", base, k, ext)
	}
	return name
}

// QuestionImages are the images a stored question names that are still in
// the session folder (folder), in order.
func QuestionImages(folder, question string) []Image {
	var out []Image
	for _, name := range chat.ImageNames(question) {
		if mime, data, err := chat.ReadImage(folder, name); err == nil {
			out = append(out, Image{MIME: mime, Data: data})
		}
	}
	return out
}

// previewContent is a message of the model input as the preview shows it:
// its text, and for each image part a line saying what goes (the data
// itself is not shown).
func previewContent(m openai.ChatCompletionMessage) (string, int) {
	if len(m.MultiContent) == 0 {
		return m.Content, 0
	}
	var b strings.Builder
	images := 0
	for _, p := range m.MultiContent {
		switch p.Type {
		case openai.ChatMessagePartTypeText:
			b.WriteString(p.Text)
		case openai.ChatMessagePartTypeImageURL:
			images++
			head, data, _ := strings.Cut(p.ImageURL.URL, ",")
			fmt.Fprintf(&b, "\n(image part %d: %s, %s)", images, strings.TrimPrefix(strings.TrimSuffix(head, ";base64"), "data:"), session.Bytes(int64(base64.StdEncoding.DecodedLen(len(data)))))
		}
	}
	return b.String(), images
}
