package service_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// The tests here drive the same operation through the three doors, each
// the built binary over real stdio: the LSP server, the ACP agent and the
// CLI, on one data directory and one fake provider.

// bare is an environment with no provider configured.
var bare = []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "CTXLS_MODEL=", "CTXLS_COMPACT_AT=", "CTXLS_STORE="}

type doors struct {
	t            *testing.T
	fake         *openaitest.Server
	dataDir, cwd string
}

func newDoors(t *testing.T) *doors {
	return &doors{t: t, fake: openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Default title"}})), dataDir: t.TempDir(), cwd: t.TempDir()}
}

// lsp starts `ctxls serve` initialised with provider (nil: none).
func (d *doors) lsp(provider map[string]any) *lsptest.Server {
	d.t.Helper()
	s := lsptest.Binary(d.t, bare, "serve", "--data-dir", d.dataDir)
	opts := map[string]any{}
	if provider != nil {
		opts["provider"] = provider
	}
	s.Initialize(lsptest.InitOptions{RootURI: "file://" + d.cwd, InitOptions: opts})
	return s
}

// acp starts `ctxls acp` with flags, initialised.
func (d *doors) acp(flags ...string) *acptest.Client {
	d.t.Helper()
	c := acptest.Start(d.t, lsptest.BuildBinary(d.t), append([]string{"acp", "--data-dir", d.dataDir}, flags...), bare)
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		d.t.Fatalf("initialize: %v", err)
	}
	return c
}

// open resumes session id on an ACP connection.
func (d *doors) open(c *acptest.Client, id string) {
	d.t.Helper()
	if err := c.Call("session/resume", map[string]any{"sessionId": id, "cwd": d.cwd}, nil); err != nil {
		d.t.Fatalf("session/resume: %v", err)
	}
}

// slash sends a slash command over ACP and returns its reply chunk.
func (d *doors) slash(c *acptest.Client, id, text string) acptest.Update {
	d.t.Helper()
	from := len(c.Updates(id))
	if err := c.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}}, nil); err != nil {
		d.t.Fatalf("%s: %v", text, err)
	}
	for _, u := range c.Updates(id)[from:] {
		if u.Kind == "agent_message_chunk" {
			return u
		}
	}
	d.t.Fatalf("%s: no reply", text)
	return acptest.Update{}
}

// cli runs a ctxls subcommand on the data directory.
func (d *doors) cli(args ...string) (string, string, int) {
	d.t.Helper()
	return lsptest.Run(d.t, d.cwd, append(append([]string{}, bare...), "CTXLS_DATA_DIR="+d.dataDir), args...)
}

// session makes a session with one exchange through the CLI, with model
// as its own model, and returns its id.
func (d *doors) session(model string) string {
	d.t.Helper()
	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"Because of the middleware."}}, openaitest.Reply{Chunks: []string{"First title"}})
	args := []string{"chat", "--base-url", d.fake.URL}
	if model != "" {
		args = append(args, "--model", model)
	}
	_, errOut, code := d.cli(append(args, "Why does login redirect twice?")...)
	if code != 0 {
		d.t.Fatalf("chat: %d %s", code, errOut)
	}
	for _, line := range strings.Split(errOut, "\n") {
		if rest, ok := strings.CutPrefix(line, "session "); ok {
			return strings.Fields(rest)[0]
		}
	}
	d.t.Fatalf("no session line in %q", errOut)
	return ""
}

// lastModel is the model of the provider's last request.
func (d *doors) lastModel() string {
	reqs := d.fake.Requests()
	if len(reqs) == 0 {
		return ""
	}
	return reqs[len(reqs)-1].Parsed.Model
}

// TestRegenerateTitleWithTheSessionModel: with a provider that names no
// model (a local server, no CTXLS_MODEL), a session that has a model of its
// own gets a new title from that model over LSP, ACP and the CLI alike.
func TestRegenerateTitleWithTheSessionModel(t *testing.T) {
	t.Parallel()
	d := newDoors(t)
	id := d.session("session-model")

	s := d.lsp(map[string]any{"baseURL": d.fake.URL})
	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"Title over LSP"}})
	var res api.SessionResult
	if err := s.Command(api.RegenerateTitle, map[string]any{"sessionId": id}, &res); err != nil || res.Session.Title != "Title over LSP" || d.lastModel() != "session-model" {
		t.Errorf("LSP: %v %+v, model %q", err, res.Session, d.lastModel())
	}

	c := d.acp("--base-url", d.fake.URL)
	d.open(c, id)
	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"Title over ACP"}})
	if u := d.slash(c, id, "/title"); u.Text() != "Title: Title over ACP" || d.lastModel() != "session-model" {
		t.Errorf("ACP: %q, model %q", u.Text(), d.lastModel())
	}

	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"Title from the CLI"}})
	if out, errOut, code := d.cli("sessions", "title", id, "--regenerate", "--base-url", d.fake.URL); code != 0 || !strings.Contains(out, "title:  Title from the CLI") || d.lastModel() != "session-model" {
		t.Errorf("CLI: %d %q %q, model %q", code, out, errOut, d.lastModel())
	}
}

// kindOf is the kind in an LSP or ACP error's data.
func kindOf(t *testing.T, data json.RawMessage) api.Kind {
	t.Helper()
	var d api.ErrorData
	if err := json.Unmarshal(data, &d); err != nil {
		t.Errorf("error data %s: %v", data, err)
	}
	return d.Kind
}

// cliKind is the kind an exit status stands for.
func cliKind(code int) api.Kind {
	for _, k := range api.ErrorKinds {
		if k.CLI == code {
			return k.Kind
		}
	}
	return ""
}

// TestErrorKindsAcrossDoors: the same failure comes out of the LSP door,
// the ACP door and the CLI with the same kind, each door with its own code
// for it (api.ErrorKinds), and the kind in the error's data. A door that
// does not offer the operation says so (nil).
func TestErrorKindsAcrossDoors(t *testing.T) {
	t.Parallel()
	d := newDoors(t)
	id := d.session("test-model")
	unknown := "zzzzzzzzzzzzzzzzzzzzzzzzzz"
	withProvider := map[string]any{"baseURL": d.fake.URL, "model": "test-model"}
	lspProv, lspBare := d.lsp(withProvider), d.lsp(nil)
	acpProv, acpBare := d.acp("--base-url", d.fake.URL, "--model", "test-model"), d.acp()
	d.open(acpProv, id)
	d.open(acpBare, id)
	refuse := func() { d.fake.Enqueue(openaitest.Reply{Status: 401, ErrorMessage: "bad key"}) }

	type lspCall struct {
		server       *lsptest.Server
		method, name string
		params       map[string]any
	}
	type acpCall struct {
		client *acptest.Client
		method string // "" for a slash command in text
		params map[string]any
		text   string
	}
	cases := []struct {
		name  string
		kind  api.Kind
		setup func() // before each door's call
		lsp   *lspCall
		acp   *acpCall
		cli   []string
	}{
		{name: "an unknown session", kind: api.KindNotFound,
			lsp: &lspCall{server: lspProv, name: api.SessionShow, params: map[string]any{"sessionId": unknown}},
			acp: &acpCall{client: acpProv, method: "session/load", params: map[string]any{"sessionId": unknown, "cwd": d.cwd, "mcpServers": []any{}}},
			cli: []string{"sessions", "show", unknown}},
		{name: "an export format that does not exist", kind: api.KindInvalidArgument,
			lsp: &lspCall{server: lspProv, name: api.SessionExport, params: map[string]any{"sessionId": id, "format": "pdf"}},
			acp: &acpCall{client: acpProv, text: "/export pdf"},
			cli: []string{"sessions", "export", id, "--format", "pdf"}},
		{name: "a turn with no provider configured", kind: api.KindNoProvider,
			lsp: &lspCall{server: lspBare, method: api.ChatRequest, params: map[string]any{"sessionId": id, "message": "hi"}},
			acp: &acpCall{client: acpBare, method: "session/prompt", params: map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}},
			cli: []string{"chat", "--session", id, "hi"}},
		{name: "a title the provider refuses", kind: api.KindProviderFailed, setup: refuse,
			lsp: &lspCall{server: lspProv, name: api.RegenerateTitle, params: map[string]any{"sessionId": id}},
			acp: &acpCall{client: acpProv, text: "/title"},
			cli: []string{"sessions", "title", id, "--regenerate", "--base-url", d.fake.URL, "--model", "test-model"}},
		{name: "a summary the provider refuses", kind: api.KindProviderFailed, setup: func() {
			// A second turn first: compaction needs an earlier whole turn.
			d.fake.Enqueue(openaitest.Reply{Chunks: []string{"Check the cookie."}})
			if _, errOut, code := d.cli("chat", "--session", id, "--base-url", d.fake.URL, "--model", "test-model", "And the cookie?"); code != 0 {
				t.Fatalf("second turn: %s", errOut)
			}
			refuse()
		},
			lsp: &lspCall{server: lspProv, name: api.SessionCompact, params: map[string]any{"sessionId": id}},
			acp: &acpCall{client: acpProv, text: "/compact"},
			cli: []string{"sessions", "compact", id, "--base-url", d.fake.URL, "--model", "test-model"}},
		{name: "a file over 25 MiB", kind: api.KindTooLarge, setup: func() {
			f, err := os.Create(d.cwd + "/big.bin")
			if err == nil {
				err = f.Truncate(26<<20 + 1)
				f.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
		},
			lsp: &lspCall{server: lspProv, name: api.FilesAdd, params: map[string]any{"sessionId": id, "path": d.cwd + "/big.bin"}}},
	}
	for _, c := range cases {
		if c.lsp != nil {
			if c.setup != nil {
				c.setup()
			}
			var err error
			if c.lsp.method != "" {
				err = c.lsp.server.Call(c.lsp.method, c.lsp.params, nil)
			} else {
				err = c.lsp.server.Command(c.lsp.name, c.lsp.params, nil)
			}
			var re *lsptest.RPCError
			if e, ok := err.(*lsptest.RPCError); ok {
				re = e
			}
			switch {
			case re == nil:
				t.Errorf("%s over LSP: want a %s error, got %v", c.name, c.kind, err)
			case kindOf(t, re.Data) != c.kind || re.Code != c.kind.Info().LSP:
				t.Errorf("%s over LSP: %d %s, want %d %s", c.name, re.Code, re.Data, c.kind.Info().LSP, c.kind)
			}
		}
		if c.acp != nil {
			if c.setup != nil {
				c.setup()
			}
			if c.acp.method != "" {
				err := c.acp.client.Call(c.acp.method, c.acp.params, nil)
				re, ok := err.(*acptest.RPCError)
				switch {
				case !ok:
					t.Errorf("%s over ACP: want a %s error, got %v", c.name, c.kind, err)
				case kindOf(t, re.Data) != c.kind || re.Code != c.kind.Info().ACP:
					t.Errorf("%s over ACP: %d %s, want %d %s", c.name, re.Code, re.Data, c.kind.Info().ACP, c.kind)
				}
			} else {
				u := d.slash(c.acp.client, id, c.acp.text)
				var v struct {
					Meta struct {
						Ctxls struct{ Error api.ErrorData } `json:"ctxls"`
					} `json:"_meta"`
				}
				if err := json.Unmarshal(u.Raw, &v); err != nil || v.Meta.Ctxls.Error.Kind != c.kind {
					t.Errorf("%s over ACP (%s): %s, want kind %s", c.name, c.acp.text, u.Raw, c.kind)
				}
			}
		}
		if c.cli != nil {
			if c.setup != nil {
				c.setup()
			}
			_, errOut, code := d.cli(c.cli...)
			if code != c.kind.Info().CLI || cliKind(code) != c.kind {
				t.Errorf("%s from the CLI: exit %d (%s) %q, want %d (%s)", c.name, code, cliKind(code), errOut, c.kind.Info().CLI, c.kind)
			}
		}
	}
	// A request the client cancels is cancelled over LSP (ACP's session/cancel
	// ends a prompt with stopReason "cancelled", not an error).
	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"slow ", "answer"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	wait := lspProv.Send(900, api.ChatRequest, map[string]any{"sessionId": id, "message": "a long one", "workDoneToken": "tok-c"})
	lspProv.WaitFor("the first delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), "slow")
	})
	lspProv.Notify("$/cancelRequest", map[string]any{"id": 900})
	if m := wait(); m.Error == nil || kindOf(t, m.Error.Data) != api.KindCancelled || m.Error.Code != api.KindCancelled.Info().LSP {
		t.Errorf("a cancelled turn over LSP: %+v", m.Error)
	}
}

// TestSessionUsage: ctxls.session.usage (the operation docs/architecture.md's
// recipe was followed for) gives the same figures over LSP, ACP's /usage and
// `ctxls sessions usage`: the tokens the provider reported for each answer,
// in all and by model.
func TestSessionUsage(t *testing.T) {
	t.Parallel()
	d := newDoors(t)
	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"One", "two"}, Usage: &openai.Usage{PromptTokens: 1200, CompletionTokens: 40}},
		openaitest.Reply{Chunks: []string{"Session title"}})
	_, errOut, code := d.cli("chat", "--base-url", d.fake.URL, "--model", "model-a", "first question")
	if code != 0 {
		t.Fatalf("chat: %s", errOut)
	}
	id := strings.Fields(errOut[strings.LastIndex(errOut, "session ")+len("session "):])[0]
	d.fake.Enqueue(openaitest.Reply{Chunks: []string{"Three"}, Usage: &openai.Usage{PromptTokens: 1500, CompletionTokens: 25,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1024}}})
	if _, errOut, code := d.cli("chat", "--session", id, "--base-url", d.fake.URL, "--model", "model-b", "second question"); code != 0 {
		t.Fatalf("second chat: %s", errOut)
	}
	want := api.SessionUsageResult{V: 1, SessionID: id, Answers: 2, PromptTokens: 2700, CompletionTokens: 65, CachedTokens: 1024, Models: []api.ModelUsage{
		{Model: "model-b", Answers: 1, PromptTokens: 1500, CompletionTokens: 25, CachedTokens: 1024},
		{Model: "model-a", Answers: 1, PromptTokens: 1200, CompletionTokens: 40},
	}}

	var overLSP api.SessionUsageResult
	d.lsp(nil).MustCommand(api.SessionUsage, map[string]any{"sessionId": id}, &overLSP)
	if !reflect.DeepEqual(overLSP, want) {
		t.Errorf("over LSP: %+v, want %+v", overLSP, want)
	}
	out, errOut, code := d.cli("sessions", "usage", id[:6], "--json")
	var fromCLI api.SessionUsageResult
	if err := json.Unmarshal([]byte(out), &fromCLI); err != nil || code != 0 || !reflect.DeepEqual(fromCLI, want) {
		t.Errorf("from the CLI: %d %v %q %+v", code, err, errOut, fromCLI)
	}
	if out, _, _ := d.cli("sessions", "show", id); !strings.Contains(out, "1,500 tokens in (1,024 cached), 25 out]") {
		t.Errorf("sessions show lacks the answer's tokens:\n%s", out)
	}
	c := d.acp()
	d.open(c, id)
	text := d.slash(c, id, "/usage").Text()
	for _, line := range []string{"2 answers: 2,700 prompt tokens (1,024 of them cached), 65 completion tokens.", "- model-b: 1 answers, 1,500 prompt (1,024 of them cached), 25 completion", "- model-a: 1 answers, 1,200 prompt, 40 completion"} {
		if !strings.Contains(text, line) {
			t.Errorf("/usage lacks %q:\n%s", line, text)
		}
	}
	if _, errOut, code := d.cli("sessions", "usage", "zzzzzz"); code != api.KindNotFound.Info().CLI {
		t.Errorf("usage of an unknown session: %d %q", code, errOut)
	}
}
