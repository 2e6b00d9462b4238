package mcpclient

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is a tool a server offers.
type Tool struct {
	Name, Title, Description string
	InputSchema              any
	ReadOnly                 bool // the server says it changes nothing (readOnlyHint)
	Destructive              bool // it may destroy (destructiveHint; true unless the server says not)
}

// MaxMessageBytes is the most one answer of a server may be: the Go SDK's
// cap on a stdio message and on a server-sent event, which ctxls applies to
// an HTTP server's plain JSON answers too (the SDK reads those whole).
const MaxMessageBytes = sdk.DefaultMaxLineLength

// httpClient is the client an HTTP server s is reached with: s's headers
// go only to s's origin, and an answer is at most limit bytes.
//
// A redirect to another origin is refused rather than followed without the
// headers: the request's body (the tool's arguments, the user's data) would
// still go to a host the user never named, and an endpoint that moved for
// good is better configured anew than followed silently on every request.
func httpClient(s Server, limit int64) *http.Client {
	u, _ := url.Parse(s.URL) // checked by Parse
	home := origin(u)
	return &http.Client{
		Transport: &serverTransport{server: s.Name, origin: home, headers: s.Headers, limit: limit, lists: &listIDs{}},
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if o := origin(r.URL); o != home {
				return fmt.Errorf("server %q redirects to another origin, %s; ctxls does not follow it (the configured URL's is %s)", s.Name, o, home)
			}
			if len(via) >= 10 {
				return fmt.Errorf("server %q: stopped after 10 redirects", s.Name)
			}
			return nil
		},
	}
}

// origin is a URL's scheme, host and port (the default port made
// explicit), as browsers compare them.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// serverTransport adds a server's headers to the requests to its origin
// (never to another: see httpClient), caps the bodies of its answers, and
// leaves the tools the SDK cannot decode out of its answers to tools/list
// (see listIDs).
type serverTransport struct {
	server  string
	origin  string
	headers map[string]string
	limit   int64
	lists   *listIDs
}

func (t *serverTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if len(t.headers) > 0 && origin(r.URL) == t.origin {
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	if err := requestSent(r, t.lists); err != nil {
		return nil, err
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	// A stream of events may go on as long as a call does: the SDK caps
	// each event at MaxMessageBytes itself. Any other body is one answer.
	ct := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type")))
	if strings.HasPrefix(ct, "text/event-stream") {
		resp.Body = newEventAnswers(resp.Body, t.lists, int(t.limit))
		return resp, nil
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, server: t.server, limit: t.limit, left: t.limit + 1}
	if t.lists.waiting() {
		resp.Body = &jsonAnswer{body: resp.Body, lists: t.lists}
	}
	return resp, nil
}

// cappedBody fails a read past limit bytes: the reader stops there,
// without reading (or holding) the rest.
type cappedBody struct {
	io.ReadCloser
	server      string
	limit, left int64 // left is one more than may still be read
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left <= 0 {
		return 0, fmt.Errorf("server %q: an answer is larger than the limit of %s", b.server, bytesText(b.limit))
	}
	return n, err
}

// bytesText is a number of bytes in words.
func bytesText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
