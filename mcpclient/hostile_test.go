package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostile starts an MCP server over streamable HTTP written by hand, so a
// test can make it answer as no SDK server would. answer gets each call's
// method and params and returns its result as JSON text; initialize is
// answered for it unless answer handles it, and tools/list with no tools.
// Another answer of "" is "method not found"; "hang" is no answer: the request hangs until the client
// gives up.
func hostile(t *testing.T, answer func(method string, params json.RawMessage) string) *httptest.Server {
	return hostileServer(t, false, answer)
}

// hostileServer is hostile; with sse, each answer comes as a stream of
// events (text/event-stream): a progress notification first, then the
// answer, its data split over two data lines.
func hostileServer(t *testing.T, sse bool, answer func(method string, params json.RawMessage) string) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if msg.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := answer(msg.Method, msg.Params)
		switch {
		case result == "" && msg.Method == "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`
		case result == "" && msg.Method == "tools/list":
			result = `{"tools":[]}`
		}
		var body string
		switch result {
		case "hang":
			w.Header().Set("Content-Type", "application/json")
			<-r.Context().Done()
			return
		case "":
			body = `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32601,"message":"method not found"}}`
		default:
			body = `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + result + `}`
		}
		if !sse {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		first, rest := body, ""
		if i := strings.Index(body, ","); i >= 0 {
			first, rest = body[:i+1], body[i+1:]
		}
		fmt.Fprintf(w, "event: message\nid: 1\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"none","progress":1}}`)
		fmt.Fprintf(w, ": a comment\nevent: message\nid: 2\ndata: %s\ndata: %s\n\n", first, rest)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// The tests of issue 37: what a hostile MCP server cannot do.

// TestRedirectKeepsHeaders: a server that redirects initialize to another
// origin does not get the configured headers there (Go drops Authorization
// on such a redirect, but a transport that adds the headers to every
// request put them back); the redirect is refused, saying so.
func TestRedirectKeepsHeaders(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"Authorization", "X-Api-Key"} {
			if v := r.Header.Get(k); v != "" {
				leaked.Store(k + ": " + v)
			}
		}
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := Server{Name: "moved", Type: "http", URL: first.URL, Headers: map[string]string{"Authorization": "Bearer ghp_secret", "X-Api-Key": "k3y"}}
	_, err := m.Tools(ctx, s)
	if v := leaked.Load(); v != nil {
		t.Errorf("the other origin got %s", v)
	}
	if err == nil || !strings.Contains(err.Error(), `server "moved" redirects to another origin`) {
		t.Errorf("the redirect's error: %v", err)
	}
}

// TestRedirectSameOrigin: a redirect within the configured origin is
// followed, with the headers.
func TestRedirectSameOrigin(t *testing.T) {
	var ts *httptest.Server
	ts = hostile(t, func(string, json.RawMessage) string { return "" })
	h := ts.Config.Handler
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Tools(ctx, Server{Name: "here", Type: "http", URL: ts.URL + "/old", Headers: map[string]string{"Authorization": "Bearer right"}}); err != nil {
		t.Error(err)
	}
}

// TestAnswerTooLarge: an initialize answer larger than MaxMessageBytes
// fails, naming the server and the limit, without the rest being read.
func TestAnswerTooLarge(t *testing.T) {
	const total = 48 << 20
	var written atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&msg)
		w.Header().Set("Content-Type", "application/json")
		head := `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"version":"1","name":"`
		n, _ := w.Write([]byte(head))
		written.Add(int64(n))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
		w.Write([]byte(`"}}}`))
	}))
	defer ts.Close()
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := m.Tools(ctx, Server{Name: "big", Type: "http", URL: ts.URL})
	if err == nil || !strings.Contains(err.Error(), `server "big": an answer is larger than the limit of 16 MiB`) {
		t.Errorf("the error: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := written.Load(); n >= total {
		t.Errorf("the server wrote all of its %d MiB: the client read it all", n>>20)
	}
}

// TestEndlessPages: a tool list that goes on without end, or past the
// bounds of tools or bytes, fails at the bound and none of its tools are
// used.
func TestEndlessPages(t *testing.T) {
	var pages atomic.Int64
	tool := func(i int, desc string) string {
		return fmt.Sprintf(`{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}`, i, desc)
	}
	cases := map[string]struct {
		page func(n int) string
		want string
	}{
		"pages": {func(n int) string { return fmt.Sprintf(`{"tools":[%s],"nextCursor":"c%d"}`, tool(n, ""), n) }, "its list goes on past 100 pages; none of its tools are used"},
		"tools": {func(n int) string {
			var ts []string
			for i := range 400 {
				ts = append(ts, tool(n*1000+i, ""))
			}
			return fmt.Sprintf(`{"tools":[%s],"nextCursor":"c%d"}`, strings.Join(ts, ","), n)
		}, "it lists more than 1000 tools; none of its tools are used"},
		"bytes": {func(n int) string {
			return fmt.Sprintf(`{"tools":[%s],"nextCursor":"c%d"}`, tool(n, strings.Repeat("d", 300<<10)), n)
		}, "its list is larger than 1 MiB; none of its tools are used"}, // with the bound lowered from 16 MiB
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			pages.Store(0)
			ts := hostile(t, func(method string, _ json.RawMessage) string {
				if method == "tools/list" {
					return c.page(int(pages.Add(1)))
				}
				return ""
			})
			m := NewManager("test", nil)
			defer m.Close()
			m.limits.listBytes = 1 << 20
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			tools, err := m.Tools(ctx, Server{Name: "endless", Type: "http", URL: ts.URL})
			if err == nil || !strings.Contains(err.Error(), `server "endless": listing its tools: `+c.want) || tools != nil {
				t.Errorf("%d tools, error %v", len(tools), err)
			}
			if n := pages.Load(); n > 100 {
				t.Errorf("%d pages were asked for", n)
			}
		})
	}
}

// TestHungServerBacksOff: a server that never answers tools/list, or
// initialize, costs one timeout; the next needs fail at once, with the same
// words all through the back-off, which is long.
func TestHungServerBacksOff(t *testing.T) {
	for _, hangAt := range []string{"tools/list", "initialize"} {
		t.Run(strings.ReplaceAll(hangAt, "/", "_"), func(t *testing.T) {
			ts := hostile(t, func(method string, _ json.RawMessage) string {
				if method == hangAt {
					return "hang"
				}
				return ""
			})
			m := NewManager("test", nil)
			defer m.Close()
			m.limits.start, m.limits.list = 500*time.Millisecond, 500*time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s := Server{Name: "hung", Type: "http", URL: ts.URL}
			_, err := m.Tools(ctx, s)
			if err == nil || !strings.Contains(err.Error(), "within 500ms") {
				t.Fatalf("the first need: %v", err)
			}
			var first string
			for i := range 3 {
				begun := time.Now()
				_, err := m.Tools(ctx, s)
				if took := time.Since(begun); took > 100*time.Millisecond {
					t.Errorf("need %d waited %s", i+2, took)
				}
				if err == nil || !strings.Contains(err.Error(), "it is tried again in 30s") {
					t.Errorf("need %d: %v", i+2, err)
				} else if first == "" {
					first = err.Error()
				} else if err.Error() != first {
					t.Errorf("the words changed within a back-off:\n%s\n%s", first, err)
				}
				time.Sleep(150 * time.Millisecond)
			}
		})
	}
}

// TestProgressThrottled: a server sending thousands of progress
// notifications during a call reaches the caller a few times a second,
// and never after the call returned.
func TestProgressThrottled(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "chatty", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "work", Description: "Reports progress a lot"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			end := time.Now().Add(time.Second)
			for i := 0; time.Now().Before(end); i++ {
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Message: "working"})
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got int
	var returned, late bool
	begun := time.Now()
	res, err := m.Call(ctx, Server{Name: "chatty", Type: "http", URL: ts.URL}, "work", nil, func(Progress) {
		mu.Lock()
		got++
		late = late || returned
		mu.Unlock()
	})
	mu.Lock()
	returned = true
	mu.Unlock()
	most := int(time.Since(begun)/progressEvery) + progressBurst + 1 // and the last, passed on at the end
	if err != nil || Text(res) != "done" {
		t.Fatalf("call: %v %v", res, err)
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if got == 0 || got > most {
		t.Errorf("%d progress reports in %s; want 1 to %d", got, time.Since(begun).Round(time.Millisecond), most)
	}
	if late {
		t.Error("a progress report came after the call returned")
	}
}

// TestStartsAFewAtATime: many servers needed at once start at most
// maxStarts at a time.
func TestStartsAFewAtATime(t *testing.T) {
	var running, most atomic.Int64
	ts := hostile(t, func(method string, _ json.RawMessage) string {
		if method == "initialize" {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		return ""
	})
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			if _, err := m.Tools(ctx, Server{Name: fmt.Sprint("s", i), Type: "http", URL: fmt.Sprintf("%s/?n=%d", ts.URL, i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := most.Load(); n > maxStarts {
		t.Errorf("%d servers started at once; want at most %d", n, maxStarts)
	}
}

// TestTooManyServers: a configuration of a thousand servers keeps the
// first MaxServers and says so in one error.
func TestTooManyServers(t *testing.T) {
	raw := map[string]json.RawMessage{}
	for i := range 1000 {
		raw[fmt.Sprintf("s%04d", i)] = json.RawMessage(`{"command":"x"}`)
	}
	servers, errs := ParseServers(raw, "session")
	if len(servers) != 64 || len(errs) != 1 || !strings.Contains(fmt.Sprint(errs), "1000 servers are configured; at most 64 are used") {
		t.Errorf("%d servers, errors %d: %.300v", len(servers), len(errs), errs)
	}
}

// TestBadSchemaKeepsList: tools whose input schemas ctxls cannot use do not
// cost the server's other tools: the SDK reads a schema as any JSON, and
// package tool leaves such tools out one by one. (A tool the SDK cannot
// decode at all: TestMalformedToolsLeftOut.)
func TestBadSchemaKeepsList(t *testing.T) {
	ts := hostile(t, func(method string, _ json.RawMessage) string {
		if method == "tools/list" {
			return `{"tools":[{"name":"good","inputSchema":{"type":"object"}},{"name":"str","inputSchema":{"type":"string"}},{"name":"odd","inputSchema":"nope"}]}`
		}
		return ""
	})
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tools, err := m.Tools(ctx, Server{Name: "mixed", Type: "http", URL: ts.URL})
	if err != nil || len(tools) != 3 || tools[0].Name != "good" {
		t.Errorf("%+v %v", tools, err)
	}
}

// serveRaw is a stdio MCP server that writes its JSON-RPC by hand, so it
// can list tools no SDK server would: tools is the tools/list result, as
// it is. A tools/call is answered with the tool's name.
func serveRaw(in io.Reader, out io.Writer, tools string) {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		var result string
		switch msg.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = tools
		case "tools/call":
			b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": "called " + msg.Params.Name}}})
			result = string(b)
		default:
			fmt.Fprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"method not found\"}}\n", msg.ID)
			continue
		}
		fmt.Fprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n", msg.ID, result)
	}
}

// malformedTools is a tools/list page with five entries the Go SDK cannot
// decode beside three it can (one of them with a "Name" the SDK, matching
// case, does not read).
const malformedTools = `{"tools":[
	{"name":"good","description":"fine","inputSchema":{"type":"object"}},
	{"name":42,"inputSchema":{"type":"object"}},
	{"name":"hinted","inputSchema":{"type":"object"},"annotations":"yes"},
	null,
	"a tool",
	{"name":"described","description":{"text":"x"},"inputSchema":{"type":"object"}},
	{"name":"cased","Name":5,"inputSchema":{"type":"object"}},
	{"name":"good2","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}
]}`

// TestMalformedToolsLeftOut: a server whose tools/list page holds tools
// the Go SDK cannot decode (a name that is not a string, annotations that
// are not an object, null, …) keeps its well-formed tools, over stdio and
// over HTTP (a JSON answer or a stream of events); the others are left
// out, logged once with the server's name and why, and counted.
func TestMalformedToolsLeftOut(t *testing.T) {
	var page bytes.Buffer
	json.Compact(&page, []byte(malformedTools)) // one line, as stdio frames it
	answer := func(method string, _ json.RawMessage) string {
		if method == "tools/list" {
			return page.String()
		}
		if method == "tools/call" {
			return `{"content":[{"type":"text","text":"called"}]}`
		}
		return ""
	}
	servers := map[string]Server{
		"stdio": {Name: "rawtools", Type: "stdio", Command: os.Args[0], Env: map[string]string{"MCPCLIENT_TEST_SERVER": "raw", "MCPCLIENT_RAW_TOOLS": page.String()}},
		"json":  {Name: "rawtools", Type: "http", URL: hostileServer(t, false, answer).URL},
		"sse":   {Name: "rawtools", Type: "http", URL: hostileServer(t, true, answer).URL},
	}
	for name, s := range servers {
		t.Run(name, func(t *testing.T) {
			var logs syncBuffer
			m := NewManager("test", slog.New(slog.NewTextHandler(&logs, nil)))
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			tools, err := m.Tools(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, []string{"good", "cased", "good2"}) {
				t.Errorf("tools %v", names)
			}
			if res, err := m.Call(ctx, s, "good", nil, nil); err != nil || !strings.HasPrefix(Text(res), "called") {
				t.Errorf("calling a tool kept: %v %v", res, err)
			}
			if _, err := m.Tools(ctx, s); err != nil {
				t.Fatal(err)
			}
			left := m.LeftOut(s)
			want := []string{
				`entry 2 ("name": 42): its name is not a string`,
				`entry 3 ("name": "hinted"): its annotations are not an object`,
				`entry 4: it is null, not a tool`,
				`entry 5: it is a string, not a tool`,
				`entry 6 ("name": "described"): its description is not a string`,
			}
			if left.Count != 5 || !slices.Equal(left.Reasons, want) {
				t.Errorf("left out: %d %q", left.Count, left.Reasons)
			}
			if n := strings.Count(logs.String(), "mcp server tools left out"); n != 1 || !strings.Contains(logs.String(), "server=rawtools") {
				t.Errorf("logged %d times:\n%s", n, logs.String())
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a log).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestToolProblem: why an entry of a tools/list page is left out, for each
// way the Go SDK fails to decode one; a tool it reads is kept.
func TestToolProblem(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000)
	for entry, want := range map[string]string{
		`{"name":"ok","inputSchema":{"type":"object"}}`:           "",
		`{"name":"ok","inputSchema":"a schema ctxls leaves out"}`: "",
		`{"name":"ok","Name":5,"NAME":[]}`:                        "",
		`{"name":"ok","annotations":null,"icons":null}`:           "",
		`{"name":"ok","extra":{"anything":[1,2]}}`:                "",
		`{"name":42}`:            "its name is not a string",
		`{"inputSchema":{}}`:     "it has no name",
		`{"name":""}`:            "it has no name",
		`{"name":"t","title":7}`: "its title is not a string",
		`{"name":"t","annotations":{"readOnlyHint":"yes"}}`: "its annotations are not as the protocol has them",
		`{"name":"t","icons":{"src":"x"}}`:                  "its icons are not a list of icons",
		`{"name":"t","icons":[{"src":3}]}`:                  "its icons are not a list of icons",
		`{"name":"t","_meta":[]}`:                           "its _meta is not an object",
		`{"name":"t","outputSchema":1,"x":` + deep + `}`:    "it nests deeper than 998 levels",
		`17`:             "it is a number, not a tool",
		`true`:           "it is a boolean, not a tool",
		`[{"name":"t"}]`: "it is an array, not a tool",
	} {
		if got := toolProblem(json.RawMessage(entry)); got != want {
			t.Errorf("%.60s: %q, want %q", entry, got, want)
		}
	}
}

// TestFilterTools: a server cannot write what ctxls notes as left out (its
// own note under the key is replaced), every other field of the result
// and of its _meta is kept, and a result that is no list is left to the
// SDK to refuse.
func TestFilterTools(t *testing.T) {
	out, ok := filterTools(json.RawMessage(`{"tools":[{"name":"a"},1],"nextCursor":"c2","_meta":{"ctxls/toolsLeftOut":{"count":99,"reasons":["forged"]},"other":true}}`))
	var res sdk.ListToolsResult
	if !ok || json.Unmarshal(out, &res) != nil || len(res.Tools) != 1 || res.NextCursor != "c2" || res.Meta["other"] != true {
		t.Fatalf("%v %s", ok, out)
	}
	if left := leftOutOf(res.Meta); left.Count != 1 || !slices.Equal(left.Reasons, []string{"entry 2: it is a number, not a tool"}) {
		t.Errorf("left out: %+v", left)
	}
	for _, notAList := range []string{`[]`, `{"tools":{}}`, `{"tools":[],"_meta":5}`, `nope`} {
		if _, ok := filterTools(json.RawMessage(notAList)); ok {
			t.Errorf("%s was filtered", notAList)
		}
	}
}

// TestEventAnswersEdges: in a stream of events, the answer to a tools/list
// request is filtered when the body ends without the blank line after it,
// events of another name and other answers pass as they came, and an
// event over the limit ends the filtering (the SDK refuses it).
func TestEventAnswersEdges(t *testing.T) {
	read := func(body string, limit int, ids ...int64) string {
		var lists listIDs
		for _, id := range ids {
			rid, _ := jsonrpc.MakeID(float64(id))
			lists.sent(&jsonrpc.Request{ID: rid, Method: "tools/list"})
		}
		b, err := io.ReadAll(newEventAnswers(io.NopCloser(strings.NewReader(body)), &lists, limit))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	bad := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":1},{"name":"ok"}]}}`
	if got := read("event: message\ndata: "+bad, 1<<20, 1); strings.Contains(got, `"name":1`) || !strings.Contains(got, `"name":"ok"`) {
		t.Errorf("an answer the body's end cut short: %q", got)
	}
	other := "event: other\ndata: " + bad + "\n\n"
	if got := read(other, 1<<20, 1); got != other {
		t.Errorf("an event of another name: %q", got)
	}
	answer2 := "data: " + strings.Replace(bad, `"id":1`, `"id":2`, 1) + "\n\n"
	if got := read(answer2, 1<<20, 1); got != answer2 {
		t.Errorf("another request's answer: %q", got)
	}
	long := "data: " + bad + "\n\n" + "data: " + bad + "\n\n"
	if got := read(long, 20, 1); got != long {
		t.Errorf("an event over the limit: %q", got)
	}
}

// TestLeftOutCountTowardBound: entries left out count toward the bound of
// 1,000 tools: a server listing 1,500 entries, most of them no tools, is
// still a server listing too many.
func TestLeftOutCountTowardBound(t *testing.T) {
	ts := hostile(t, func(method string, _ json.RawMessage) string {
		if method == "tools/list" {
			return `{"tools":[{"name":"one"}` + strings.Repeat(`,7`, 1499) + `]}`
		}
		return ""
	})
	m := NewManager("test", nil)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tools, err := m.Tools(ctx, Server{Name: "many", Type: "http", URL: ts.URL})
	if err == nil || !strings.Contains(err.Error(), "it lists more than 1000 tools") {
		t.Errorf("%d tools, %v", len(tools), err)
	}
}

// FuzzFilterTools: whatever a server lists, a page filterTools passes on
// has tools the Go SDK decodes (as it decodes them: its own decoder, its
// options), so a malformed tool can no longer fail the page.
func FuzzFilterTools(f *testing.F) {
	var page bytes.Buffer
	json.Compact(&page, []byte(malformedTools))
	f.Add(page.String())
	f.Add(`{"tools":[{"name":"a","name":5},{"name":5,"name":"b"},{"name":"c","icons":[{"src":"x","sizes":[1]}]}]}`)
	f.Add(`{"tools":[{"name":"a","annotations":{"destructiveHint":null,"title":1}},{"name":"\u00e9","_meta":{"k":[{}]}}],"nextCursor":"n"}`)
	f.Add(`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}}]}`)
	f.Fuzz(func(t *testing.T, result string) {
		out, ok := filterTools(json.RawMessage(result))
		if !ok {
			return
		}
		var page struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatalf("the filtered page is no JSON object: %v\n%s", err, out)
		}
		var tools []*sdk.Tool
		if err := sdkDecode(page.Tools, &tools); err != nil {
			t.Fatalf("the SDK cannot decode the tools kept: %v\nin:  %s\nout: %s", err, result, out)
		}
		for _, tl := range tools {
			if tl == nil || tl.Name == "" {
				t.Fatalf("a tool kept without a name: %s", out)
			}
		}
	})
}

// TestLeftOutNameEscaped: the name shown of an entry left out is escaped
// for a terminal: JSON keeps a C1 control (CSI) or a bidi override as it is.
func TestLeftOutNameEscaped(t *testing.T) {
	out, _ := filterTools(json.RawMessage("{\"tools\":[{\"name\":[\"\u009b2J\u202e\"]}]}"))
	var res sdk.ListToolsResult
	json.Unmarshal(out, &res)
	left := leftOutOf(res.Meta)
	if len(left.Reasons) != 1 || strings.ContainsAny(left.Reasons[0], "\u009b\u202e") || !strings.Contains(left.Reasons[0], "its name is not a string") {
		t.Errorf("%q", left.Reasons)
	}
}
