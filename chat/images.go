package chat

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig of pasted GIFs
	_ "image/jpeg"
	_ "image/png"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// A question's images are files of its session folder's sources/, named in
// the stored question by a line of their own, "[image: sources/NAME]"
// (ImageMarker). The line stays in the text the model reads, so it knows
// each image's name; the image itself goes as an image part after the text
// (MultiContent: an image_url with a data URL for OpenAI-compatible APIs,
// an image block for Anthropic's), read again from the folder at every
// turn, the same bytes each time, so a provider's prompt cache still holds.
// An image no longer in the folder stays a name, with a note.

// ImageTypes are the image types a question may carry (what OpenAI's and
// Anthropic's APIs both take).
var ImageTypes = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

// MaxImageBytes bounds one image (Anthropic's limit); MaxImages the images
// of one question.
const (
	MaxImageBytes = 5 << 20
	MaxImages     = 10
)

// ImageTokens is what an image counts for in the window's budget: about
// the most either API charges for one (Anthropic scales images to at most
// about 1,600 tokens; OpenAI's high detail is at most about 1,100).
const ImageTokens = 1600

// ImageMarker is the line that names image name (a file of sources/) in a
// question.
func ImageMarker(name string) string { return "[image: sources/" + name + "]" }

var imageLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\[image: sources/([^\]\n/\\]+)\]$`)
})

// ImageNames are the images a question names, in order.
func ImageNames(content string) []string {
	if !strings.Contains(content, "[image: sources/") {
		return nil
	}
	var out []string
	for _, m := range imageLine().FindAllStringSubmatch(content, MaxImages) {
		if m[1] != "." && m[1] != ".." {
			out = append(out, m[1])
		}
	}
	return out
}

// CheckImage checks one image a question carries: its type, its size, and
// that its bytes are an image of that type (GIF, JPEG and PNG are decoded
// as far as their size; WebP is checked by its header).
func CheckImage(mime string, data []byte) error {
	if _, ok := ImageTypes[mime]; !ok {
		return session.Invalidf("an image of type %q: PNG, JPEG, GIF and WebP images are taken", mime)
	}
	if len(data) > MaxImageBytes {
		return fmt.Errorf("%w: an image of %s; the limit is %s", session.ErrTooLarge, session.Bytes(int64(len(data))), session.Bytes(MaxImageBytes))
	}
	if mime == "image/webp" {
		if len(data) < 12 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WEBP" {
			return session.Invalidf("the image is not a WebP image")
		}
		return nil
	}
	_, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || "image/"+format != mime {
		return session.Invalidf("the image is not a %s image", strings.TrimPrefix(mime, "image/"))
	}
	return nil
}

// imageMIME is the type of an image file by its name.
func imageMIME(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	if ext == ".jpeg" {
		ext = ".jpg"
	}
	for mime, e := range ImageTypes {
		if e == ext {
			return mime
		}
	}
	return ""
}

// imageCache keeps images read for the model as data URLs, by path, size
// and time of change, at most imageCacheBytes in all (emptied when full):
// a session's images go with every turn.
type imageCache struct {
	mu    sync.Mutex
	urls  map[string]cachedImage
	bytes int
}

type cachedImage struct {
	size int64
	mod  time.Time
	url  string
}

const imageCacheBytes = 64 << 20

// statImage is the file at path when it is a regular file (no link
// followed) of at most MaxImageBytes.
func statImage(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxImageBytes {
		return nil, fmt.Errorf("%s is %s, over the %s an image may be", path, session.Bytes(fi.Size()), session.Bytes(MaxImageBytes))
	}
	return fi, nil
}

// dataURL returns the image at path as a data URL.
func (c *imageCache) dataURL(path, mime string) (string, error) {
	fi, err := statImage(path)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if e, ok := c.urls[path]; ok && e.size == fi.Size() && e.mod.Equal(fi.ModTime()) {
		c.mu.Unlock()
		return e.url, nil
	}
	c.mu.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	url := "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.urls == nil || c.bytes+len(url) > imageCacheBytes {
		c.urls, c.bytes = map[string]cachedImage{}, 0
	}
	if old, ok := c.urls[path]; ok {
		c.bytes -= len(old.url)
	}
	c.urls[path] = cachedImage{size: fi.Size(), mod: fi.ModTime(), url: url}
	c.bytes += len(url)
	return url, nil
}

// withImages gives the questions among msgs that name images their image
// parts, read from the session folder's sources/.
//
// The folder is renamed with the session's title, which a title request
// may do while a turn is assembled: an image not found in the folder read
// with the turn is looked for again in the one the store names now.
func (e *Engine) withImages(ctx context.Context, sessionID, folder string, msgs []openai.ChatCompletionMessage) {
	moved := false
	read := func(name string) (string, error) {
		url, err := e.imageURL(folder, name)
		if err != nil && errors.Is(err, fs.ErrNotExist) && !moved && e.Store != nil && sessionID != "" {
			moved = true
			if ss, gerr := e.Store.Get(ctx, sessionID); gerr == nil && ss.Folder != folder {
				folder = ss.Folder
				url, err = e.imageURL(folder, name)
			}
		}
		return url, err
	}
	for i, m := range msgs {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		names := ImageNames(m.Content)
		if len(names) == 0 {
			continue
		}
		text := m.Content
		var parts []openai.ChatMessagePart
		for _, name := range names {
			url, err := read(name)
			if err != nil {
				e.Log.Warn("an image of a question cannot be read", "image", name, "err", err)
				text = strings.Replace(text, ImageMarker(name), ImageMarker(name)+" (this image is no longer in the session folder)", 1)
				continue
			}
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: url}})
		}
		if len(parts) == 0 {
			msgs[i].Content = text
			continue
		}
		msgs[i].Content = ""
		msgs[i].MultiContent = append([]openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: text}}, parts...)
	}
}

// imageURL reads image name of a session folder's sources/.
func (e *Engine) imageURL(folder, name string) (string, error) {
	path, mime, err := imagePath(folder, name)
	if err != nil {
		return "", err
	}
	return e.images.dataURL(path, mime)
}

// imagePath is where image name of a session folder's sources/ is, and its
// type by its name.
func imagePath(folder, name string) (path, mime string, err error) {
	mime = imageMIME(name)
	if mime == "" {
		return "", "", fmt.Errorf("%s: not a PNG, JPEG, GIF or WebP image", name)
	}
	if folder == "" || name != filepath.Base(name) || name == ".." {
		return "", "", fs.ErrNotExist
	}
	dir, err := session.SubdirIn(folder, "sources", false)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(dir, name), mime, nil
}

// ReadImage reads image name of a session folder's sources/ (a question's,
// see ImageNames): its type and its bytes.
func ReadImage(folder, name string) (mime string, data []byte, err error) {
	path, mime, err := imagePath(folder, name)
	if err != nil {
		return "", nil, err
	}
	if _, err := statImage(path); err != nil {
		return "", nil, err
	}
	data, err = os.ReadFile(path)
	return mime, data, err
}

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
		return Image{}, session.Invalidf("an image must be a base64 data URL (data:image/png;base64,…), got %q", session.Truncate(u, 40))
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, session.Invalidf("the image's base64 is not valid: %v", err)
	}
	return Image{MIME: mime, Data: b}, nil
}

// ImageName is the name image i of a question gets in sources/,
// "image-STAMP-N.ext", never one taken already.
func ImageName(im Image, stamp string, i int, taken []string) string {
	ext := ImageTypes[im.MIME]
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
	for _, name := range ImageNames(question) {
		if mime, data, err := ReadImage(folder, name); err == nil {
			out = append(out, Image{MIME: mime, Data: data})
		}
	}
	return out
}

// DecodeImages decodes and checks a question's images (data URLs); an
// error names the image (images[i]).
func DecodeImages(urls []string) ([]Image, error) {
	images := make([]Image, 0, len(urls))
	for i, u := range urls {
		im, err := ParseDataURL(u)
		if err == nil {
			err = CheckImage(im.MIME, im.Data)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: images[%d]: %w", api.ChatRequest, i, err)
		}
		images = append(images, im)
	}
	if len(images) > MaxImages {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: %d images; a question may carry %d", api.ChatRequest, len(images), MaxImages)
	}
	return images, nil
}
