package emacs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// testKey is the key the fake provider wants: in ~/.authinfo, returned by
// ctxls-api-key, typed at M-x ctxls-setup.
const testKey = "sk-test-emacs-firstrun-7d41"

// keyed runs the ERT test in a fresh Emacs whose HOME is home, against a
// fake provider that answers only requests with the key ("Bearer
// testKey"), and returns the provider. The test reads the key from
// CTXLS_TEST_KEY_FILE (not the environment: every process would have it);
// the provider's URL is CTXLS_TEST_PROVIDER_URL, and OPENAI_BASE_URL too
// unless noEnv.
func keyed(t *testing.T, emacs emacsVersion, test string, noEnv bool, replies ...string) *openaitest.Server {
	t.Helper()
	fake := openaitest.New(t, openaitest.WithAPIKey(testKey), openaitest.WithModels("test-model", "big-model"),
		openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Keyed"}}))
	for _, r := range replies {
		fake.Enqueue(openaitest.Reply{Chunks: []string{r}})
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte(testKey), 0o600)
	r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
	env := []string{"CTXLS_TEST_KEY_FILE=" + keyFile, "CTXLS_TEST_PROVIDER_URL=" + fake.URL, "HOME=" + t.TempDir()}
	if noEnv {
		env = append(env, "OPENAI_BASE_URL=")
	}
	r.run(t, test, env...)
	return fake
}

// gotKey fails the test unless the provider's requests, as many as want,
// all carried the key.
func gotKey(t *testing.T, fake *openaitest.Server, want int) []openaitest.Request {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) < want {
		t.Fatalf("the provider got %d requests with the key, want %d", len(reqs), want)
	}
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			t.Fatalf("a request without the key: %q", r.Header.Get("Authorization"))
		}
	}
	return reqs
}

// TestEmacsKey: the provider's key, given to the daemon alone (in its
// environment: not Emacs's, another process's, a buffer, a message, the
// initialization options): from ~/.authinfo (auth-source, host and user
// apikey as gptel reads them), from ctxls-api-key as a function, and put in
// ~/.authinfo after a question was refused for want of a provider (the
// daemon then started again with it).
func TestEmacsKey(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		for _, test := range []string{"ctxls-test-authinfo-key", "ctxls-test-api-key-function"} {
			t.Run(test, func(t *testing.T) {
				t.Parallel()
				fake := keyed(t, emacs, test, false, "answered with the key")
				if reqs := gotKey(t, fake, 1); reqs[0].Question() != "hello with a key" {
					t.Errorf("the provider was asked %q", reqs[0].Question())
				}
			})
		}
		t.Run("ctxls-test-key-later", func(t *testing.T) {
			t.Parallel()
			fake := keyed(t, emacs, "ctxls-test-key-later", true, "answered with the key")
			if reqs := gotKey(t, fake, 1); reqs[0].Question() != "hello once more" {
				t.Errorf("the provider was asked %q", reqs[0].Question())
			}
		})
	})
}

// TestEmacsSetupCommand: M-x ctxls-setup asks for the server, the key (saved to
// ~/.authinfo by auth-source) and the model from the server's list, and
// saves ctxls-provider; the next question goes to that model with the key.
func TestEmacsSetupCommand(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := keyed(t, emacs, "ctxls-test-setup", true, "answered with the key")
		reqs := gotKey(t, fake, 1)
		if reqs[0].Question() != "after the set-up" || reqs[0].Parsed.Model != "big-model" {
			t.Errorf("the provider was asked %q of %s", reqs[0].Question(), reqs[0].Parsed.Model)
		}
	})
}

// TestEmacsModelForNewSessions: C-c x m sets this session's model, C-u C-c
// x m this and new sessions': a new session's requests name it.
func TestEmacsModelForNewSessions(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithModels("test-model", "other-model", "big-model"),
			openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Models"}}))
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-model-for-new-sessions")
		want := map[string]string{"first question": "test-model", "in a new session": "test-model", "in a newer session": "big-model"}
		seen := 0
		for _, req := range fake.Requests() {
			if m, ok := want[req.Question()]; ok {
				seen++
				if req.Parsed.Model != m {
					t.Errorf("%q was asked of %s, want %s", req.Question(), req.Parsed.Model, m)
				}
			}
		}
		if seen != len(want) {
			t.Errorf("the provider saw %d of the %d questions", seen, len(want))
		}
	})
}
