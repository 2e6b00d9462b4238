package service

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
)

// open is a service over a SQLite store in a temporary folder, with no
// provider in its environment and no local Ollama.
func open(t *testing.T, st session.Store, prov api.Provider) *Service {
	t.Helper()
	if st == nil {
		var err error
		if st, err = sqlite.Open(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	s := New(st, Config{Provider: prov, Getenv: func(string) string { return "" }, Probe: func() bool { return false }})
	t.Cleanup(func() { s.Close() })
	return s
}

// TestOperationsAreDeclared: every exported method of Service shaped as an
// operation (a context and an api argument in, an api result and an error
// out) is declared in api.Interface, so no door can reach an operation the
// table (and docs/protocol.md, and the clients' bindings) does not have.
// That every declared operation is implemented, the compiler checks
// (var _ api.Interface = (*Service)(nil)).
func TestOperationsAreDeclared(t *testing.T) {
	t.Parallel()
	iface := reflect.TypeFor[api.Interface]()
	svc := reflect.TypeFor[*Service]()
	ctxType := reflect.TypeFor[context.Context]()
	errType := reflect.TypeFor[error]()
	apiPkg := iface.PkgPath()
	shaped := 0
	for i := range svc.NumMethod() {
		m := svc.Method(i)
		ft := m.Type // receiver first
		if ft.NumIn() != 3 || ft.NumOut() != 2 || ft.In(1) != ctxType || ft.Out(1) != errType {
			continue
		}
		arg, res := ft.In(2), ft.Out(0)
		if arg.Kind() != reflect.Pointer || res.Kind() != reflect.Pointer || arg.Elem().PkgPath() != apiPkg || res.Elem().PkgPath() != apiPkg {
			continue
		}
		shaped++
		if _, ok := iface.MethodByName(m.Name); !ok {
			t.Errorf("Service.%s is an operation api.Commands does not declare: declare it there (see docs/architecture.md, \"Adding an operation\")", m.Name)
		}
	}
	if shaped != iface.NumMethod() {
		t.Errorf("%d operation-shaped methods, %d declared", shaped, iface.NumMethod())
	}
}

var _ api.Connection = (*Service)(nil)

// TestDoorMethodsAreDeclared: every exported method of Service is declared
// in api (an operation in api.Interface, or api.Connection), but the three
// whose types are the service's own: a door reaches nothing of the service
// that api does not list.
func TestDoorMethodsAreDeclared(t *testing.T) {
	t.Parallel()
	own := []string{"StartTurn", "Subscribe", "Tools"}
	ops, conn := reflect.TypeFor[api.Interface](), reflect.TypeFor[api.Connection]()
	svc := reflect.TypeFor[*Service]()
	for i := range svc.NumMethod() {
		name := svc.Method(i).Name
		_, op := ops.MethodByName(name)
		_, c := conn.MethodByName(name)
		if !op && !c && !slices.Contains(own, name) {
			t.Errorf("Service.%s is declared neither in api.Interface nor in api.Connection: declare it, or unexport it", name)
		}
	}
	if svc.NumMethod() != ops.NumMethod()+conn.NumMethod()+len(own) {
		t.Errorf("Service has %d exported methods: %d operations, %d of api.Connection and %v", svc.NumMethod(), ops.NumMethod(), conn.NumMethod(), own)
	}
}

// TestKinds: the domain's errors get their kinds in one place.
func TestKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want api.Kind
	}{
		{fmt.Errorf("x: %w", session.ErrNotFound), api.KindNotFound},
		{fmt.Errorf("x: %w", session.ErrInvalid), api.KindInvalidArgument},
		{fmt.Errorf("x: %w", session.ErrTooLarge), api.KindTooLarge},
		{fmt.Errorf("x: %w", session.ErrPermission), api.KindPermissionDenied},
		{chat.ErrBusy, api.KindBusy},
		{session.ErrTurnElsewhere, api.KindBusy},
		{chat.ErrSessionDeleted, api.KindNotFound},
		{buffer.ErrNotOpen, api.KindNotFound},
		{chat.ErrNothingToCompact, api.KindInvalidArgument},
		{context.Canceled, api.KindCancelled},
		{fmt.Errorf("the title request failed: %w", chat.ErrProviderFailed), api.KindProviderFailed},
		{&session.AmbiguousError{Prefix: "kkkk"}, api.KindInvalidArgument},
		{errors.New("disk on fire"), api.KindInternal},
		{api.Errorf(api.KindNoProvider, "none"), api.KindNoProvider},
	} {
		if got := api.KindOf(fail(c.err)); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
	if fail(nil) != nil {
		t.Error("fail(nil) is not nil")
	}
}

// TestRegenerateTitleUsesTheSessionModel: with a provider that names no
// model (a local server, no CTXLS_MODEL), a session with a model of its own
// gets its title from that model; one without fails with noProvider.
func TestRegenerateTitleUsesTheSessionModel(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	s := open(t, nil, api.Provider{BaseURL: fake.URL})
	ctx := context.Background()
	mk := func(model string) string {
		sess, err := s.store.Create(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if model != "" {
			if _, err := s.store.SetModel(ctx, sess.ID, model); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []*session.Message{
			{SessionID: sess.ID, Role: session.RoleUser, Content: "Why does login redirect twice?"},
			{SessionID: sess.ID, Role: session.RoleAssistant, Content: "Because of the middleware.", Status: session.StatusComplete},
		} {
			if err := s.store.AppendMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		return sess.ID
	}
	with := mk("session-model")
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Double login redirect"}})
	res, err := s.SessionRegenerateTitle(ctx, &api.SessionIDArgs{SessionID: with})
	if err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if res.Session.Title != "Double login redirect" || res.Session.TitleSource != api.TitleModel || len(reqs) != 1 || reqs[0].Parsed.Model != "session-model" {
		t.Errorf("regenerated: %+v, requests %d", res.Session, len(reqs))
	}
	without := mk("")
	if _, err := s.SessionRegenerateTitle(ctx, &api.SessionIDArgs{SessionID: without}); api.KindOf(err) != api.KindNoProvider || !strings.Contains(err.Error(), "no model is configured") {
		t.Errorf("without a model anywhere: %v", err)
	}
}

// writeLog is a store that records, per session, what is written after
// the session was deleted.
type writeLog struct {
	session.Store
	mu      sync.Mutex
	deleted map[string]bool
	after   []string
	answer  map[int64]string // message id → session
	// busyAtDelete: the engine still ran the session's turn when its
	// delete reached the store.
	engine       *chat.Engine
	busyAtDelete bool
}

func (w *writeLog) note(id, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleted[id] {
		w.after = append(w.after, what)
	}
}

func (w *writeLog) sessionOf(msg int64) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answer[msg]
}

func (w *writeLog) AppendMessage(ctx context.Context, m *session.Message) error {
	w.note(m.SessionID, "AppendMessage")
	err := w.Store.AppendMessage(ctx, m)
	w.mu.Lock()
	w.answer[m.ID] = m.SessionID
	w.mu.Unlock()
	return err
}

func (w *writeLog) UpdateMessage(ctx context.Context, id int64, content string, status session.Status, usage *session.Usage) error {
	w.note(w.sessionOf(id), "UpdateMessage")
	return w.Store.UpdateMessage(ctx, id, content, status, usage)
}

func (w *writeLog) Heartbeat(ctx context.Context, id int64) error {
	w.note(w.sessionOf(id), "Heartbeat")
	return w.Store.Heartbeat(ctx, id)
}

func (w *writeLog) Delete(ctx context.Context, id string) error {
	if w.engine.Busy(id) {
		w.mu.Lock()
		w.busyAtDelete = true
		w.mu.Unlock()
	}
	err := w.Store.Delete(ctx, id)
	w.mu.Lock()
	w.deleted[id] = true
	w.mu.Unlock()
	return err
}

// TestDeleteStopsTheTurnFirst: deleting a session whose turn is streaming
// stops the turn and waits for its end before the session goes, so nothing
// of the turn (its answer's last checkpoint, its final state) is written
// after the delete, and the turn ends as deleted.
func TestDeleteStopsTheTurnFirst(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &writeLog{Store: st, deleted: map[string]bool{}, answer: map[int64]string{}}
	fake := openaitest.New(t)
	s := open(t, w, api.Provider{BaseURL: fake.URL, Model: "test-model"})
	s.engine.Checkpoint = 20 * time.Millisecond
	w.engine = s.engine
	ctx := context.Background()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	tr, err := s.StartTurn(ctx, &api.ChatArgs{Message: "a long question"}, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range tr.Events() {
		if d, ok := ev.(TextDelta); ok && d.Text == "partial " {
			break
		}
	}
	time.Sleep(100 * time.Millisecond) // checkpoints happen meanwhile
	if _, err := s.SessionDelete(ctx, &api.SessionRefArgs{SessionID: tr.SessionID}); err != nil {
		t.Fatal(err)
	}
	final := tr.Wait()
	f, ok := final.(Failed)
	if !ok || api.KindOf(f.Err) != api.KindNotFound || !errors.Is(f.Err, chat.ErrSessionDeleted) {
		t.Errorf("the turn ended with %#v", final)
	}
	time.Sleep(200 * time.Millisecond) // a late checkpoint would come now
	w.mu.Lock()
	after := slices.Clone(w.after)
	w.mu.Unlock()
	if len(after) > 0 {
		t.Errorf("written after the delete: %v", after)
	}
	if w.busyAtDelete {
		t.Error("the session was deleted while its turn still ran")
	}
	if _, err := st.Get(ctx, tr.SessionID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the session is still stored: %v", err)
	}
	if s.Current() != "" {
		t.Errorf("the deleted session is still current")
	}
}

// TestMCPServersNeverGetTheKeyVariable: the connection's provider's own key
// variable (its apiKeyEnv) is one no MCP server's env expands to, as
// OPENAI_API_KEY is not (mcpclient's TestServerEnvironment): the manager
// reads it from the provider as set now.
func TestMCPServersNeverGetTheKeyVariable(t *testing.T) {
	t.Parallel()
	s := open(t, nil, api.Provider{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "GROQ_API_KEY"})
	m := s.box.Manager()
	if got := m.KeyEnvs(); !slices.Equal(got, []string{"GROQ_API_KEY"}) {
		t.Errorf("held back from MCP servers: %q", got)
	}
	s.SetProvider(api.Provider{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "MY_PROVIDER_KEY"})
	if got := m.KeyEnvs(); !slices.Equal(got, []string{"MY_PROVIDER_KEY"}) {
		t.Errorf("after the provider changed: %q", got)
	}
}
