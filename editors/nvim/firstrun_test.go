package nvim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// testKey is the key the tests' password store holds and the fake
// provider wants.
const testKey = "sk-test-firstrun-3f9a1c"

// firstRun runs a phase of test/firstrun.lua in a headless Neovim against
// the fake provider at baseURL, with a fresh HOME, data directory and log
// file (returned, for the caller to read), and pass, a script standing in
// for a password manager (`pass show openai`): it prints the key and
// exits 0 once pass+".fixed" exists; before, it prints the key too but
// fails with "openai is not in the password store." on stderr.
func firstRun(t *testing.T, nvim, baseURL, phase string, fixed bool) (logFile string) {
	t.Helper()
	dir := t.TempDir()
	pass := filepath.Join(dir, "fakepass")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' %q\nif [ -e \"$0.fixed\" ]; then exit 0; fi\necho 'openai is not in the password store.' >&2\nexit 1\n", testKey)
	if err := os.WriteFile(pass, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if fixed {
		os.WriteFile(pass+".fixed", nil, 0o644)
	}
	file := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() {}\n"), 0o644)
	home := t.TempDir()
	logFile = filepath.Join(t.TempDir(), "ctxls.log")
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte(testKey), 0o600)
	env := append(os.Environ(), "CTXLS_BIN="+lsptest.BuildBinary(t), "CTXLS_DATA_DIR="+t.TempDir(), "CTXLS_TEST_FILE="+file,
		"CTXLS_TEST_PROVIDER_URL="+baseURL, "OPENAI_BASE_URL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "CTXLS_MODEL=", "HOME="+home,
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"CTXLS_TEST_PHASE="+phase, "CTXLS_TEST_KEY_FILE="+keyFile, "CTXLS_TEST_PASS="+pass, "CTXLS_TEST_LOG="+logFile)
	runNvim(t, nvim, "", "firstrun.lua", env, 60*time.Second, phase)
	return logFile
}

// TestNeovimKeyFromCommand: setup({ provider = { api_key = "cmd:pass show
// openai" } }) — the key a password manager prints reaches the provider
// (Authorization: Bearer), given to the daemon alone: not in Neovim's
// notifications, :messages, LSP log (at its most verbose), environment or
// the daemon's settings, nor in the daemon's log. A function works too.
func TestNeovimKeyFromCommand(t *testing.T) {
	t.Parallel()
	eachNeovim(t, func(t *testing.T, nvim string) {
		for _, phase := range []string{"cmd", "function"} {
			t.Run(phase, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithAPIKey(testKey), openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Keyed"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"answered with ", "the key"}})
				firstRun(t, nvim, fake.URL, phase, true)
				reqs := fake.Requests()
				if len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer "+testKey {
					t.Fatalf("the provider did not get the key: %d requests", len(reqs))
				}
			})
		}
	})
}

// TestNeovimKeyCommandFails: the key's command fails — Neovim says so once
// (its exit status and stderr, not what it printed on stdout), a question
// to OpenAI's API is refused with what failed and how to give the key;
// once the password store has the key, the next question gets the daemon
// started again with it and is answered.
func TestNeovimKeyCommandFails(t *testing.T) {
	t.Parallel()
	eachNeovim(t, func(t *testing.T, nvim string) {
		fake := openaitest.New(t, openaitest.WithAPIKey(testKey), openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Keyed"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"answered with ", "the key"}})
		logFile := firstRun(t, nvim, fake.URL, "cmdfail", false)
		reqs := fake.Requests()
		if len(reqs) == 0 || reqs[0].Question() != "hello once more" || reqs[0].Header.Get("Authorization") != "Bearer "+testKey {
			t.Fatalf("the question asked once the key was there did not reach the provider with it: %d requests", len(reqs))
		}
		if b, _ := os.ReadFile(logFile); strings.Contains(string(b), testKey) {
			t.Errorf("the daemon logged the key")
		}
	})
}

// TestNeovimSetupView: :CtxlsSetup shows what is set and what the daemon
// makes of it (the server's models).
func TestNeovimSetupView(t *testing.T) {
	t.Parallel()
	eachNeovim(t, func(t *testing.T, nvim string) {
		fake := openaitest.New(t, openaitest.WithModels("test-model", "big-model"))
		firstRun(t, nvim, fake.URL, "setup", true)
	})
}

// TestNeovimModelForNewSessions: :CtxlsModel's second question — a model
// for this session only leaves a new session with the provider's; one for
// new sessions too is what a new session's requests ask for.
func TestNeovimModelForNewSessions(t *testing.T) {
	t.Parallel()
	eachNeovim(t, func(t *testing.T, nvim string) {
		fake := openaitest.New(t, openaitest.WithModels("test-model", "other-model", "big-model"),
			openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Models"}}))
		for i := 1; i <= 4; i++ {
			fake.Enqueue(openaitest.Reply{Chunks: []string{fmt.Sprintf("answer %d", i)}})
		}
		firstRun(t, nvim, fake.URL, "model-default", true)
		want := map[string]string{"first question": "test-model", "second question": "other-model", "in a new session": "test-model", "in a newer session": "big-model"}
		seen := 0
		for _, r := range fake.Requests() {
			if m, ok := want[r.Question()]; ok {
				seen++
				if r.Parsed.Model != m {
					t.Errorf("%q was asked of %s, want %s", r.Question(), r.Parsed.Model, m)
				}
			}
		}
		if seen != len(want) {
			t.Errorf("the provider saw %d of the %d questions", seen, len(want))
		}
	})
}
