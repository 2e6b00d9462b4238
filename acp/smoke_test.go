package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

func TestSmoke(t *testing.T) {
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Hello ", "there"}})
	bin := lsptest.BuildBinary(t)
	cmd := exec.Command(bin, "acp", "--data-dir", t.TempDir(), "--base-url", fake.URL, "--model", "m1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) { fmt.Fprintln(in, s) }
	wait := func(pred string) string {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("closed; stderr %s", stderr.String())
				}
				t.Log(l)
				if strings.Contains(l, pred) {
					return l
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s; stderr %s", pred, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	wait(`"id":1`)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	l := wait(`"id":2`)
	var r struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal([]byte(l), &r)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, r.Result.SessionID))
	wait(`"id":3`)
	send(`not json`)
	wait(`-32700`)
	send(`{"jsonrpc":"2.0","id":4,"method":"nope","params":{}}`)
	wait(`"id":4`)
}
