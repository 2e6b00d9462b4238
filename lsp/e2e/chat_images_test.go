package e2e_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/anthropictest"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// pngOf is a small PNG image.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestChatImages: a question's images (data URLs, as an editor pastes them)
// are copied into the session folder's sources/, named in the stored
// question, and sent as image parts at this turn and the later ones;
// what is not an image of the type it claims is refused before anything
// is stored.
func TestChatImages(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Screenshot"}}))
	s, _ := startChat(t, fake)
	pic := pngOf(t, 40, 20)
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)

	for _, c := range []struct{ name, url, want string }{
		{"not a data URL", "https://example.com/a.png", "data URL"},
		{"a BMP", "data:image/bmp;base64," + base64.StdEncoding.EncodeToString(pic), "PNG, JPEG, GIF and WebP"},
		{"JPEG claimed, PNG given", "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(pic), "not a jpeg image"},
		{"bad base64", "data:image/png;base64,%%%", "base64"},
	} {
		err := s.Call("ctxls/chat", map[string]any{"message": "look", "images": []string{c.url}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if n := len(fake.Streamed()); n != 0 {
		t.Fatalf("a refused image reached the provider: %d requests", n)
	}

	fake.Enqueue(openaitest.Reply{Chunks: []string{"A red diagonal."}}, openaitest.Reply{Chunks: []string{"Still red."}})
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "What does this show?", "images": []string{url}}, &res); err != nil || res.Text != "A red diagonal." {
		t.Fatalf("turn with an image: %+v %v", res, err)
	}
	// The model's title renames the session's folder after the turn: the
	// folder is read once it has (else it may move between the read of its
	// path and of the image).
	waitTitle(t, s, "Screenshot", "model")
	var shown api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &shown)
	q := shown.Messages[0].Content
	if !strings.HasPrefix(q, "What does this show?\n\n[image: sources/image-") || !strings.HasSuffix(q, "-1.png]") {
		t.Fatalf("the stored question: %q", q)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(q[strings.Index(q, "[image: "):], "[image: sources/"), "]")
	if b, err := os.ReadFile(filepath.Join(shown.Session.Folder, "sources", name)); err != nil || !bytes.Equal(b, pic) {
		t.Fatalf("the image in the session folder: %v (%d bytes)", err, len(b))
	}
	last := func() []string {
		reqs := fake.Streamed()
		var imgs []string
		for _, m := range reqs[len(reqs)-1].Parsed.Messages {
			imgs = append(imgs, openaitest.Images(m)...)
		}
		return imgs
	}
	if imgs := last(); len(imgs) != 1 || imgs[0] != url {
		t.Fatalf("the first turn's image parts: %d", len(imgs))
	}
	if q := fake.Streamed()[0].Question(); !strings.Contains(q, "[image: sources/"+name+"]") {
		t.Fatalf("the model is not told the image's name: %q", q)
	}
	// The next turn sends it again, the same bytes, with the history.
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": res.SessionID, "message": "And now?"}, &res); err != nil || res.Text != "Still red." {
		t.Fatalf("next turn: %+v %v", res, err)
	}
	if imgs := last(); len(imgs) != 1 || imgs[0] != url {
		t.Fatalf("the history's image parts: %d", len(imgs))
	}
	// The preview names the image part, without its data.
	var pv api.ChatPreviewResult
	s.MustCommand(api.ChatPreview, map[string]any{"sessionId": res.SessionID, "message": "preview"}, &pv)
	found := false
	for _, m := range pv.Messages {
		if strings.Contains(m.Content, "(image part 1: image/png, ") {
			found = true
		}
		if strings.Contains(m.Content, "base64,") {
			t.Fatalf("the preview shows the image's data")
		}
	}
	if !found {
		t.Fatalf("the preview does not say an image goes: %+v", pv.Messages)
	}
}

// TestAnthropicChatImages: over Anthropic's Messages API a question's image
// is an image block (base64, its media type) after the question's text,
// at this turn and the next.
func TestAnthropicChatImages(t *testing.T) {
	parallel(t, waitTests)
	fake := anthropictest.New(t, anthropictest.WithAPIKey(antKey))
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"Red."}}, anthropictest.Reply{Chunks: []string{"Screenshot"}})
	s, _, _ := startAnthropic(t, fake, "", 16000, 1000)
	pic := pngOf(t, 30, 30)
	data := base64.StdEncoding.EncodeToString(pic)
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "What colour?", "images": []string{"data:image/png;base64," + data}}, &res); err != nil || res.Text != "Red." {
		t.Fatalf("turn with an image: %+v %v", res, err)
	}
	// The title's request, which follows the first answer, takes its reply
	// before the second turn's is queued.
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"Still red."}})
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": res.SessionID, "message": "Sure?"}, &res); err != nil || res.Text != "Still red." {
		t.Fatalf("next turn: %+v %v", res, err)
	}
	var turns []anthropictest.Request
	for _, r := range fake.Requests() {
		if r.Parsed.Stream { // a turn's (the title's does not stream)
			turns = append(turns, r)
		}
	}
	if len(turns) != 2 {
		t.Fatalf("%d streamed requests", len(turns))
	}
	for r, req := range turns {
		var images []anthropictest.Block
		for _, m := range req.Parsed.Messages {
			for _, b := range m.Content {
				if b.Type == "image" {
					images = append(images, b)
				}
			}
		}
		if len(images) != 1 || images[0].Source.Type != "base64" || images[0].Source.MediaType != "image/png" || images[0].Source.Data != data {
			t.Fatalf("request %d: image blocks %+v", r, images)
		}
	}
}
