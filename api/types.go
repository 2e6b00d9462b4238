package api

import (
	"encoding/json"
	"strings"
	"time"
)

// The wire types below are the API's own: the store's structs never reach
// the wire, so a change of how the store keeps a session is not a change
// of the protocol. The service converts (service/wire.go).

// TitleSource says who named a session.
type TitleSource string

// Title sources.
const (
	TitleAuto  TitleSource = "auto"  // from the first message, or the default
	TitleModel TitleSource = "model" // suggested by the model
	TitleUser  TitleSource = "user"  // set by the user; never overridden
)

// Visibility says who sees a session in the PostgreSQL store.
type Visibility string

// Visibilities.
const (
	VisibilityPrivate Visibility = "private" // its owner only (the default)
	VisibilityTeam    Visibility = "team"    // every member of ctxls_user
)

// Role is who wrote a message.
type Role string

// Roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Status is how a message ended.
type Status string

// Statuses.
const (
	StatusComplete Status = "complete"
	// StatusInterrupted: the answer stopped without being stopped by the
	// user (its daemon died or was killed while it streamed).
	StatusInterrupted Status = "interrupted"
	// StatusCancelled: the user stopped the answer (a cancelled turn); its
	// text is what streamed until then. A tool call's result: the turn was
	// cancelled while the call waited for the user or ran.
	StatusCancelled Status = "cancelled"
	StatusError     Status = "error"
	StatusStreaming Status = "streaming"
	// StatusDeclined: a tool call's result message when the user did not
	// allow the call (a failed call's is StatusError).
	StatusDeclined Status = "declined"
)

// Meta is what ctxls notes about a session's situation.
type Meta struct {
	EnvHint string `json:"envHint,omitempty"`
	// Model is the session's model ("": the provider's default).
	Model string `json:"model,omitempty"`
	// Workspace is the folder the session was last used in.
	Workspace string `json:"workspace,omitempty"`
	// Tools are the user's standing decisions about the model's tools in
	// this session, by the name the model calls them: "allow" or "deny".
	Tools map[string]string `json:"tools,omitempty"`
	// ReviewMode is how the model's edits are reviewed ("": ask).
	ReviewMode ReviewMode `json:"reviewMode,omitempty"`
	// Plan is the session's plan, as the model last set it (update_plan).
	Plan []PlanEntry `json:"plan,omitempty"`
}

// PlanEntry is one entry of a session's plan (ACP's PlanEntry).
type PlanEntry struct {
	Content  string       `json:"content"`
	Priority PlanPriority `json:"priority"`
	Status   PlanStatus   `json:"status"`
}

// PlanStatus is where a plan entry stands.
type PlanStatus string

// Plan entry statuses.
const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "in_progress"
	PlanCompleted  PlanStatus = "completed"
)

// PlanPriority is how much a plan entry matters.
type PlanPriority string

// Plan entry priorities.
const (
	PlanHigh   PlanPriority = "high"
	PlanMedium PlanPriority = "medium"
	PlanLow    PlanPriority = "low"
)

// ReviewMode is how the model's edits to the user's files are reviewed.
type ReviewMode string

// Review modes.
const (
	ReviewAsk  ReviewMode = "ask"
	ReviewAuto ReviewMode = "auto"
	ReviewOff  ReviewMode = "off"
)

// Session is one chat session.
type Session struct {
	ID           string      `json:"id"`
	Title        string      `json:"title"`
	TitleSource  TitleSource `json:"titleSource"`
	CreatedAt    time.Time   `json:"createdAt"`
	UpdatedAt    time.Time   `json:"updatedAt"`
	Meta         Meta        `json:"meta"`
	Folder       string      `json:"folder"`       // absolute path of the session folder
	MessageCount int         `json:"messageCount"` // messages stored
	FileCount    int         `json:"fileCount"`    // files directly in sources/, hidden ones left out
	// Owner and Visibility are set in the PostgreSQL store only.
	Owner      string     `json:"owner,omitempty"`
	Visibility Visibility `json:"visibility,omitempty"`
}

// Usage is a turn's token usage.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// CachedTokens: how much of the prompt the provider read from its
	// cache, at a discount (absent when it did not say).
	CachedTokens int `json:"cachedTokens,omitempty"`
}

// Span is a range of message ids, both ends included; Covered is how many
// messages (summaries left out) it holds, Questions how many of them are
// the user's questions (what a client counts when it tells the user).
type Span struct {
	First     int64 `json:"first"`
	Last      int64 `json:"last"`
	Covered   int   `json:"covered"`
	Questions int   `json:"questions"`
}

// Message is one message of a session.
type Message struct {
	ID         int64           `json:"id"`
	SessionID  string          `json:"sessionId"`
	Role       Role            `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  json.RawMessage `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Status     Status          `json:"status"`
	CreatedAt  time.Time       `json:"createdAt"`
	Usage      *Usage          `json:"usage,omitempty"`
	Model      string          `json:"model,omitempty"` // the model that wrote an answer
	// SummaryOf is set on a summary of earlier turns (role "system").
	SummaryOf *Span `json:"summaryOf,omitempty"`
	// Files are the files that went with a question (role "user"): the
	// ones the editor sent and those the question mentioned (@PATH),
	// absolute, each with ":N" or ":N-M" when it named lines. Absent for
	// none, for other messages and for questions stored before ctxls kept
	// them.
	Files []string `json:"files,omitempty"`
}

// Context is a session's relevant-context sets by name.
type Context map[string][]string

// Subfolders are a session folder's subfolders, in the order they are
// listed: the user's files (sources), then the model's outputs.
var Subfolders = []string{"sources", "results", "scripts", "data"}

// The relevant-context sets ctxls knows (others may be named too).
const (
	SetFiles     = "files"     // the relevant files: absolute paths
	SetApplet    = "applet"    // the user's view: [slug, "key=value", ...]
	SetEndpoints = "endpoints" // URLs the work is about
	SetPorts     = "ports"     // ports the work is about
)

// Hit is one search result; MessageID is 0 for a title hit.
type Hit struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	MessageID int64  `json:"messageId"`
	Role      Role   `json:"role"`
	Snippet   string `json:"snippet"`
}

// Candidate is an open or recently edited file.
type Candidate struct {
	URI          string    `json:"uri"`
	Path         string    `json:"path"`
	LanguageID   string    `json:"languageId"`
	Open         bool      `json:"open"`
	Dirty        bool      `json:"dirty"`
	Active       bool      `json:"active"`
	LastEditedAt time.Time `json:"lastEditedAt"`
	Size         int       `json:"size"`
}

// The variables a provider's key is read from when apiKeyEnv is empty:
// OpenAIKeyEnv for an OpenAI-compatible API, AnthropicKeyEnv for api
// "anthropic". Beside the one apiKeyEnv names, they are the keys the
// daemon keeps from every child process (commands, MCP servers).
const (
	OpenAIKeyEnv    = "OPENAI_API_KEY"
	AnthropicKeyEnv = "ANTHROPIC_API_KEY"
	// MCPTokenEnv holds the bearer token of `ctxls mcp serve --http`.
	MCPTokenEnv = "CTXLS_MCP_TOKEN"
)

// Provider is the model configuration: initializationOptions.provider and
// settings ctxls.provider (LSP), _meta.ctxls.provider (ACP), the CLI's
// flags. Empty fields come from the environment (OPENAI_BASE_URL,
// CTXLS_MODEL, the key variable).
type Provider struct {
	// API is the wire protocol the provider speaks: APIOpenAI (an
	// OpenAI-compatible chat completions API, the default) or APIAnthropic
	// (Anthropic's Messages API); "" infers it from the base URL (host
	// api.anthropic.com: anthropic).
	API             string `json:"api,omitempty"`
	BaseURL         string `json:"baseURL,omitempty"`
	Model           string `json:"model,omitempty"`
	APIKeyEnv       string `json:"apiKeyEnv,omitempty"` // the environment variable holding the key; default OPENAI_API_KEY (ANTHROPIC_API_KEY for api "anthropic")
	TitleModel      string `json:"titleModel,omitempty"`
	ContextWindow   int    `json:"contextWindow,omitempty"`
	MaxOutputTokens int    `json:"maxOutputTokens,omitempty"`
}

// The provider APIs (Provider.API).
const (
	APIOpenAI    = "openai"
	APIAnthropic = "anthropic"
)

// Merge returns p with empty fields taken from q.
func (p Provider) Merge(q Provider) Provider {
	if p.API == "" {
		p.API = q.API
	}
	if p.BaseURL == "" {
		p.BaseURL = q.BaseURL
	}
	if p.Model == "" {
		p.Model = q.Model
	}
	if p.APIKeyEnv == "" {
		p.APIKeyEnv = q.APIKeyEnv
	}
	if p.TitleModel == "" {
		p.TitleModel = q.TitleModel
	}
	if p.ContextWindow == 0 {
		p.ContextWindow = q.ContextWindow
	}
	if p.MaxOutputTokens == 0 {
		p.MaxOutputTokens = q.MaxOutputTokens
	}
	return p
}

// ParseProvider decodes a provider object strictly enough to catch typos.
func ParseProvider(raw json.RawMessage) (Provider, error) {
	var p Provider
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, Errorf(KindInvalidArgument, "provider settings: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if p.API != "" && p.API != APIOpenAI && p.API != APIAnthropic {
		return p, Errorf(KindInvalidArgument, "provider settings: api must be %q or %q, not %q", APIOpenAI, APIAnthropic, p.API)
	}
	return p, nil
}
