package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxls/ctxls/api"
)

// StartTimeout bounds starting a server and its initialize handshake.
const StartTimeout = 30 * time.Second

// ListTimeout bounds listing a server's tools (all its pages): a server
// that is up answers a listing at once, and every turn waits for it.
const ListTimeout = 10 * time.Second

// maxBackoff is the longest wait before a failed server is tried again.
const maxBackoff = 30 * time.Second

// A server that did not answer in time waits longer: timeoutBackoff, then
// twice as long each time again, up to maxTimeoutBackoff. Each try costs a
// turn the whole timeout; a crash costs it nothing.
const (
	timeoutBackoff    = 30 * time.Second
	maxTimeoutBackoff = 5 * time.Minute
)

// The bounds of a server's tool list. Past one, the listing fails and none
// of the server's tools are used: the tools listed so far are whatever the
// server put first, a list the model would see change for no reason, and a
// server that lists without end is broken or hostile.
const (
	maxListPages = 100
	maxListTools = 1000
	maxListBytes = 16 << 20
)

// maxStarts is how many servers start at once: a thousand configured
// servers are not a thousand processes spawned in the same instant.
const maxStarts = 4

// errTimedOut marks a start or a listing that did not end in time (see
// timeoutBackoff).
var errTimedOut = errors.New("timed out")

// limits are the Manager's bounds: the constants above, lowered by tests.
type limits struct {
	message             int64 // an HTTP answer's body
	listPages           int
	listTools           int
	listBytes           int64
	start, list         time.Duration // the timeouts
	progressEvery       time.Duration // the least time between two progress reports of a call
	timeoutBackoff, max time.Duration // the first and longest back-off after a timeout
}

// Manager runs the MCP servers a daemon uses: one process (or HTTP
// session) per distinct configuration, shared by every session of the
// daemon, started when a turn first needs it. A server that crashed or
// could not start is tried again on the next need, after a back-off that
// doubles with each failure in a row (Backoff, 2×, 4×, … up to 30 s; for a
// start or a listing that timed out, 30 s doubling up to 5 min); until then
// the need fails at once, in the same words all through the back-off. At
// most maxStarts servers start at once. Close ends every
// server; a server's process also ends when the daemon is killed (see
// procAttr).
//
// Manager is safe for concurrent use. Its goroutines: one per running
// server waiting for its end (watch), and the SDK's own per session.
type Manager struct {
	// Backoff is the first wait after a failure (default 1 s).
	Backoff time.Duration
	// KeyEnvs names the variables holding the connection's provider's key
	// beyond OPENAI_API_KEY and ANTHROPIC_API_KEY (its apiKeyEnv), read
	// when a server starts: a server's env never expands to them (nil:
	// none).
	KeyEnvs func() []string
	version string
	log     *slog.Logger
	limits  limits
	starts  chan struct{} // a token per start running (maxStarts)

	mu     sync.Mutex
	conns  map[string]*conn // by Server.Key
	closed bool
	// roots are the workspace folders offered to the servers as roots
	// (file URIs); clients are the servers' clients, with the roots each
	// was last given.
	roots   []string
	clients map[*sdk.Client][]string
}

// NewManager returns a manager whose client says it is ctxls version.
func NewManager(version string, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{Backoff: time.Second, version: version, log: log, conns: map[string]*conn{}, clients: map[*sdk.Client][]string{},
		starts: make(chan struct{}, maxStarts),
		limits: limits{
			message: MaxMessageBytes, listPages: maxListPages, listTools: maxListTools, listBytes: maxListBytes,
			start: StartTimeout, list: ListTimeout, progressEvery: progressEvery,
			timeoutBackoff: timeoutBackoff, max: maxTimeoutBackoff,
		}}
}

// conn is one server's connection and what is known about it.
type conn struct {
	m   *Manager
	srv Server // the configuration it was started with (the first name seen)

	mu       sync.Mutex
	cs       *sdk.ClientSession // nil: not running
	ended    chan struct{}      // closed once cs's end was recorded (watch)
	starting chan struct{}      // non-nil while a start runs; closed when it ends
	tools    []Tool             // nil: to be listed
	leftOut  LeftOut            // what the listing of tools left out
	failures int                // failures in a row
	failedAt time.Time          // the last failure's time
	retryAt  time.Time          // no start before then
	lastErr  error
	progress map[string]func(Progress) // progress token → the call's reporter
}

// Progress is a server's progress notification for a call.
type Progress struct {
	Message         string
	Progress, Total float64
}

// Key identifies a configuration: servers with the same key share a
// process. The name and source do not count; the timeout does not either.
func (s Server) Key() string {
	b, _ := json.Marshal([]any{s.Type, s.Command, s.Args, s.Env, s.URL, s.Headers})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

func (m *Manager) conn(s Server) (*conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("the daemon is shutting down")
	}
	c, ok := m.conns[s.Key()]
	if !ok {
		c = &conn{m: m, srv: s, progress: map[string]func(Progress){}}
		m.conns[s.Key()] = c
	}
	return c, nil
}

// Tools returns the server's tools, starting it when it is not running
// and listing them again after it said they changed.
func (m *Manager) Tools(ctx context.Context, s Server) ([]Tool, error) {
	c, err := m.conn(s)
	if err != nil {
		return nil, err
	}
	cs, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	tools := c.tools
	c.mu.Unlock()
	if tools != nil {
		return tools, nil
	}
	tools, left, err := c.list(ctx, cs)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, errTimedOut) {
			return nil, ctx.Err() // the caller gave up: not the server's failure
		}
		// The server is ended and backs off like one that failed to
		// start, so the next turns do not each wait for it again.
		err = fmt.Errorf("server %q: listing its tools: %w", s.Name, err)
		c.mu.Lock()
		if c.cs == cs {
			c.cs, c.tools = nil, nil
			c.failed(err)
		}
		c.mu.Unlock()
		cs.Close()
		return nil, err
	}
	c.mu.Lock()
	if c.cs == cs {
		c.tools, c.leftOut = tools, left
	}
	c.mu.Unlock()
	if left.Count > 0 {
		// Once per listing: a server lists again only when it says its
		// tools changed, or after a restart.
		c.m.log.Warn("mcp server tools left out", "server", s.Name, "count", left.Count, "why", strings.Join(left.Reasons, "; "))
	}
	return tools, nil
}

// LeftOut is what s's last listing of tools left out (see listIDs): the
// entries of its list the Go SDK cannot read as tools.
func (m *Manager) LeftOut(s Server) LeftOut {
	m.mu.Lock()
	c := m.conns[s.Key()]
	m.mu.Unlock()
	if c == nil {
		return LeftOut{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leftOut
}

// list lists the server's tools, all pages, within the listing's timeout
// and bounds; the entries left out count toward the bound of tools.
func (c *conn) list(ctx context.Context, cs *sdk.ClientSession) ([]Tool, LeftOut, error) {
	lim := c.m.limits
	ctx, cancel := context.WithTimeoutCause(ctx, lim.list, fmt.Errorf("it did not answer within %s: %w", lim.list, errTimedOut))
	defer cancel()
	tools := []Tool{}
	var left LeftOut
	var listed int64
	params := &sdk.ListToolsParams{}
	for page := 1; ; page++ {
		if page > lim.listPages {
			return nil, LeftOut{}, fmt.Errorf("its list goes on past %d pages; none of its tools are used", lim.listPages)
		}
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			if cause := context.Cause(ctx); errors.Is(cause, errTimedOut) {
				return nil, LeftOut{}, cause
			}
			return nil, LeftOut{}, err
		}
		b, _ := json.Marshal(res.Tools)
		if listed += int64(len(b)); listed > lim.listBytes {
			return nil, LeftOut{}, fmt.Errorf("its list is larger than %s; none of its tools are used", bytesText(lim.listBytes))
		}
		pageLeft := leftOutOf(res.Meta)
		left.Count += pageLeft.Count
		left.Reasons = append(left.Reasons, pageLeft.Reasons[:min(len(pageLeft.Reasons), maxLeftOutReasons-len(left.Reasons))]...)
		if len(tools)+len(res.Tools)+left.Count > lim.listTools {
			return nil, LeftOut{}, fmt.Errorf("it lists more than %d tools; none of its tools are used", lim.listTools)
		}
		for _, t := range res.Tools {
			tools = append(tools, toolOf(t))
		}
		if res.NextCursor == "" {
			return tools, left, nil
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

func toolOf(t *sdk.Tool) Tool {
	out := Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	if a := t.Annotations; a != nil {
		out.ReadOnly = a.ReadOnlyHint
		out.Destructive = a.DestructiveHint == nil || *a.DestructiveHint
		out.Title = a.Title
	} else {
		out.Destructive = true // the protocol's default
	}
	if out.Title == "" {
		out.Title = t.Title
	}
	return out
}

var progressSeq atomic.Int64

// Call calls a tool with its arguments (a JSON object) within the server's
// timeout. progress, when set, receives the server's progress
// notifications for the call, a few a second (see throttle), none after
// Call returns. Cancelling ctx cancels the call (the SDK
// sends notifications/cancelled). A server that is gone, crashed during the
// call or timed out is an error; a result with isError is not (see Text).
func (m *Manager) Call(ctx context.Context, s Server, tool string, args json.RawMessage, progress func(Progress)) (*sdk.CallToolResult, error) {
	c, err := m.conn(s)
	if err != nil {
		return nil, err
	}
	cs, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	ended := c.endedOf(cs)
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("server %q: %s did not answer within %s", s.Name, tool, timeout))
	defer cancel()
	var a any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		a = args
	}
	p := &sdk.CallToolParams{Name: tool, Arguments: a}
	if progress != nil {
		token := "ctxls-" + strconv.FormatInt(progressSeq.Add(1), 10)
		p.SetProgressToken(token)
		th := newThrottle(progress, c.m.limits.progressEvery)
		c.mu.Lock()
		c.progress[token] = th.add
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.progress, token)
			c.mu.Unlock()
			th.stop() // a notification already taken from c.progress goes nowhere
		}()
	}
	res, err := cs.CallTool(ctx, p)
	switch {
	case err == nil:
		c.mu.Lock()
		c.failures = 0
		c.mu.Unlock()
		return res, nil
	case ctx.Err() != nil && context.Cause(ctx) != nil && !errors.Is(context.Cause(ctx), context.Canceled):
		return nil, context.Cause(ctx) // the timeout, in words
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	if c.dead(ended) {
		return nil, fmt.Errorf("server %q stopped during the call (%v); it is started again on the next call", s.Name, err)
	}
	return nil, fmt.Errorf("server %q: %w", s.Name, err)
}

// endedOf is the channel closed once cs's end was recorded (closed already
// when cs is not the running session).
func (c *conn) endedOf(cs *sdk.ClientSession) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == cs {
		return c.ended
	}
	done := make(chan struct{})
	close(done)
	return done
}

// dead reports whether a session whose call failed has ended (waiting a
// moment for the watcher to record a crash).
func (c *conn) dead(ended <-chan struct{}) bool {
	select {
	case <-ended:
		return true
	case <-time.After(200 * time.Millisecond):
		return false
	}
}

// session returns the running session, starting the server when it is not
// running (one start at a time; others wait for it).
func (c *conn) session(ctx context.Context) (*sdk.ClientSession, error) {
	for {
		c.mu.Lock()
		if c.cs != nil {
			cs := c.cs
			c.mu.Unlock()
			return cs, nil
		}
		if wait := c.starting; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if time.Now().Before(c.retryAt) {
			// The same words all through one back-off (no "in 12.3s" that
			// counts down): the user is told once per back-off.
			err := fmt.Errorf("server %q failed at %s (%v); it is tried again in %s", c.srv.Name,
				c.failedAt.Format(time.TimeOnly), c.lastErr, c.retryAt.Sub(c.failedAt).Round(100*time.Millisecond))
			c.mu.Unlock()
			return nil, err
		}
		done := make(chan struct{})
		c.starting = done
		c.mu.Unlock()
		go c.start(done)
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err() // the start goes on; the next need finds it
		}
		c.mu.Lock()
		cs, err := c.cs, c.lastErr
		c.mu.Unlock()
		if cs == nil && err != nil {
			return nil, err // this start's failure, as it is
		}
	}
}

// start starts the server and records the outcome; done is closed after.
// It waits its turn among the starts running (maxStarts); its timeout
// counts from its turn.
func (c *conn) start(done chan struct{}) {
	c.m.starts <- struct{}{}
	defer func() { <-c.m.starts }()
	timeout := c.m.limits.start
	ctx, cancel := context.WithTimeoutCause(context.Background(), timeout, fmt.Errorf("it did not start within %s: %w", timeout, errTimedOut))
	defer cancel()
	begun := time.Now()
	cs, err := c.m.connect(ctx, c)
	if err != nil && errors.Is(context.Cause(ctx), errTimedOut) {
		err = fmt.Errorf("server %q: %w", c.srv.Name, context.Cause(ctx))
	}
	c.mu.Lock()
	defer func() { c.starting = nil; c.mu.Unlock(); close(done) }()
	if err != nil {
		c.failed(err)
		return
	}
	c.m.mu.Lock()
	closed := c.m.closed
	c.m.mu.Unlock()
	if closed {
		cs.Close()
		c.lastErr = errors.New("the daemon is shutting down")
		return
	}
	c.cs, c.tools, c.ended = cs, nil, make(chan struct{})
	c.m.log.Info("mcp server started", "server", c.srv.Name, "type", c.srv.Type, "ms", time.Since(begun).Milliseconds())
	go c.watch(cs, c.ended)
}

// failed records a failure (c.mu held) and sets the next try's time.
func (c *conn) failed(err error) {
	c.failures++
	c.lastErr = err
	first, longest := c.m.Backoff, maxBackoff
	if errors.Is(err, errTimedOut) {
		first, longest = c.m.limits.timeoutBackoff, c.m.limits.max
	}
	wait := first << min(c.failures-1, 10)
	if wait > longest || wait <= 0 {
		wait = longest
	}
	c.failedAt = time.Now()
	c.retryAt = c.failedAt.Add(wait)
	c.m.log.Warn("mcp server failed", "server", c.srv.Name, "err", err, "retryIn", wait)
}

// watch waits for the session to end; an end Close did not ask for is a
// failure.
func (c *conn) watch(cs *sdk.ClientSession, ended chan struct{}) {
	err := cs.Wait()
	defer close(ended) // after the state below is recorded
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs != cs {
		return
	}
	c.cs, c.tools = nil, nil
	c.m.mu.Lock()
	closed := c.m.closed
	c.m.mu.Unlock()
	if closed {
		return
	}
	if err == nil {
		err = errors.New("it exited")
	}
	c.failed(fmt.Errorf("it stopped: %w", err))
}

// connect starts or reaches the server and initializes a session whose
// notifications go to c.
func (m *Manager) connect(ctx context.Context, c *conn) (*sdk.ClientSession, error) {
	s := c.srv
	opts := &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			c.mu.Lock()
			c.tools = nil
			c.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			token := fmt.Sprint(r.Params.ProgressToken)
			c.mu.Lock()
			f := c.progress[token]
			c.mu.Unlock()
			if f != nil {
				f(Progress{Message: r.Params.Message, Progress: r.Params.Progress, Total: r.Params.Total})
			}
		},
	}
	t, err := transport(s, &logLines{log: m.log, server: s.Name}, m.limits.message, m.keyEnvs())
	if err != nil {
		return nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "ctxls", Version: m.version}, opts)
	m.mu.Lock()
	m.clients[client] = nil
	m.mu.Unlock()
	m.offerRoots(client)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		m.forget(client)
		return nil, fmt.Errorf("server %q: %w", s.Name, err)
	}
	go func() {
		cs.Wait()
		m.forget(client)
	}()
	return cs, nil
}

// SetRoots sets the roots offered to the servers: the workspace folders
// (absolute paths), as file URIs. A server asks for them with roots/list
// (the client capability roots, which the SDK's client declares); a
// running one is sent notifications/roots/list_changed when they change.
func (m *Manager) SetRoots(folders []string) {
	uris := make([]string, 0, len(folders))
	for _, f := range folders {
		uris = append(uris, fileURI(f))
	}
	m.mu.Lock()
	if slices.Equal(uris, m.roots) {
		m.mu.Unlock()
		return
	}
	m.roots = uris
	clients := slices.Collect(maps.Keys(m.clients))
	m.mu.Unlock()
	for _, c := range clients {
		m.offerRoots(c)
	}
}

// offerRoots gives a client the roots now: those it has and should not
// removed, the others added (the client notifies its server of each
// change). A later SetRoots gives it the roots of its time, so concurrent
// changes end with the latest.
func (m *Manager) offerRoots(c *sdk.Client) {
	m.mu.Lock()
	had, ok := m.clients[c]
	want := m.roots
	if ok {
		m.clients[c] = want
	}
	m.mu.Unlock()
	if !ok || slices.Equal(had, want) {
		return
	}
	var gone []string
	for _, u := range had {
		if !slices.Contains(want, u) {
			gone = append(gone, u)
		}
	}
	if len(gone) > 0 {
		c.RemoveRoots(gone...) //nolint:staticcheck // deprecated in a protocol version servers do not speak yet
	}
	var add []*sdk.Root
	for _, u := range want {
		if !slices.Contains(had, u) {
			name := ""
			if p, err := url.Parse(u); err == nil {
				name = path.Base(p.Path)
			}
			add = append(add, &sdk.Root{URI: u, Name: name})
		}
	}
	c.AddRoots(add...) //nolint:staticcheck // as RemoveRoots
}

// forget drops a client whose session ended.
func (m *Manager) forget(c *sdk.Client) {
	m.mu.Lock()
	delete(m.clients, c)
	m.mu.Unlock()
}

// fileURI is an absolute path's file URI (file:///C:/x for a Windows path).
func fileURI(p string) string {
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// transport is how to reach s: its command, its stderr to stderr (killed
// with the daemon, see procAttr), or its URL with its headers (see
// httpClient), answers of at most limit bytes.
func transport(s Server, stderr io.Writer, limit int64, keyEnvs []string) (sdk.Transport, error) {
	if s.Type == "http" {
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s, limit), DisableStandaloneSSE: true}, nil
	}
	path, err := exec.LookPath(s.Command)
	if err != nil {
		return nil, fmt.Errorf("server %q: command %q not found: %w", s.Name, s.Command, err)
	}
	cmd := exec.Command(path, s.Args...)
	cmd.Env = serverEnv(s, os.Getenv, keyEnvs...)
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stderr = stderr
	cmd.SysProcAttr = procAttr()
	return filterTransport{&sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}, nil
}

// inheritedEnv are the variables of the daemon's environment a stdio
// server inherits: the MCP SDKs' own default list. The rest (the provider's
// keys, CTXLS_MCP_TOKEN, cloud credentials) never reach a server unless
// its configuration names them in its env.
var inheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// serverEnv is a stdio server's environment: inheritedEnv from the
// daemon's (getenv), then the server's own env with ${VAR} and
// ${VAR:-default} expanded from the daemon's environment, as Claude Code
// expands .mcp.json — but never to the provider's key or ctxls's own
// variables (heldBack): a repository's .mcp.json, trusted for its tools,
// could otherwise ask for "${OPENAI_API_KEY}".
func serverEnv(s Server, getenv func(string) string, keyEnvs ...string) []string {
	var env []string
	for _, k := range inheritedEnv {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range Keys(s.Env) {
		env = append(env, k+"="+expandEnv(s.Env[k], getenv, keyEnvs))
	}
	return env
}

var envRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)
})

// expandEnv replaces ${VAR} with the variable's value and ${VAR:-default}
// with its value, or default when it is unset or empty; a variable
// heldBack, or one of keyEnvs (the connection's provider's key variable),
// is taken as unset.
func expandEnv(v string, getenv func(string) string, keyEnvs []string) string {
	return envRef().ReplaceAllStringFunc(v, func(ref string) string {
		m := envRef().FindStringSubmatch(ref)
		if heldBack(m[1]) || slices.Contains(keyEnvs, m[1]) {
			return m[2]
		}
		if val := getenv(m[1]); val != "" {
			return val
		}
		return m[2]
	})
}

// heldBack reports whether a variable of the daemon's environment is kept
// from every MCP server, even one whose env names it: the model providers'
// keys ctxls reads by default and ctxls's own (CTXLS_MCP_TOKEN and the
// rest). A server that needs such a key has it written into its own
// configuration by the user.
func heldBack(name string) bool {
	return name == api.OpenAIKeyEnv || name == api.AnthropicKeyEnv || strings.HasPrefix(name, "CTXLS_")
}

// Close ends every server and waits for them (each is asked to end by
// closing its input, then signalled after 2 s).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	conns := m.conns
	m.conns = map[string]*conn{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		c.mu.Lock()
		cs := c.cs
		c.cs = nil
		c.mu.Unlock()
		if cs != nil {
			wg.Go(func() { cs.Close() })
		}
	}
	wg.Wait()
}

// IsRunning reports whether s's server is running.
func (m *Manager) IsRunning(s Server) bool {
	m.mu.Lock()
	c := m.conns[s.Key()]
	m.mu.Unlock()
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cs != nil
}

// Running is the number of servers running.
func (m *Manager) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.conns {
		c.mu.Lock()
		if c.cs != nil {
			n++
		}
		c.mu.Unlock()
	}
	return n
}

// logLines writes a server's stderr to the log, a line at a time.
type logLines struct {
	log    *slog.Logger
	server string
	mu     sync.Mutex
	buf    []byte
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > 64<<10 { // a line without end: log what came
				i = len(l.buf)
			} else {
				return len(p), nil
			}
		}
		line := string(l.buf[:i])
		l.buf = l.buf[min(i+1, len(l.buf)):]
		if line != "" {
			l.log.Info("mcp server stderr", "server", l.server, "line", truncate(line, 2000))
		}
	}
}

// keyEnvs is KeyEnvs' answer, none without it.
func (m *Manager) keyEnvs() []string {
	if m.KeyEnvs == nil {
		return nil
	}
	return m.KeyEnvs()
}
