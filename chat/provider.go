// Package chat runs chat turns against any OpenAI-compatible API: it builds
// the model's input fresh from the session's state, streams the answer,
// checkpoints it into the store, and names new sessions.
package chat

import (
	"context"
	"fmt"
	"github.com/ctxls/ctxls/api"
	"github.com/sashabaranov/go-openai"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Provider is the model configuration (a wire type: see api.Provider).
type Provider = api.Provider

// Default values.
const (
	OpenAIBaseURL        = "https://api.openai.com/v1"
	OllamaBaseURL        = "http://127.0.0.1:11434/v1"
	DefaultOpenAIModel   = "gpt-4o-mini"
	DefaultContextWindow = 128000
	DefaultMaxOutput     = 4096
)

// Resolved is a usable provider: defaults filled in and the key read. Its
// LogValue never shows the key.
type Resolved struct {
	Provider
	apiKey string
}

// APIKey is the key to send (empty for local servers).
func (r Resolved) APIKey() string { return r.apiKey }

// LogValue implements slog.LogValuer without the key.
func (r Resolved) LogValue() slog.Value {
	return slog.GroupValue(slog.String("baseURL", r.BaseURL), slog.String("model", r.Model), slog.Bool("hasKey", r.apiKey != ""))
}

// Resolve fills in a provider from the environment: OPENAI_BASE_URL,
// CTXLS_MODEL and the key variable. With no base URL it picks OpenAI when a
// key is set, else a local Ollama if one answers. probeOllama may be nil
// (no probe).
func Resolve(p Provider, getenv func(string) string, probeOllama func() bool) (Resolved, error) {
	if p.BaseURL == "" {
		p.BaseURL = getenv("OPENAI_BASE_URL")
	}
	if p.Model == "" {
		p.Model = getenv("CTXLS_MODEL")
	}
	keyEnv := p.APIKeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	key := getenv(keyEnv)
	if p.BaseURL == "" {
		switch {
		case key != "":
			p.BaseURL = OpenAIBaseURL
		case probeOllama != nil && probeOllama():
			p.BaseURL = OllamaBaseURL
		default:
			return Resolved{}, fmt.Errorf("no model provider is configured: set %s for OpenAI, or set provider.baseURL (initializationOptions or settings ctxls.provider) or OPENAI_BASE_URL to an OpenAI-compatible server such as Ollama (http://127.0.0.1:11434/v1), with a model in provider.model or CTXLS_MODEL", keyEnv)
		}
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	isOpenAI := strings.HasPrefix(p.BaseURL, OpenAIBaseURL)
	if isOpenAI && key == "" {
		return Resolved{}, fmt.Errorf("the OpenAI API needs a key: set the environment variable %s", keyEnv)
	}
	if p.Model == "" {
		if !isOpenAI {
			return Resolved{}, fmt.Errorf("no model is configured for %s: set provider.model or CTXLS_MODEL", p.BaseURL)
		}
		p.Model = DefaultOpenAIModel
	}
	return Resolved{Provider: withSizes(p), apiKey: key}, nil
}

// withSizes fills in the title model, the context window and the output
// reserve.
func withSizes(p Provider) Provider {
	if p.TitleModel == "" {
		p.TitleModel = p.Model
	}
	if p.ContextWindow <= 0 {
		p.ContextWindow = DefaultContextWindow
	}
	if p.MaxOutputTokens <= 0 {
		p.MaxOutputTokens = DefaultMaxOutput
	}
	return p
}

// ProbeOllama reports whether something listens on Ollama's port.
func ProbeOllama() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", "127.0.0.1:11434")
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ListModels asks the provider for its models (the doctor's check that it
// answers and has the model).
func ListModels(ctx context.Context, r Resolved) ([]string, error) {
	cfg := openai.DefaultConfig(r.APIKey())
	cfg.BaseURL = r.BaseURL
	models, err := openai.NewClientWithConfig(cfg).ListModels(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(models.Models))
	for _, m := range models.Models {
		names = append(names, m.ID)
	}
	return names, nil
}
