package mcpclient

import (
	"net/http"
)

// Tool is a tool a server offers.
type Tool struct {
	Name, Title, Description string
	InputSchema              any
	ReadOnly                 bool // the server says it changes nothing (readOnlyHint)
	Destructive              bool // it may destroy (destructiveHint; true unless the server says not)
}

// headers is a transport that adds a server's headers to each request.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}
