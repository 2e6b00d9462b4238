package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// toolAsker is how "ctxls chat" gets the user's permission for a tool
// call: a call matching an --allow-tool pattern runs; else the user is
// asked on the terminal (/dev/tty, when stderr is one); with no terminal
// the call is declined, and the model told.
type toolAsker struct {
	allow  []string // --allow-tool patterns
	errOut io.Writer
	// tty opens the terminal to ask on (nil: none).
	tty func() (io.ReadWriteCloser, error)
}

// matches reports whether a pattern allows the call. A pattern names the
// server and the tool apart, each matched whole against the exact name
// with * (any characters), ? (one) and [...]: SERVER/TOOL is split at its
// first /; mcp__SERVER__TOOL at its first __ after mcp__, its parts
// matched against the names as the model's tool names have them (other
// characters than letters, digits, _ and - made _). So mcp__gh__* allows
// the tools of the server gh, never of a server gh__evil (whose tools only
// SERVER/TOOL patterns name). * (or mcp__*) alone allows every tool; a
// pattern of neither form, none.
func (a *toolAsker) matches(server, name string) bool {
	for _, p := range a.allow {
		if p == "*" || p == "mcp__*" {
			return true
		}
		if rest, ok := strings.CutPrefix(p, "mcp__"); ok {
			sp, tp, ok := strings.Cut(rest, "__")
			if ok && glob(sp, service.NamePart(server)) && glob(tp, service.NamePart(name)) {
				return true
			}
			continue
		}
		if sp, tp, ok := strings.Cut(p, "/"); ok && glob(sp, server) && glob(tp, name) {
			return true
		}
	}
	return false
}

// glob reports whether s matches pattern whole: * is any characters (/
// included), ? one, [...] a class as path.Match has it.
func glob(pattern, s string) bool {
	p := []rune(pattern)
	var re strings.Builder
	re.WriteString(`^(?s:`)
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			re.WriteString(`.*`)
		case '?':
			re.WriteString(`.`)
		case '[':
			end := slices.Index(p[i+1:], ']')
			if end < 0 {
				return false
			}
			class := string(p[i+1 : i+1+end])
			neg := strings.HasPrefix(class, "^")
			class = strings.ReplaceAll(regexp.QuoteMeta(strings.TrimPrefix(class, "^")), `\-`, "-")
			if neg {
				class = "^" + class
			}
			re.WriteString("[" + class + "]")
			i += end + 1
		case '\\':
			if i+1 < len(p) {
				i++
				re.WriteString(regexp.QuoteMeta(string(p[i])))
			}
		default:
			re.WriteString(regexp.QuoteMeta(string(p[i])))
		}
	}
	re.WriteString(`)$`)
	r, err := regexp.Compile(re.String())
	return err == nil && r.MatchString(s)
}

func (a *toolAsker) ask(ctx context.Context, r service.PermissionRequest) (service.Decision, error) {
	if r.Trust != nil {
		return a.askTrust(ctx, *r.Trust)
	}
	c := r.Call
	if r.Command != nil {
		// A command line runs without asking only when --allow-tool names
		// run_command itself (never by * or a SERVER/TOOL pattern).
		if slices.Contains(a.allow, c.Tool) {
			return service.AllowOnce, nil
		}
		if a.tty == nil {
			fmt.Fprintf(a.errOut, "[%s: declined, since there is no terminal to ask on; allow it with --allow-tool %s]\n", termsafe.Line(c.Tool), termsafe.Line(c.Tool))
			return service.RejectOnce, errors.New("no terminal to ask on")
		}
	} else if a.matches(c.Server, c.Tool) {
		return service.AllowOnce, nil
	}
	if a.tty == nil {
		server, name := termsafe.Line(c.Server), termsafe.Line(c.Tool)
		fmt.Fprintf(a.errOut, "[%s · %s: declined, since there is no terminal to ask on; allow it with --allow-tool %s/%s]\n", server, name, server, name)
		return service.RejectOnce, errors.New("no terminal to ask on")
	}
	// Arguments longer than the question shows are cut with their count,
	// and [s] shows them whole before asking again.
	q, more := service.PermissionQuestion(r, service.AskArguments)
	keys := "\n  [y] yes, once   [a] always in this session   [n] no   [v] never in this session"
	if more > 0 {
		keys += "   [s] show all the arguments"
	}
	s, err := a.prompt(ctx, q+keys+": ")
	for err == nil && more > 0 && (s == "s" || s == "show") {
		s, err = a.prompt(ctx, "ctxls: the arguments, whole: "+service.QuestionArguments(c.Arguments)+keys+": ")
	}
	if err != nil {
		return service.RejectOnce, err
	}
	switch s {
	case "y", "yes":
		return service.AllowOnce, nil
	case "a", "always":
		return service.AllowAlways, nil
	case "v", "never":
		return service.RejectAlways, nil
	}
	return service.RejectOnce, nil
}

// askTrust asks whether to trust a workspace's .mcp.json; with no
// terminal it stays undecided (and unused) and the user is told how to
// trust it.
func (a *toolAsker) askTrust(ctx context.Context, r service.TrustRequest) (service.Decision, error) {
	if a.tty == nil {
		path := termsafe.Line(r.Path)
		fmt.Fprintf(a.errOut, "[%s is not used: it configures MCP servers and is not trusted yet; trust it with: ctxls mcp trust %s]\n", path, path)
		return service.RejectOnce, errors.New("no terminal to ask on")
	}
	s, err := a.prompt(ctx, service.TrustQuestion(r)+"\n  [t] trust   [n] don't trust: ")
	if err != nil {
		return service.RejectOnce, err
	}
	if s == "t" || s == "trust" || s == "y" || s == "yes" {
		return service.AllowAlways, nil
	}
	return service.RejectAlways, nil
}

// prompt asks a question on the terminal and returns the answer's line,
// trimmed and in lower case.
func (a *toolAsker) prompt(ctx context.Context, question string) (string, error) {
	tty, err := a.tty()
	if err != nil {
		return "", err
	}
	defer tty.Close()
	answer := make(chan string, 1)
	fmt.Fprint(tty, question)
	go func() {
		line, _ := bufio.NewReader(tty).ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-answer:
		return s, nil
	}
}

// terminal opens the controlling terminal when stderr is one (a script's
// or a test's stderr is not: they are never asked).
func terminal() func() (io.ReadWriteCloser, error) {
	fi, err := os.Stderr.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	f.Close()
	return func() (io.ReadWriteCloser, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }
}
