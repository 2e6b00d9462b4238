package nvim_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

// chatEnv is the environment of a test/chat.lua run: its own HOME, the
// daemon on dataDir (and store, a PostgreSQL DSN, when not ""), the fake
// provider, and shared, the file two runs pass a session id in.
func chatEnv(t *testing.T, bin, dataDir, store, baseURL, file, shared string) []string {
	return append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir, "CTXLS_STORE_DSN="+store, backend.StoreEnv+"=",
		"CTXLS_TEST_FILE="+file, "OPENAI_BASE_URL="+baseURL, "OPENAI_API_KEY=", "CTXLS_MODEL=", "CTXLS_SHARED="+shared,
		"HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
}

func testFile(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644)
	return file
}

// startNvim runs test/chat.lua's phase in the background; the returned
// func waits for it and fails the test when it failed.
func startNvim(t *testing.T, nvim string, env []string, phase string, timeout time.Duration) func() {
	argv := headlessArgs(t, nvim, "chat.lua")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(env, "CTXLS_TEST_PHASE="+phase)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return func() {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v\n%s", phase, err, out.String())
			}
		case <-time.After(timeout):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: nvim did not finish:\n%s", phase, out.String())
		}
	}
}

// waitFile waits for path to exist (written by a phase).
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNeovimTurnsMadeElsewhere: a turn asked in another Neovim (another
// daemon) in the session open in this Neovim's chat appears there live, on
// the daemon's ctxls/sessionUpdated: with the PostgreSQL store, and with
// SQLite (two daemons on one data directory; Neovim neither gains focus nor
// enters the chat). B's answer shows while B's daemon writes it. The chat's
// own turns still stream in, nothing shown twice.
func TestNeovimTurnsMadeElsewhere(t *testing.T) {
	t.Parallel()
	// One PostgreSQL for every Neovim: each has a database of its own
	// (NOTIFY reaches the listeners of its database only).
	c, stop, pgErr := pgtest.Launch()
	if pgErr == nil {
		t.Cleanup(func() {
			if err := stop(); err != nil {
				t.Error(err)
			}
		})
		if out, err := c.Psql(t, "", "postgres", "CREATE ROLE alice LOGIN"); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	var initMu sync.Mutex // one schema made at a time: its role is the cluster's
	eachNeovim(t, func(t *testing.T, nvim string) {
		for _, store := range []string{"postgres", "sqlite"} {
			t.Run(store, func(t *testing.T) {
				t.Parallel() // each store has its own Neovims, daemons, provider and folders
				var db string
				if store == "postgres" {
					pgtest.Need(t, pgErr)
					db = "nvim_" + strings.NewReplacer(".", "_").Replace(strings.Split(t.Name(), "/")[1])
					initMu.Lock()
					out, err := c.Psql(t, "", "postgres", "CREATE DATABASE "+db)
					if err == nil {
						_, err = backend.InitPostgres(context.Background(), c.DSN("", db))
					}
					if err == nil {
						out, err = c.Psql(t, "", db, "GRANT ctxls_user TO alice; GRANT CONNECT ON DATABASE "+db+" TO alice")
					}
					initMu.Unlock()
					if err != nil {
						t.Fatalf("%v %s", err, out)
					}
				}
				testTurnsMadeElsewhere(t, nvim, c, db)
			})
		}
	})
}

// testTurnsMadeElsewhere plays TestNeovimTurnsMadeElsewhere in nvim with
// database db of cluster c (its schema made, alice a ctxls user there), or
// with SQLite when db is "".
func testTurnsMadeElsewhere(t *testing.T, nvim string, c *pgtest.Cluster, db string) {
	bin := lsptest.BuildBinary(t)
	title := openaitest.Reply{Chunks: []string{"Shared session"}}
	// B's answer is slow to start: A shows it being written. SQLite's
	// daemon looks for changes every half second.
	slow := 700 * time.Millisecond
	if db == "" {
		slow = 2 * time.Second
	}
	fake := openaitest.New(t, openaitest.WithTitles(title))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"answer ", "in A"}}, openaitest.Reply{Chunks: []string{"answer ", "from B"}, Delay: slow},
		openaitest.Reply{Chunks: []string{"second answer ", "in A"}, Delay: 50 * time.Millisecond})
	dsn, dirA, dirB, phase := "", t.TempDir(), t.TempDir(), "sqlite-a"
	if db != "" {
		dsn, phase = c.DSN("alice", db), "live-a"
	} else {
		dirB = dirA // two daemons on one data directory
	}
	file, shared := testFile(t), filepath.Join(t.TempDir(), "session")
	waitA := startNvim(t, nvim, chatEnv(t, bin, dirA, dsn, fake.URL, file, shared), phase, 90*time.Second)
	waitFile(t, shared)
	if db != "" {
		// A's daemon listens for changes before B changes anything.
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, err := c.Psql(t, "", db, "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN ctxls_changes' AND datname = current_database()")
			if n, _ := strconv.Atoi(strings.TrimSpace(out)); err == nil && n >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("A's daemon does not listen for changes: %q %v", out, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	startNvim(t, nvim, chatEnv(t, bin, dirB, dsn, fake.URL, file, shared), "live-b", 60*time.Second)()
	waitA()
}

// TestNeovimStoppedAnswers: an answer stopped with :CtxlsCancel reads
// "cancelled" in the chat after a reload too, and one cut off when its
// daemon died reads "interrupted".
func TestNeovimStoppedAnswers(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimStoppedAnswers)
}

func testNeovimStoppedAnswers(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Title"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"stopped part", " never"}, Fault: openaitest.FaultStall, FaultAfter: 1},
		openaitest.Reply{Chunks: []string{"crashed part", " never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	env := chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), "")
	startNvim(t, nvim, env, "stop", 60*time.Second)()
	startNvim(t, nvim, env, "stop-reload", 60*time.Second)()
}

// TestNeovimModelAndUsage: each answer's token usage under it and the
// session's in the chat's header beside the model; :CtxlsModel chooses the
// model from the provider's list, typed, back to the default, or given;
// the next turn uses it; a new Neovim's resumed chat reads the same.
func TestNeovimModelAndUsage(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimModelAndUsage)
}

func testNeovimModelAndUsage(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithModels("test-model", "big-model"), openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Usage session"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"first ", "answer"}, Usage: &openai.Usage{PromptTokens: 1200, CompletionTokens: 30, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 200}}},
		openaitest.Reply{Chunks: []string{"second ", "answer"}, Usage: &openai.Usage{PromptTokens: 500, CompletionTokens: 20}})
	shared := filepath.Join(t.TempDir(), "chat")
	env := chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), shared)
	startNvim(t, nvim, env, "model", 60*time.Second)()
	models := map[string]string{}
	for _, r := range fake.Streamed() {
		models[r.Question()] = r.Parsed.Model
	}
	if models["first question"] != "test-model" || models["second question"] != "big-model" {
		t.Errorf("the models asked: %v", models)
	}
	startNvim(t, nvim, env, "model-reload", 60*time.Second)()
}

// TestNeovimCompose: :CtxlsChat's compose window sends a question of
// several lines (Enter a new line, Ctrl-S or Enter in Normal mode sends),
// with the range it was opened with; a question sent while a turn runs is
// kept.
func TestNeovimCompose(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimCompose)
}

func testNeovimCompose(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Compose"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"answer ", "one"}},
		openaitest.Reply{Chunks: []string{"slow ", "answer"}, Delay: 400 * time.Millisecond},
		openaitest.Reply{Chunks: []string{"answer ", "three"}})
	env := chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), "")
	startNvim(t, nvim, env, "compose", 60*time.Second)()
	var asked []string
	for _, r := range fake.Streamed() {
		asked = append(asked, r.Question())
	}
	if want := []string{"first line\nsecond line", "slow question", "next\nquestion"}; strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Errorf("the questions asked: %q, want %q", asked, want)
	}
	if c := fake.Streamed()[0].TurnContext(); !strings.Contains(c, "(the user selected lines 3–4)") {
		t.Errorf("the range did not go with the first question:\n%s", c)
	}
}

// TestNeovimComposeHistory: in the compose window Ctrl-P and Ctrl-N
// bring back the questions sent (from it and :CtxlsAsk), in Insert and
// Normal mode, and forward to the draft; a question brought back and
// edited is sent as edited; a new Neovim has them too.
func TestNeovimComposeHistory(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimComposeHistory)
}

func testNeovimComposeHistory(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"History"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"answer ", "one"}}, openaitest.Reply{Chunks: []string{"answer ", "two"}},
		openaitest.Reply{Chunks: []string{"answer ", "three"}}, openaitest.Reply{Chunks: []string{"answer ", "four"}})
	env := chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), "")
	startNvim(t, nvim, env, "history", 60*time.Second)()
	var asked []string
	for _, r := range fake.Streamed() {
		asked = append(asked, r.Question())
	}
	if want := []string{"first\nquestion", "question two", "question two again", "asked on the command line"}; strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Errorf("the questions asked: %q, want %q", asked, want)
	}
	startNvim(t, nvim, env, "history-again", 60*time.Second)()
}

// TestNeovimRetryAndEdit: :CtxlsRetry asks a failed answer's question
// again in its place; :CtxlsEdit resends the first question edited, the
// turns after it gone (the model sees only the edited question).
func TestNeovimRetryAndEdit(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimRetryAndEdit)
}

func testNeovimRetryAndEdit(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Rewind"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"first ", "answer"}},
		openaitest.Reply{Status: 400},
		openaitest.Reply{Chunks: []string{"retried ", "answer"}},
		openaitest.Reply{Chunks: []string{"edited ", "answer"}})
	env := chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), "")
	startNvim(t, nvim, env, "rewind", 60*time.Second)()
	reqs := fake.Streamed()
	last := reqs[len(reqs)-1]
	var users []string
	for _, m := range last.Parsed.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if last.Question() != "edited question" || strings.Contains(strings.Join(users, "\n"), "first question") || strings.Contains(strings.Join(users, "\n"), "second question") {
		t.Errorf("the edited turn's request holds %q", users)
	}
}

// TestNeovimPickers: sessions of one title told apart in the picker (the
// first question, the questions counted, how long ago); deleting the
// current session resumes the most recent remaining one.
func TestNeovimPickers(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimPickers)
}

func testNeovimPickers(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Same title"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"alpha ", "answer"}}, openaitest.Reply{Chunks: []string{"alpha ", "second"}},
		openaitest.Reply{Chunks: []string{"beta ", "answer"}}, openaitest.Reply{Chunks: []string{"after ", "answer"}})
	env := chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), "")
	startNvim(t, nvim, env, "pickers", 60*time.Second)()
}

// TestNeovimFirstView: the view Neovim sends before any session exists
// (the cursor resting on line 4) goes with the first question, which makes
// the session; :CtxlsAdd while that answer streams adds to that session.
func TestNeovimFirstView(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimFirstView)
}

func testNeovimFirstView(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"View"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"a ", "println"}, Delay: 200 * time.Millisecond},
		openaitest.Reply{Chunks: []string{"then ", "nothing"}})
	file := testFile(t)
	startNvim(t, nvim, chatEnv(t, bin, t.TempDir(), "", fake.URL, file, ""), "firstview", 60*time.Second)()
	reqs := fake.Streamed()
	if len(reqs) == 0 || reqs[0].Question() != "what is on my line?" {
		t.Fatalf("the model was asked %d questions", len(reqs))
	}
	want := "Last applet: editor (file=" + file + ", line=4)"
	if c := reqs[0].TurnContext() + reqs[0].ModelContext(); !strings.Contains(c, want) {
		t.Errorf("the first question went without the editor's view %q:\n%s", want, c)
	}
}

// TestNeovimImages: :CtxlsAttach adds an image file to the next question
// (shown in the compose window's status line and the :CtxlsAsk prompt,
// taken back with !; a file that is not an image, or one over 5 MiB, is
// refused, and an eleventh); the model gets it as an image part of that
// question, and again when it is retried (:CtxlsRetry); one the daemon
// refuses stays attached; the next question goes without one; the chat shows the image's line by name, and
// Enter or gf opens it: the file asked with, and after a reload its copy in
// the session folder.
func TestNeovimImages(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimImages)
}

func testNeovimImages(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	dir := t.TempDir()
	square := image.NewRGBA(image.Rect(0, 0, 8, 8))
	draw.Draw(square, square.Bounds(), &image.Uniform{color.RGBA{255, 0, 0, 255}}, image.Point{}, draw.Src)
	var shot, photo bytes.Buffer
	png.Encode(&shot, square)
	jpeg.Encode(&photo, square, nil)
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 5<<20+1-8)...)
	for name, data := range map[string][]byte{"shot.png": shot.Bytes(), "photo.jpg": photo.Bytes(), "notes.png": []byte("not an image\n"), "big.png": big,
		"broken.png": []byte("\x89PNG\r\n\x1a\nnone of a PNG's chunks")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Picture"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"a red ", "square"}}, openaitest.Reply{Chunks: []string{"still a red ", "square"}},
		openaitest.Reply{Chunks: []string{"no ", "image"}})
	env := append(chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), filepath.Join(t.TempDir(), "dir")), "CTXLS_IMAGES_DIR="+dir)
	startNvim(t, nvim, env, "images", 60*time.Second)()
	reqs := fake.Streamed()
	if len(reqs) != 3 {
		t.Fatalf("%d turns asked, want 3", len(reqs))
	}
	last := func(r openaitest.Request) openai.ChatCompletionMessage {
		ms := r.Parsed.Messages
		return ms[len(ms)-1]
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(shot.Bytes())
	if got := openaitest.Images(last(reqs[0])); len(got) != 1 || got[0] != want {
		t.Errorf("the question's images: %d, want shot.png's data URL (%d bytes); got %.80q", len(got), len(want), got)
	}
	if q := reqs[0].Question(); !strings.HasPrefix(q, "what is in the picture?") {
		t.Errorf("the question: %q", q)
	}
	if got := openaitest.Images(last(reqs[1])); len(got) != 1 || got[0] != want {
		t.Errorf("the question retried (:CtxlsRetry) carries %d images, want shot.png's", len(got))
	}
	if got := openaitest.Images(last(reqs[2])); len(got) != 0 {
		t.Errorf("the next question carries %d images, want none", len(got))
	}
	startNvim(t, nvim, env, "images-reload", 60*time.Second)()
}

// TestNeovimExport: :CtxlsExport says where it wrote the session (its
// folder, in ctxls's data folder), and writes it to a file given (an
// existing one only with !); with no session it says what to do.
func TestNeovimExport(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimExport)
}

func testNeovimExport(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Export"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"exported ", "answer"}})
	startNvim(t, nvim, chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), ""), "export", 60*time.Second)()
}

// TestNeovimPreview: :CtxlsPreview shows the model input :CtxlsAsk would
// send, the file in front of you (unsaved text, a range's lines) included.
func TestNeovimPreview(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimPreview)
}

func testNeovimPreview(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	startNvim(t, nvim, chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), ""), "preview", 60*time.Second)()
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the provider was asked %d times", n)
	}
}

// TestNeovimDaemonDied: when the daemon dies between two questions, the
// next one starts another and is asked in the same session and chat.
func TestNeovimDaemonDied(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimDaemonDied)
}

func testNeovimDaemonDied(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Restart"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"first ", "answer"}}, openaitest.Reply{Chunks: []string{"second ", "answer"}})
	startNvim(t, nvim, chatEnv(t, bin, t.TempDir(), "", fake.URL, testFile(t), ""), "restart", 60*time.Second)()
}
