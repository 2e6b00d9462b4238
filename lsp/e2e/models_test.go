package e2e_test

import (
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
