package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/internal/mdtext"
)

// Markdown renders a session as Markdown: the head (title, times, model,
// relevant context) and every message in conversation order, each summary
// right after the last message it covers.
func Markdown(ss *Session, sets Context, msgs []Message) string {
	var b strings.Builder
	markdownHead(&b, ss, sets)
	markdownMessages(&b, InConversationOrder(msgs))
	return b.String()
}

// markdownHead writes the head of a session's Markdown.
func markdownHead(b *strings.Builder, ss *Session, sets Context) {
	fmt.Fprintf(b, "# %s\n\n", ss.Title)
	fmt.Fprintf(b, "- Session: `%s`\n- Created: %s\n- Updated: %s\n", ss.ID,
		ss.CreatedAt.Format("2006-01-02 15:04:05 UTC"), ss.UpdatedAt.Format("2006-01-02 15:04:05 UTC"))
	if ss.Meta.Model != "" {
		fmt.Fprintf(b, "- Model: %s\n", ss.Meta.Model)
	}
	if len(sets) > 0 {
		b.WriteString("\n## Relevant context\n\n")
		names := make([]string, 0, len(sets))
		for name := range sets {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			fmt.Fprintf(b, "- **%s**: %s\n", name, strings.Join(sets[name], ", "))
		}
	}
}

// markdownMessages writes msgs, in the order given, as Markdown entries:
// an answer's tool calls as a list of the tools it called with their
// arguments, a tool's result headed by the tool it is from.
func markdownMessages(b *strings.Builder, msgs []Message) {
	names := map[string]string{} // a call's id: its tool's name
	for _, m := range msgs {
		if m.IsSummary() {
			fmt.Fprintf(b, "\n## summary · %s\n\n%s\n\n%s\n", m.CreatedAt.Format("2006-01-02 15:04:05"), SummaryMarker(*m.SummaryOf), m.Content)
			continue
		}
		status := ""
		if m.Status != StatusComplete {
			status = " (" + string(m.Status) + ")"
		}
		model := ""
		if m.Model != "" {
			model = " · " + m.Model
		}
		role := string(m.Role)
		if m.Role == RoleTool && names[m.ToolCallID] != "" {
			role += " `" + names[m.ToolCallID] + "`"
		}
		fmt.Fprintf(b, "\n## %s%s%s · %s\n\n%s\n", role, status, model, m.CreatedAt.Format("2006-01-02 15:04:05"), m.Content)
		if len(m.ToolCalls) > 0 {
			markdownCalls(b, m.ToolCalls, names)
		}
	}
}

// markdownCalls writes an answer's stored tool calls as a list: each
// tool's name, then its arguments in a fenced block (fenced longer than any
// run of backticks in them); names gets each call's tool by id. Calls
// stored in a shape it does not know are written as their JSON.
func markdownCalls(b *strings.Builder, raw json.RawMessage, names map[string]string) {
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		fmt.Fprintf(b, "\n%s%s\n%s\n%s\n", mdtext.Fence(string(raw)), "json", raw, mdtext.Fence(string(raw)))
		return
	}
	b.WriteString("\n")
	for _, c := range calls {
		names[c.ID] = strings.ReplaceAll(c.Function.Name, "`", "'") // a model's name, in a code span
		args := strings.TrimSpace(c.Function.Arguments)
		if args == "" || args == "{}" {
			fmt.Fprintf(b, "- called `%s`\n", names[c.ID])
			continue
		}
		f := mdtext.Fence(args)
		fmt.Fprintf(b, "- called `%s` with:\n\n  %sjson\n  %s\n  %s\n", names[c.ID], f, strings.ReplaceAll(args, "\n", "\n  "), f)
	}
}

// ExportOf renders a session of st as format ("markdown", "md", "" or
// "json") and names the file it goes to in the session folder.
func ExportOf(ctx context.Context, st Store, id, format string) (name, content string, err error) {
	switch format {
	case "markdown", "md", "":
		name = "export.md"
	case "json":
		name = "export.json"
	default:
		return "", "", Invalidf("format %q is not supported; use \"markdown\" or \"json\"", Truncate(format, 40))
	}
	ss, err := st.Get(ctx, id)
	if err != nil {
		return "", "", err
	}
	sets, err := st.Context(ctx, id)
	if err != nil {
		return "", "", err
	}
	msgs, err := st.Messages(ctx, id)
	if err != nil {
		return "", "", err
	}
	if name == "export.md" {
		return name, Markdown(ss, sets, msgs), nil
	}
	b, err := json.MarshalIndent(map[string]any{"v": 1, "session": ss, "context": sets, "messages": msgs}, "", "  ")
	if err != nil {
		return "", "", err
	}
	return name, string(b) + "\n", nil
}
