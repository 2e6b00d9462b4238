package chat

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// Preview is the exact model input a turn would send, built the way Run
// builds it, with nothing stored.
type Preview struct {
	Model    string
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	// Tokens of the system prompt (files included), of the relevant files'
	// contents within it, of the history sent (earlier messages kept plus
	// this turn's message), of the tools' schemas, and in all (system +
	// history + tools).
	System, Files, History, ToolTokens, Total int
	// Budget is the context window less the output reserve; Dropped is
	// how many earlier messages do not fit.
	Budget, Dropped int
	// Instructions are the project's instructions files in the system
	// prompt.
	Instructions []prompts.Instruction
	// QuestionFiles are the turn's own files, as its stored question
	// would record them (absolute, with the lines named: main.go:5-8).
	QuestionFiles []string
}

// Preview builds the model input of the turn t without running it: no
// message is stored, no provider is called, and the contents of relevant
// files are not noted as sent. t.SessionID "" previews a session's first
// turn (no session needed). t.Provider needs only Model, ContextWindow and
// MaxOutputTokens (see PreviewProvider).
func (e *Engine) Preview(ctx context.Context, t TurnSpec) (*Preview, error) {
	if strings.TrimSpace(t.Message) == "" {
		return nil, fmt.Errorf("%w: message is empty", session.ErrInvalid)
	}
	t.Provider.Model = e.sessionModel(ctx, t)
	var st *session.TurnState
	if t.SessionID != "" {
		var err error
		if st, err = e.Store.TurnState(ctx, t.SessionID, nil, nil); err != nil {
			return nil, err
		}
		t.Session = st.Session
	}
	tt := e.toolTurn(t, st, nil)
	tools := turnTools(ctx, t, tt)
	in, err := e.assemble(ctx, t, &tt.Guard, tools, st, false, nil)
	if err != nil {
		return nil, err
	}
	return &Preview{
		Model: t.Provider.Model, Messages: in.Messages, Tools: tools,
		System: in.System, Files: in.Files, History: in.History + in.Message, ToolTokens: in.Tools,
		Total:  in.System + in.History + in.Message + in.Tools,
		Budget: in.Budget, Dropped: in.Dropped, Instructions: in.Instructions,
		QuestionFiles: questionFiles(t),
	}, nil
}

// PreviewProvider is the provider a preview counts with: the configured
// one when it resolves, else its fields with the defaults filled in. It
// never fails and never needs a key or a running provider.
func PreviewProvider(p Provider, getenv func(string) string) Resolved {
	if r, err := Resolve(p, getenv, nil); err == nil {
		return r
	}
	if p.Model == "" {
		p.Model = getenv("CTXLS_MODEL")
	}
	if p.Model == "" {
		p.Model = DefaultOpenAIModel
	}
	return Resolved{Provider: withSizes(p)}
}

// PreviewContent is a message of the model input as the preview shows it:
// its text, and for each image part a line saying what goes (the data
// itself is not shown).
func PreviewContent(m openai.ChatCompletionMessage) (string, int) {
	if len(m.MultiContent) == 0 {
		return m.Content, 0
	}
	var b strings.Builder
	images := 0
	for _, p := range m.MultiContent {
		switch p.Type {
		case openai.ChatMessagePartTypeText:
			b.WriteString(p.Text)
		case openai.ChatMessagePartTypeImageURL:
			images++
			head, data, _ := strings.Cut(p.ImageURL.URL, ",")
			fmt.Fprintf(&b, "\n(image part %d: %s, %s)", images, strings.TrimPrefix(strings.TrimSuffix(head, ";base64"), "data:"), session.Bytes(int64(base64.StdEncoding.DecodedLen(len(data)))))
		}
	}
	return b.String(), images
}
