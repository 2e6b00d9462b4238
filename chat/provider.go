// Package chat runs chat turns against any OpenAI-compatible API or
// Anthropic's Messages API (anthropic.go): it builds the model's input fresh
// from the session's state, streams the answer, checkpoints it into the
// store, and names new sessions.
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
)

// Provider is the model configuration (a wire type: see api.Provider).
type Provider = api.Provider

// Default values.
const (
	OpenAIBaseURL         = "https://api.openai.com/v1"
	AnthropicBaseURL      = "https://api.anthropic.com"
	OllamaBaseURL         = "http://127.0.0.1:11434/v1"
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultAnthropicModel = anthropic.ModelClaudeSonnet5_5 // the SDK's current Sonnet
	DefaultContextWindow  = 128000
	DefaultMaxOutput      = 4096
)

// The provider APIs (Provider.API).
const (
	APIOpenAI    = api.APIOpenAI
	APIAnthropic = api.APIAnthropic
)

// Resolved is a usable provider: defaults filled in (API is always set)
// and the key read. Its LogValue never shows the key.
type Resolved struct {
	Provider
	apiKey string
}

// APIKey is the key to send (empty for local servers).
func (r Resolved) APIKey() string { return r.apiKey }

// KeyEnv is the environment variable the key is read from.
func (r Resolved) KeyEnv() string { return keyEnv(r.Provider) }

// keyEnv is the variable p's key is read from: APIKeyEnv, else the API's
// usual one.
func keyEnv(p Provider) string {
	switch {
	case p.APIKeyEnv != "":
		return p.APIKeyEnv
	case p.API == APIAnthropic:
		return api.AnthropicKeyEnv
	}
	return api.OpenAIKeyEnv
}

// LogValue implements slog.LogValuer without the key.
func (r Resolved) LogValue() slog.Value {
	return slog.GroupValue(slog.String("api", r.API), slog.String("baseURL", r.BaseURL), slog.String("model", r.Model), slog.Bool("hasKey", r.apiKey != ""))
}

// inferAPI is the API of a base URL given without one: Anthropic's for its
// own host, else OpenAI-compatible.
func inferAPI(baseURL string) string {
	if u, err := url.Parse(baseURL); err == nil && strings.EqualFold(u.Hostname(), "api.anthropic.com") {
		return APIAnthropic
	}
	return APIOpenAI
}

// ErrNoProvider is Resolve's error when nothing names a provider: no base
// URL, no key, no local Ollama. Its message says what to set, once, in the
// environment variables' names every door shares; where the user sets them
// is the door's sentence (service.Config.ProviderWhere), added after it.
var ErrNoProvider = errors.New("no model provider is configured")

// ErrNoModel is Resolve's error for a server that needs a model and was
// given none. Resolve then returns the provider as far as it resolved, with
// no model: enough to list the server's models.
var ErrNoModel = errors.New("no model is configured")

// Resolve fills in a provider from the environment: OPENAI_BASE_URL,
// CTXLS_MODEL and the key variable. With no base URL it picks OpenAI when a
// key is set, else a local Ollama if one answers; with api "anthropic",
// Anthropic's API. An unset api is inferred from the base URL. probeOllama
// may be nil (no probe).
func Resolve(p Provider, getenv func(string) string, probeOllama func() bool) (Resolved, error) {
	switch p.API {
	case "", APIOpenAI, APIAnthropic:
	default:
		return Resolved{}, fmt.Errorf("provider.api must be %q or %q, not %q", APIOpenAI, APIAnthropic, p.API)
	}
	if p.BaseURL == "" && p.API != APIAnthropic {
		p.BaseURL = getenv("OPENAI_BASE_URL")
	}
	if p.API == "" {
		p.API = inferAPI(p.BaseURL)
	}
	if p.Model == "" {
		p.Model = getenv("CTXLS_MODEL")
	}
	if p.APIKeyEnv != "" {
		if err := CheckKeyEnv(p.APIKeyEnv); err != nil {
			return Resolved{}, err
		}
	}
	keyEnv := keyEnv(p)
	key := getenv(keyEnv)
	if p.BaseURL == "" {
		switch {
		case p.API == APIAnthropic:
			p.BaseURL = AnthropicBaseURL
		case key != "":
			p.BaseURL = OpenAIBaseURL
		case probeOllama != nil && probeOllama():
			p.BaseURL = OllamaBaseURL
		default:
			return Resolved{}, fmt.Errorf("%w. Set %s to use OpenAI, or OPENAI_BASE_URL to an OpenAI-compatible server (Ollama: %s) and CTXLS_MODEL to one of its models; for Anthropic, ANTHROPIC_API_KEY.", ErrNoProvider, keyEnv, OllamaBaseURL)
		}
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	// The hosted APIs need a key and have a default model; other servers
	// (local ones) need a model and may take no key.
	hosted, name, defaultModel := strings.HasPrefix(p.BaseURL, OpenAIBaseURL), "OpenAI", DefaultOpenAIModel
	if p.API == APIAnthropic {
		hosted, name, defaultModel = inferAPI(p.BaseURL) == APIAnthropic, "Anthropic", DefaultAnthropicModel
	}
	if hosted && key == "" {
		return Resolved{}, fmt.Errorf("the %s API needs a key: set the environment variable %s", name, keyEnv)
	}
	if p.Model == "" {
		if !hosted {
			// The provider as far as it resolved goes with the error: its
			// models can still be listed, for one to be picked.
			return Resolved{Provider: withSizes(p), apiKey: key}, fmt.Errorf("%w for the server at %s. Set CTXLS_MODEL to one of its models, or choose one for the session.", ErrNoModel, p.BaseURL)
		}
		p.Model = defaultModel
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
	if r.API == APIAnthropic {
		return listAnthropicModels(ctx, r)
	}
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
