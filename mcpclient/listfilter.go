package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	// The Go SDK's own decoder, with the SDK's option: a tool the SDK
	// cannot decode is found by decoding it as the SDK does.
	sdkjson "github.com/segmentio/encoding/json"

	"github.com/ctxls/ctxls/internal/termsafe"
)

// A tools/list answer is decoded by the Go SDK whole: one tool it cannot
// decode (a name that is not a string, annotations that are not an
// object, null) fails the page, and so the server's every tool. ctxls
// reads each answer to a tools/list request before the SDK does and
// leaves such tools out of it, noting what it left out and why in the
// result's _meta under leftOutKey (always set there, so a server cannot
// write it); the listing reads it back (leftOutOf). Over stdio a
// connection's messages are read through filterConn; over HTTP the
// answers' bodies, JSON or a stream of events, through serverTransport
// (a Connection wrapped there would hide the SDK's own streamable
// connection's unexported session hooks, which set the protocol version
// header).

// leftOutKey is the key of the result's _meta where filterTools notes what
// it left out.
const leftOutKey = "ctxls/toolsLeftOut"

// maxLeftOutReasons is how many reasons a page keeps (the count is whole).
const maxLeftOutReasons = 20

// LeftOut is what a server listed that is not used: how many tools, and
// why (the first few, each naming the entry).
type LeftOut struct {
	Count   int      `json:"count"`
	Reasons []string `json:"reasons"`
}

// listIDs are the ids of a connection's tools/list requests waiting for
// their answers.
type listIDs struct {
	mu  sync.Mutex
	ids map[any]bool // jsonrpc.ID.Raw()
}

// sent notes msg when it is a tools/list request: called before it is
// written, since its answer may come before the write returns.
func (l *listIDs) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != "tools/list" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids == nil {
		l.ids = map[any]bool{}
	}
	l.ids[req.ID.Raw()] = true
}

// waiting reports whether a tools/list request waits for its answer.
func (l *listIDs) waiting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ids) > 0
}

// answer filters msg's tools when it is the answer to a tools/list
// request, and reports whether it did.
func (l *listIDs) answer(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	l.mu.Lock()
	id := resp.ID.Raw()
	listed := l.ids[id]
	delete(l.ids, id)
	l.mu.Unlock()
	if !listed || resp.Error != nil || len(resp.Result) == 0 {
		return false
	}
	out, ok := filterTools(resp.Result)
	if ok {
		resp.Result = out
	}
	return ok
}

// filterTools is a tools/list result with the tools the SDK cannot decode
// left out, and what was left out noted under _meta[leftOutKey]. ok is
// false for a result that is not an object with a tools array and an
// object for _meta: the SDK fails it, rightly (it is no list).
func filterTools(result json.RawMessage) (out json.RawMessage, ok bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(result, &fields) != nil || fields == nil {
		return nil, false
	}
	var entries []json.RawMessage
	if json.Unmarshal(fields["tools"], &entries) != nil {
		return nil, false
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := fields["_meta"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			return nil, false
		}
	}
	kept := make([]json.RawMessage, 0, len(entries))
	left := LeftOut{Reasons: []string{}}
	for i, e := range entries {
		why := toolProblem(e)
		if why == "" {
			kept = append(kept, e)
			continue
		}
		if left.Count++; len(left.Reasons) < maxLeftOutReasons {
			left.Reasons = append(left.Reasons, fmt.Sprintf("entry %d%s: %s", i+1, entryName(e), why))
		}
	}
	fields["tools"], _ = json.Marshal(kept)
	meta[leftOutKey], _ = json.Marshal(left)
	fields["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(fields)
	return out, err == nil
}

// leftOutOf is what filterTools noted in a result's _meta.
func leftOutOf(meta sdk.Meta) LeftOut {
	var left LeftOut
	if v, ok := meta[leftOutKey]; ok {
		b, _ := json.Marshal(v)
		json.Unmarshal(b, &left)
	}
	return left
}

// maxToolDepth is how deep a tool may nest and still be decoded: the SDK
// refuses a result nested deeper than 1,000 levels, and a tool sits two
// levels down in it (the result, its tools array).
const maxToolDepth = 1000 - 2

// toolProblem says why the SDK cannot decode a tools/list entry as a
// tool, or why it is no tool ("" when it is one).
func toolProblem(e json.RawMessage) string {
	switch first(e) {
	case 'n':
		return "it is null, not a tool"
	case '"':
		return "it is a string, not a tool"
	case '[':
		return "it is an array, not a tool"
	case '{':
	default:
		return "it is a " + jsonKind(e) + ", not a tool"
	}
	if depth(e) > maxToolDepth {
		return fmt.Sprintf("it nests deeper than %d levels", maxToolDepth)
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(e, &fields)
	// The fields the SDK reads, each alone first, to say which is wrong.
	for _, f := range []struct {
		key, what string
		into      any
	}{
		{"name", "its name is not a string", new(string)},
		{"title", "its title is not a string", new(string)},
		{"description", "its description is not a string", new(string)},
		{"annotations", "its annotations are not an object", new(map[string]json.RawMessage)},
		{"annotations", "its annotations are not as the protocol has them", new(sdk.ToolAnnotations)},
		{"icons", "its icons are not a list of icons", new([]sdk.Icon)},
		{"_meta", "its _meta is not an object", new(map[string]any)},
	} {
		raw, ok := fields[f.key]
		if ok && string(raw) != "null" && sdkDecode(raw, f.into) != nil {
			return f.what
		}
	}
	var tool *sdk.Tool
	if err := sdkDecode(e, &tool); err != nil {
		return "the SDK cannot read it: " + err.Error()
	}
	if tool.Name == "" {
		return "it has no name"
	}
	return ""
}

// sdkDecode decodes data into v as the Go SDK decodes a message's result.
func sdkDecode(data []byte, v any) error {
	d := sdkjson.NewDecoder(bytes.NewReader(data))
	d.DontMatchCaseInsensitiveStructFields()
	return d.Decode(v)
}

// entryName is ` ("name": NAME)` for an entry with a name, its JSON cut at
// 60 bytes and escaped as a terminal line (termsafe: JSON leaves C1
// controls and bidi overrides as they are); "" without.
func entryName(e json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(e, &fields) != nil {
		return ""
	}
	name, ok := fields["name"]
	if !ok {
		return ""
	}
	s := string(name)
	if len(s) > 60 {
		s = strings.ToValidUTF8(s[:60], "") + "…"
	}
	return ` ("name": ` + termsafe.Line(s) + `)`
}

// first is the first byte of a JSON value (0 for none).
func first(e json.RawMessage) byte {
	e = bytes.TrimLeft(e, " \t\r\n")
	if len(e) == 0 {
		return 0
	}
	return e[0]
}

// jsonKind names a scalar JSON value's kind.
func jsonKind(e json.RawMessage) string {
	switch first(e) {
	case 't', 'f':
		return "boolean"
	default:
		return "number"
	}
}

// depth is how deep a JSON value nests (an object or array holding
// scalars is 1), as the SDK counts it.
func depth(e json.RawMessage) int {
	d, most := 0, 0
	in, esc := false, false
	for _, b := range e {
		switch {
		case in && esc:
			esc = false
		case in && b == '\\':
			esc = true
		case in && b == '"':
			in = false
		case in:
		case b == '"':
			in = true
		case b == '{' || b == '[':
			d++
			most = max(most, d)
		case b == '}' || b == ']':
			d--
		}
	}
	return most
}

// filterConn is a stdio server's connection, its answers to tools/list
// requests filtered (see listIDs).
type filterConn struct {
	sdk.Connection
	lists listIDs
}

func (c *filterConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.lists.sent(msg)
	return c.Connection.Write(ctx, msg)
}

func (c *filterConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.lists.answer(msg)
	}
	return msg, err
}

// filterTransport is a stdio transport whose connection is a filterConn.
type filterTransport struct{ sdk.Transport }

func (t filterTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &filterConn{Connection: c}, nil
}

// requestSent notes an HTTP request's JSON-RPC message in lists (see
// listIDs.sent); the body is read and put back.
func requestSent(r *http.Request, lists *listIDs) error {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if bytes.Contains(body, []byte(`"tools/list"`)) {
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			lists.sent(msg)
		}
	}
	return nil
}

// jsonAnswer is an answer's JSON body with a tools/list answer filtered
// (see listIDs): read whole at the first Read, at most limit bytes (the
// body is capped already).
type jsonAnswer struct {
	body  io.ReadCloser
	lists *listIDs
	out   io.Reader // nil until read
}

func (a *jsonAnswer) Read(p []byte) (int, error) {
	if a.out == nil {
		data, err := io.ReadAll(a.body)
		if err != nil {
			return 0, err
		}
		if msg, err := jsonrpc.DecodeMessage(data); err == nil && a.lists.answer(msg) {
			if b, err := jsonrpc.EncodeMessage(msg); err == nil {
				data = b
			}
		}
		a.out = bytes.NewReader(data)
	}
	return a.out.Read(p)
}

func (a *jsonAnswer) Close() error { return a.body.Close() }

// eventAnswers is a stream of events (text/event-stream) with the answers
// to tools/list requests in it filtered (see listIDs): an event is read
// whole, then passed on as it came or, when it is such an answer, with the
// answer filtered in one data line. An event longer than limit bytes ends
// the filtering: the rest passes as it comes (the SDK refuses such an
// event itself).
type eventAnswers struct {
	body  io.ReadCloser
	r     *bufio.Reader
	lists *listIDs
	limit int
	out   bytes.Buffer // what is read and not yet passed on
	raw   bool         // the filtering ended
	err   error        // the body's, once out is empty
}

func newEventAnswers(body io.ReadCloser, lists *listIDs, limit int) *eventAnswers {
	return &eventAnswers{body: body, r: bufio.NewReader(body), lists: lists, limit: limit}
}

func (a *eventAnswers) Read(p []byte) (int, error) {
	for a.out.Len() == 0 && a.err == nil {
		if a.raw {
			return a.r.Read(p)
		}
		a.event()
	}
	if a.out.Len() > 0 {
		return a.out.Read(p)
	}
	return 0, a.err
}

// event reads the next event into out, filtered; or what there was of
// it when the body ended, filtered too (the SDK takes an event the body's
// end cut short), or when it is over limit (raw is then set).
func (a *eventAnswers) event() {
	var lines [][]byte
	size := 0
	for {
		line, err := a.line(a.limit - size)
		size += len(line)
		lines = append(lines, line)
		switch {
		case errors.Is(err, errEventTooLong):
			a.raw = true
			a.out.Write(bytes.Join(lines, nil))
			return
		case err != nil:
			a.err = err
			a.out.Write(a.filtered(lines))
			return
		case len(bytes.TrimRight(line, "\r\n")) == 0: // the event's end
			a.out.Write(a.filtered(lines))
			return
		}
	}
}

var errEventTooLong = errors.New("event too long")

// line reads a line, its '\n' included; errEventTooLong past room bytes
// (with what was read).
func (a *eventAnswers) line(room int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := a.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > room {
			return line, errEventTooLong
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// filtered is an event's lines, its data filtered when it is the answer to
// a tools/list request (the data joined as the SDK joins it, see
// scanEvents).
func (a *eventAnswers) filtered(lines [][]byte) []byte {
	var data [][]byte
	name := ""
	for _, l := range lines {
		k, v, _ := bytes.Cut(bytes.TrimRight(l, "\r\n"), []byte(":"))
		switch string(k) {
		case "data":
			data = append(data, bytes.TrimSpace(v))
		case "event":
			name = string(bytes.TrimSpace(v))
		}
	}
	if len(data) == 0 || name != "" && name != "message" || !a.lists.waiting() {
		return bytes.Join(lines, nil)
	}
	msg, err := jsonrpc.DecodeMessage(bytes.Join(data, []byte("\n")))
	if err != nil || !a.lists.answer(msg) {
		return bytes.Join(lines, nil)
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return bytes.Join(lines, nil)
	}
	var out bytes.Buffer
	wrote := false
	for _, l := range lines {
		if k, _, ok := bytes.Cut(l, []byte(":")); ok && string(k) == "data" {
			if !wrote {
				out.WriteString("data: ")
				out.Write(b)
				out.WriteString("\n")
				wrote = true
			}
			continue
		}
		out.Write(l)
	}
	return out.Bytes()
}

func (a *eventAnswers) Close() error { return a.body.Close() }
