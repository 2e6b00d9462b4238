// Command minimal is the smallest Go LSP server over stdio: it answers
// initialize, every other request with null, and exits on exit. bench/run
// measures its spawn → initialize reply with the same driver (lspbench) in
// the same run as ctxls's, so the start-up target of issue 14 is a ratio to
// what any Go stdio server pays (exec, the runtime's start, one frame each
// way), not a figure in milliseconds that a busy machine moves.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		body, err := readFrame(in)
		if err != nil {
			os.Exit(0)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) != nil {
			continue
		}
		if msg.Method == "exit" {
			os.Exit(0)
		}
		if msg.ID == nil {
			continue // a notification
		}
		result := "null"
		if msg.Method == "initialize" {
			result = `{"capabilities":{"textDocumentSync":2},"serverInfo":{"name":"minimal"}}`
		}
		reply := `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + result + `}`
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(reply), reply)
		out.Flush()
	}
}

// readFrame reads one Content-Length framed message.
func readFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return nil, io.ErrUnexpectedEOF
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}
