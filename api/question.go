package api

// QuestionKind is what a ctxls/question asks.
type QuestionKind string

const (
	// QuestionPermission: may the model call a tool (toolCallId names the
	// call)?
	QuestionPermission QuestionKind = "permission"
	// QuestionTrust: may a workspace's .mcp.json start its servers?
	QuestionTrust QuestionKind = "trust"
	// QuestionReview: may the model's edit be applied (toolCallId names
	// the call)? Asked of a client that set questions but not reviewEdits.
	QuestionReview QuestionKind = "review"
)

// The actions of the questions (QuestionAction.ID).
const (
	ActionAllow     = "allow"     // permission: this call only
	ActionDeny      = "deny"      // permission: not this call
	ActionAlways    = "always"    // permission: this tool in this session, from now on (deliberate)
	ActionTrust     = "trust"     // trust: use the file's servers (deliberate)
	ActionDistrust  = "distrust"  // trust: do not
	ActionAccept    = "accept"    // review: apply this edit
	ActionAcceptAll = "acceptAll" // review: this and the rest of the turn's edits (deliberate)
	ActionReject    = "reject"    // review: do not apply it
)

// The outcomes of a question closed unanswered (QuestionClosedParams).
const (
	OutcomeTimeout   = "timeout"
	OutcomeCancelled = "cancelled"
)

// QuestionAction is one answer a question offers.
type QuestionAction struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Deliberate: the client must not give this answer on one keystroke or
	// click that could be meant for something else (ask again, or take a
	// command of its own).
	Deliberate bool `json:"deliberate"`
}

// QuestionParams are ctxls/question's params.
type QuestionParams struct {
	ID         string           `json:"id"`
	SessionID  string           `json:"sessionId,omitempty"`
	Kind       QuestionKind     `json:"kind"`
	Message    string           `json:"message"`
	ToolCallID string           `json:"toolCallId,omitempty"`
	Actions    []QuestionAction `json:"actions"`
}

// QuestionClosedParams are ctxls/questionClosed's params.
type QuestionClosedParams struct {
	ID string `json:"id"`
	// Outcome is the chosen action's id, "timeout" or "cancelled".
	Outcome string `json:"outcome"`
}

// QuestionAnswerArgs is the argument of ctxls.question.answer.
type QuestionAnswerArgs struct {
	ID     string `json:"id" max:"64"`
	Action string `json:"action" max:"64"`
}

// QuestionAnswerResult is the result of ctxls.question.answer.
type QuestionAnswerResult struct {
	V      int    `json:"v"`
	ID     string `json:"id"`
	Action string `json:"action"`
}
