package e2e_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

// TestModelsListWithoutAModel: a server configured with no model (a base
// URL, CTXLS_MODEL empty) still has its models listed, for one to be
// picked: the picker used to say "The provider listed no models"
// (ctxls.models.list failed with kind noProvider). A turn still says what
// to set, and once the session has a picked model its turns use it.
func TestModelsListWithoutAModel(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithModels("llama3.1", "qwen2.5-coder"), openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	srv := lsptest.Binary(t, []string{backend.StoreEnv + "=", "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=", "OPENAI_API_KEY="}, "serve", "--data-dir", t.TempDir())
	srv.Initialize(lsptest.InitOptions{})
	var models api.ModelsListResult
	srv.MustCommand(api.ModelsList, map[string]any{}, &models)
	if !slices.Equal(models.Models, []string{"llama3.1", "qwen2.5-coder"}) || models.Default != "" || models.Current != "" {
		t.Errorf("models without a model configured: %+v", models)
	}
	err := srv.Call("ctxls/chat", map[string]any{"message": "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Fatalf("a turn without a model: %v", err)
	}
	var sess api.SessionResult
	srv.MustCommand(api.SetModel, map[string]any{"model": "qwen2.5-coder"}, &sess)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"picked"}})
	var res api.ChatResult
	if err := srv.Call("ctxls/chat", map[string]any{"message": "hi", "sessionId": sess.Session.ID}, &res); err != nil || res.Text != "picked" {
		t.Fatalf("a turn with the picked model: %+v %v", res, err)
	}
	if got := fake.Requests()[0].Parsed.Model; got != "qwen2.5-coder" {
		t.Errorf("the turn asked %q", got)
	}
	srv.MustCommand(api.ModelsList, map[string]any{"sessionId": sess.Session.ID}, &models)
	if models.Current != "qwen2.5-coder" || models.Default != "" {
		t.Errorf("models of the session: %+v", models)
	}
}

// TestDefaultModel: ctxls.session.setModel with default: true makes the
// model the one every new session starts with, kept in the data directory
// (a new daemon on it has it too, and a turn that makes its session uses
// it); without default a new session has no model (issue 36: the next new
// session failed with no model configured). The file keeps the model's
// name, never the key.
func TestDefaultModel(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithModels("llama3.1", "qwen2.5-coder"), openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	dir := t.TempDir()
	const key = "sk-test-not-to-be-kept-0123456789"
	env := []string{backend.StoreEnv + "=", "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=", "OPENAI_API_KEY=" + key}
	srv := lsptest.Binary(t, env, "serve", "--data-dir", dir)
	srv.Initialize(lsptest.InitOptions{})

	// Without default: the session has the model, a new one does not.
	var picked, fresh api.SessionResult
	srv.MustCommand(api.SetModel, map[string]any{"model": "llama3.1"}, &picked)
	srv.MustCommand(api.SessionNew, map[string]any{}, &fresh)
	if picked.Session.Meta.Model != "llama3.1" || fresh.Session.Meta.Model != "" {
		t.Fatalf("without default: picked %+v, new %+v", picked.Session.Meta, fresh.Session.Meta)
	}
	if err := srv.Call("ctxls/chat", map[string]any{"message": "hi", "sessionId": fresh.Session.ID}, nil); err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Fatalf("a new session's turn without a default model: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "preferences.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("setModel without default wrote the preferences: %v", err)
	}

	// With default: the next new session starts with it and its turn uses it.
	srv.MustCommand(api.SetModel, map[string]any{"sessionId": fresh.Session.ID, "model": "qwen2.5-coder", "default": true}, nil)
	fresh = api.SessionResult{}
	srv.MustCommand(api.SessionNew, map[string]any{}, &fresh)
	if fresh.Session.Meta.Model != "qwen2.5-coder" {
		t.Fatalf("a new session after default: %+v", fresh.Session.Meta)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"by default"}})
	var res api.ChatResult
	if err := srv.Call("ctxls/chat", map[string]any{"message": "hi", "sessionId": fresh.Session.ID}, &res); err != nil || res.Text != "by default" {
		t.Fatalf("a turn of the new session: %+v %v", res, err)
	}
	if got := fake.Requests()[0].Parsed.Model; got != "qwen2.5-coder" {
		t.Errorf("the turn asked %q", got)
	}
	var models api.ModelsListResult
	srv.MustCommand(api.ModelsList, map[string]any{"sessionId": picked.Session.ID}, &models)
	if models.Default != "qwen2.5-coder" || models.Current != "llama3.1" {
		t.Errorf("models after default: %+v", models)
	}
	srv.Shutdown()
	srv.Exit()
	data, err := os.ReadFile(filepath.Join(dir, "preferences.json"))
	if err != nil || !strings.Contains(string(data), "qwen2.5-coder") || strings.Contains(string(data), key) || strings.Contains(string(data), "sk-") {
		t.Errorf("preferences.json: %q %v", data, err)
	}

	// Another daemon on the data directory: a turn that makes its session
	// uses the default.
	srv = lsptest.Binary(t, env, "serve", "--data-dir", dir)
	srv.Initialize(lsptest.InitOptions{})
	srv.MustCommand(api.ModelsList, map[string]any{}, &models)
	if models.Default != "qwen2.5-coder" || models.Current != "qwen2.5-coder" {
		t.Errorf("models after a restart: %+v", models)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"after a restart"}})
	if err := srv.Call("ctxls/chat", map[string]any{"message": "hi again"}, &res); err != nil || res.Text != "after a restart" {
		t.Fatalf("a turn after a restart: %+v %v", res, err)
	}
	reqs := fake.Requests()
	if got := reqs[len(reqs)-1].Parsed.Model; got != "qwen2.5-coder" {
		t.Errorf("the turn after a restart asked %q", got)
	}
	var sess api.SessionResult
	srv.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &sess)
	if sess.Session.Meta.Model != "qwen2.5-coder" {
		t.Errorf("the session the turn made: %+v", sess.Session.Meta)
	}

	// An empty model with default forgets it: new sessions have none.
	srv.MustCommand(api.SetModel, map[string]any{"model": "", "default": true}, nil)
	var last api.SessionResult // meta.model is left out when empty
	srv.MustCommand(api.SessionNew, map[string]any{}, &last)
	if last.Session.Meta.Model != "" {
		t.Errorf("a new session after the default was forgotten: %+v", last.Session.Meta)
	}
}

// TestNoProviderMessageOverLSP: with no provider anywhere the turn's error
// (and its window/showMessage) says once what to set, naming the
// variables, and where an editor's user sets them: its environment or the
// ctxls.provider settings (issue 36: two messages in protocol terms, no
// OPENAI_API_KEY).
func TestNoProviderMessageOverLSP(t *testing.T) {
	parallel(t, waitTests)
	srv := lsptest.Binary(t, []string{backend.StoreEnv + "=", "OPENAI_BASE_URL=", "CTXLS_MODEL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY="}, "serve", "--data-dir", t.TempDir())
	srv.Initialize(lsptest.InitOptions{})
	err := srv.Call("ctxls/chat", map[string]any{"message": "hi"}, nil)
	if err == nil {
		t.Fatal("a turn without a provider")
	}
	shown := srv.WaitNotification("window/showMessage", 1)
	var p struct {
		Message string `json:"message"`
	}
	mustUnmarshal(t, shown.Params, &p)
	for _, msg := range []string{err.Error(), p.Message} {
		checkNoProviderMessage(t, msg)
		for _, want := range []string{"ctxls.provider", "environment"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the message does not name %q: %s", want, msg)
			}
		}
		if strings.Contains(msg, "initializationOptions") || strings.Contains(msg, "provider.baseURL") {
			t.Errorf("the message speaks the protocol: %s", msg)
		}
	}
}

// checkNoProviderMessage checks a no-provider message: said once, short,
// naming the keys' variables and how to give a server and a model.
func checkNoProviderMessage(t *testing.T, msg string) {
	t.Helper()
	if n := strings.Count(msg, "no model provider is configured"); n != 1 {
		t.Errorf("said %d times: %s", n, msg)
	}
	for _, want := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "CTXLS_MODEL"} {
		if strings.Count(msg, want) != 1 {
			t.Errorf("the message does not name %s once: %s", want, msg)
		}
	}
	if len(msg) > 500 || strings.Count(msg, "\n") > 1 {
		t.Errorf("the message is %d bytes, %d lines: %s", len(msg), strings.Count(msg, "\n")+1, msg)
	}
}
