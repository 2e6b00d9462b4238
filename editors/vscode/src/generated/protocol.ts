// Generated from package api by `go test ./api -update`. DO NOT EDIT.
// The ctxls protocol for editor clients: command, request and notification
// names with their argument and result types. See docs/protocol.md.

/** The version every command result carries as `v`. */
export const V = 1;

export interface SessionNewArgs {
  title?: string;
}

export type TitleSource = "auto" | "model" | "user";

export type ReviewMode = "ask" | "auto" | "off";

export type PlanPriority = "high" | "medium" | "low";

export type PlanStatus = "pending" | "in_progress" | "completed";

export interface PlanEntry {
  content: string;
  priority: PlanPriority;
  status: PlanStatus;
}

export interface Meta {
  envHint?: string;
  model?: string;
  workspace?: string;
  tools?: Record<string, string>;
  reviewMode?: ReviewMode;
  plan?: PlanEntry[];
}

export type Visibility = "private" | "team";

export interface Session {
  id: string;
  title: string;
  titleSource: TitleSource;
  createdAt: string;
  updatedAt: string;
  meta: Meta;
  folder: string;
  messageCount: number;
  fileCount: number;
  owner?: string;
  visibility?: Visibility;
}

export interface SessionResult {
  v: number;
  session: Session;
}

export interface SessionRefArgs {
  sessionId: string;
}

export interface ResumeResult {
  v: number;
  session: Session;
  context: Record<string, string[]>;
  missingFiles: string[];
  reminder: string;
}

export interface SessionListArgs {
  query?: string;
  limit?: number;
  cursor?: string;
}

export interface SessionSummary {
  id: string;
  title: string;
  titleSource: TitleSource;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  fileCount: number;
  questions: number;
  firstQuestion?: string;
  owner?: string;
  visibility?: Visibility;
  workspace?: string;
  folder?: string;
}

export interface SessionListResult {
  v: number;
  sessions: SessionSummary[];
  nextCursor?: string;
}

export interface SessionIDArgs {
  sessionId?: string;
}

export type Role = "system" | "user" | "assistant" | "tool";

export type Status = "complete" | "interrupted" | "cancelled" | "error" | "streaming" | "declined";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

export interface Span {
  first: number;
  last: number;
  covered: number;
  questions: number;
}

export interface Message {
  id: number;
  sessionId: string;
  role: Role;
  content: string;
  toolCalls?: unknown;
  toolCallId?: string;
  status: Status;
  createdAt: string;
  usage?: Usage;
  model?: string;
  summaryOf?: Span;
  files?: string[];
}

export interface ShowResult {
  v: number;
  session: Session;
  messages: Message[];
}

export interface SessionRenameArgs {
  sessionId?: string;
  title: string;
}

export interface DeleteResult {
  v: number;
  sessionId: string;
  deleted: boolean;
}

export interface SessionSearchArgs {
  query: string;
  limit?: number;
}

export interface Hit {
  sessionId: string;
  title: string;
  messageId: number;
  role: Role;
  snippet: string;
}

export interface SearchResult {
  v: number;
  hits: Hit[];
}

export interface SessionExportArgs {
  sessionId?: string;
  format?: string;
}

export interface ExportResult {
  v: number;
  path: string;
  content: string;
}

export interface SessionShareArgs {
  sessionId?: string;
  visibility: Visibility;
}

export interface ContextSetArgs {
  sessionId?: string;
  setName: string;
  items: string[];
  mode?: string;
}

export interface ContextSetResult {
  v: number;
  setName: string;
  items: string[];
  warnings: string[];
}

export interface ContextGetArgs {
  sessionId?: string;
  setName?: string;
}

export interface InstructionFile {
  path: string;
  bytes: number;
  size: number;
  unsaved?: boolean;
  cut?: string;
}

export interface ContextGetResult {
  v: number;
  context: Record<string, string[]>;
  instructions?: InstructionFile[];
}

export interface EmptyArgs {
}

export interface Candidate {
  uri: string;
  path: string;
  languageId: string;
  open: boolean;
  dirty: boolean;
  active: boolean;
  lastEditedAt: string;
  size: number;
}

export interface CandidatesResult {
  v: number;
  files: Candidate[];
}

export interface WorkspaceFilesArgs {
  query?: string;
  limit?: number;
}

export interface WorkspaceFile {
  path: string;
}

export interface WorkspaceFilesResult {
  v: number;
  files: WorkspaceFile[];
  truncated: boolean;
}

export interface FilesAddArgs {
  sessionId?: string;
  path?: string;
  name?: string;
  contentBase64?: string;
}

export interface FilesAddResult {
  v: number;
  name: string;
  size: number;
}

export interface FilesListArgs {
  sessionId?: string;
  subdir?: string;
}

export interface FilesListResult {
  v: number;
  files: string[];
}

export interface FilesRemoveArgs {
  sessionId?: string;
  name: string;
}

export interface FilesRemoveResult {
  v: number;
  name: string;
  removed: boolean;
}

export interface DocumentGetArgs {
  uri: string;
}

export interface DocumentGetResult {
  v: number;
  uri: string;
  version: number;
  text: string;
}

export interface ChatArgs {
  sessionId?: string;
  message?: string;
  files?: string[];
  workDoneToken?: unknown;
  rewind?: number;
  images?: string[];
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

export interface ChatResult {
  v: number;
  sessionId: string;
  messageId: number;
  text: string;
  finishReason: string;
  usage: ChatUsage;
  edited?: string[];
  instructions?: InstructionFile[];
}

export interface PreviewToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface PreviewMessage {
  role: string;
  content: string;
  toolCalls?: PreviewToolCall[];
  toolCallId?: string;
  tokens: number;
}

export interface PreviewTool {
  name: string;
  description: string;
  parameters: unknown;
  tokens: number;
}

export interface PreviewTokens {
  system: number;
  history: number;
  files: number;
  tools: number;
  total: number;
}

export interface ChatPreviewResult {
  v: number;
  sessionId?: string;
  model: string;
  reviewMode: ReviewMode;
  messages: PreviewMessage[];
  tools: PreviewTool[];
  tokens: PreviewTokens;
  budget: number;
  dropped: number;
  instructions?: InstructionFile[];
  files?: string[];
}

export interface SetModelArgs {
  sessionId?: string;
  model: string;
  default?: boolean;
}

export interface ModelsListResult {
  v: number;
  models: string[];
  current: string;
  default: string;
}

export interface SetReviewModeArgs {
  sessionId?: string;
  mode: ReviewMode;
}

export interface SessionCompactResult {
  v: number;
  sessionId: string;
  summary: Message;
  compactedThrough: number;
  covered: number;
  tokens: number;
}

export interface ModelUsage {
  model: string;
  answers: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export interface SessionUsageResult {
  v: number;
  sessionId: string;
  answers: number;
  unreported: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  models: ModelUsage[];
}

export interface UndoArgs {
  sessionId?: string;
  from?: number;
}

export interface LeftFile {
  path: string;
  reason: string;
}

export interface UndoResult {
  v: number;
  sessionId: string;
  turn: number;
  restored: string[];
  left: LeftFile[];
}

export interface FilesReadArgs {
  sessionId?: string;
  subdir?: string;
  name: string;
}

export interface FilesReadResult {
  v: number;
  subdir: string;
  name: string;
  size: number;
  content: string;
  truncated?: boolean;
  binary?: boolean;
}

export interface MCPTrustArgs {
  path: string;
  trust: boolean;
}

export interface MCPTrustResult {
  v: number;
  path: string;
  state: string;
  servers: string[];
  error?: string;
}

export interface MCPListArgs {
  tools?: boolean;
}

export interface MCPTool {
  name: string;
  description: string;
  readOnly: boolean;
}

export interface MCPServer {
  name: string;
  source: string;
  type: string;
  command?: string;
  args?: string[];
  url?: string;
  envKeys: string[];
  headerKeys: string[];
  timeoutSeconds: number;
  running: boolean;
  tools?: MCPTool[];
  error?: string;
  toolsLeftOut?: number;
  leftOutReasons?: string[];
}

export interface MCPWorkspaceFile {
  path: string;
  state: string;
  servers: string[];
  error?: string;
}

export interface MCPListResult {
  v: number;
  servers: MCPServer[];
  workspaceFiles: MCPWorkspaceFile[];
  errors: string[];
  notes: string[];
}

export interface QuestionAnswerArgs {
  id: string;
  action: string;
}

export interface QuestionAnswerResult {
  v: number;
  id: string;
  action: string;
}

export interface Applet {
  slug: string;
  params: Record<string, string>;
}

export interface ContextChangedParams {
  sessionId: string;
  reason: string;
  context: Record<string, string[]>;
  added: string[];
  removed: string[];
  missing: string[];
  applet?: Applet;
}

export interface SessionUpdatedParams {
  sessionId: string;
  title: string;
  titleSource: TitleSource;
  compactedThrough?: number;
}

export interface SessionFilesChangedParams {
  sessionId: string;
  subdir: string;
  name: string;
  size: number;
  by: string;
  removed?: boolean;
}

export type ToolStatus = "pending" | "running" | "done" | "failed" | "declined" | "cancelled";

export interface ToolCallParams {
  sessionId: string;
  id: string;
  name: string;
  server?: string;
  tool: string;
  arguments: string;
  status: ToolStatus;
  progress?: string;
  output?: string;
  summary?: string;
}

export type QuestionKind = "permission" | "trust" | "review";

export interface QuestionAction {
  id: string;
  title: string;
  deliberate: boolean;
}

export interface QuestionParams {
  id: string;
  sessionId?: string;
  kind: QuestionKind;
  message: string;
  toolCallId?: string;
  actions: QuestionAction[];
}

export interface QuestionClosedParams {
  id: string;
  outcome: string;
}

export interface PlanParams {
  sessionId: string;
  entries: PlanEntry[];
}

export interface ReviewEditParams {
  sessionId: string;
  id: string;
  path: string;
  uri: string;
  create?: boolean;
  oldText: string;
  newText: string;
  diff: string;
  summary: string;
}

export type ReviewDecision = "accept" | "acceptAll" | "reject";

export interface ReviewEditResult {
  decision: ReviewDecision;
  text?: string;
}

export interface DiagnosticsParams {
  uris?: string[];
  waitMs?: number;
}

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Diagnostic {
  range: Range;
  severity?: number;
  code?: number | string;
  source?: string;
  message: string;
}

export interface FileDiagnostics {
  uri: string;
  diagnostics: Diagnostic[];
}

export interface TextDocumentIdentifier {
  uri: string;
}

export interface DidChangeViewParams {
  textDocument: TextDocumentIdentifier;
  selection?: Range;
  visibleRange?: Range;
}

export interface Provider {
  api?: string;
  baseURL?: string;
  model?: string;
  apiKeyEnv?: string;
  titleModel?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
}

export interface InitializationOptions {
  dataDir?: string;
  session?: string;
  provider?: Provider;
  storageSoftLimitMB?: number;
  envHint?: string;
  viewIdleMs?: number;
  compactAt?: number | string;
  mcpServers?: Record<string, unknown>;
  workspaceMcpServers?: Record<string, unknown>;
  allowReadOnlyTools?: boolean;
  toolPermissionTimeoutSeconds?: number;
  reviewEdits?: boolean;
  diagnostics?: boolean;
  questions?: boolean;
  projectInstructions?: boolean;
}

export interface Settings {
  provider?: Provider;
  storageSoftLimitMB?: number | null;
  viewIdleMs?: number;
  compactAt?: number | string | null;
  mcpServers?: Record<string, unknown> | null;
  workspaceMcpServers?: Record<string, unknown> | null;
  allowReadOnlyTools?: boolean;
  toolPermissionTimeoutSeconds?: number;
  projectInstructions?: boolean;
}

/** Command IDs (workspace/executeCommand), as declared in package api. */
export const Commands = {
  sessionNew: "ctxls.session.new",
  sessionResume: "ctxls.session.resume",
  sessionList: "ctxls.session.list",
  sessionShow: "ctxls.session.show",
  sessionRename: "ctxls.session.rename",
  sessionDelete: "ctxls.session.delete",
  sessionSearch: "ctxls.session.search",
  sessionExport: "ctxls.session.export",
  sessionShare: "ctxls.session.share",
  contextSet: "ctxls.context.set",
  contextGet: "ctxls.context.get",
  contextCandidates: "ctxls.context.candidates",
  workspaceFiles: "ctxls.workspace.files",
  filesAdd: "ctxls.files.add",
  filesList: "ctxls.files.list",
  filesRemove: "ctxls.files.remove",
  documentGet: "ctxls.document.get",
  chat: "ctxls.chat",
  chatPreview: "ctxls.chat.preview",
  sessionRegenerateTitle: "ctxls.session.regenerateTitle",
  sessionClearTitle: "ctxls.session.clearTitle",
  sessionSetModel: "ctxls.session.setModel",
  modelsList: "ctxls.models.list",
  sessionSetReviewMode: "ctxls.session.setReviewMode",
  sessionCompact: "ctxls.session.compact",
  sessionUsage: "ctxls.session.usage",
  sessionUndo: "ctxls.session.undo",
  sessionRedo: "ctxls.session.redo",
  filesRead: "ctxls.files.read",
  mcpTrust: "ctxls.mcp.trust",
  mcpList: "ctxls.mcp.list",
  questionAnswer: "ctxls.question.answer",
} as const;

/** The argument and result type of every command. */
export interface CommandTypes {
  "ctxls.session.new": { args: SessionNewArgs; result: SessionResult };
  "ctxls.session.resume": { args: SessionRefArgs; result: ResumeResult };
  "ctxls.session.list": { args: SessionListArgs; result: SessionListResult };
  "ctxls.session.show": { args: SessionIDArgs; result: ShowResult };
  "ctxls.session.rename": { args: SessionRenameArgs; result: SessionResult };
  "ctxls.session.delete": { args: SessionRefArgs; result: DeleteResult };
  "ctxls.session.search": { args: SessionSearchArgs; result: SearchResult };
  "ctxls.session.export": { args: SessionExportArgs; result: ExportResult };
  "ctxls.session.share": { args: SessionShareArgs; result: SessionResult };
  "ctxls.context.set": { args: ContextSetArgs; result: ContextSetResult };
  "ctxls.context.get": { args: ContextGetArgs; result: ContextGetResult };
  "ctxls.context.candidates": { args: EmptyArgs; result: CandidatesResult };
  "ctxls.workspace.files": { args: WorkspaceFilesArgs; result: WorkspaceFilesResult };
  "ctxls.files.add": { args: FilesAddArgs; result: FilesAddResult };
  "ctxls.files.list": { args: FilesListArgs; result: FilesListResult };
  "ctxls.files.remove": { args: FilesRemoveArgs; result: FilesRemoveResult };
  "ctxls.document.get": { args: DocumentGetArgs; result: DocumentGetResult };
  "ctxls.chat": { args: ChatArgs; result: ChatResult };
  "ctxls.chat.preview": { args: ChatArgs; result: ChatPreviewResult };
  "ctxls.session.regenerateTitle": { args: SessionIDArgs; result: SessionResult };
  "ctxls.session.clearTitle": { args: SessionIDArgs; result: SessionResult };
  "ctxls.session.setModel": { args: SetModelArgs; result: SessionResult };
  "ctxls.models.list": { args: SessionIDArgs; result: ModelsListResult };
  "ctxls.session.setReviewMode": { args: SetReviewModeArgs; result: SessionResult };
  "ctxls.session.compact": { args: SessionIDArgs; result: SessionCompactResult };
  "ctxls.session.usage": { args: SessionIDArgs; result: SessionUsageResult };
  "ctxls.session.undo": { args: UndoArgs; result: UndoResult };
  "ctxls.session.redo": { args: SessionIDArgs; result: UndoResult };
  "ctxls.files.read": { args: FilesReadArgs; result: FilesReadResult };
  "ctxls.mcp.trust": { args: MCPTrustArgs; result: MCPTrustResult };
  "ctxls.mcp.list": { args: MCPListArgs; result: MCPListResult };
  "ctxls.question.answer": { args: QuestionAnswerArgs; result: QuestionAnswerResult };
}

/** Requests other than executeCommand. */
export const Requests = {
  chat: "ctxls/chat",
} as const;

export interface RequestTypes {
  "ctxls/chat": { params: ChatArgs; result: ChatResult };
}

/** Notifications the server sends. */
export const Notifications = {
  contextChanged: "ctxls/contextChanged",
  sessionUpdated: "ctxls/sessionUpdated",
  sessionFilesChanged: "ctxls/sessionFilesChanged",
  toolCall: "ctxls/toolCall",
  question: "ctxls/question",
  questionClosed: "ctxls/questionClosed",
  plan: "ctxls/plan",
} as const;

export interface NotificationTypes {
  "ctxls/contextChanged": ContextChangedParams;
  "ctxls/sessionUpdated": SessionUpdatedParams;
  "ctxls/sessionFilesChanged": SessionFilesChangedParams;
  "ctxls/toolCall": ToolCallParams;
  "ctxls/question": QuestionParams;
  "ctxls/questionClosed": QuestionClosedParams;
  "ctxls/plan": PlanParams;
}

/** Requests the server makes of a client that declared it answers them. */
export const ServerRequests = {
  reviewEdit: "ctxls/reviewEdit",
  diagnostics: "ctxls/diagnostics",
} as const;

export interface ServerRequestTypes {
  "ctxls/reviewEdit": { params: ReviewEditParams; result: ReviewEditResult };
  "ctxls/diagnostics": { params: DiagnosticsParams; result: FileDiagnostics[] };
}

/** Notifications the editor sends. */
export const ClientNotifications = {
  didChangeView: "ctxls/didChangeView",
} as const;

export interface ClientNotificationTypes {
  "ctxls/didChangeView": DidChangeViewParams;
}

/** A session folder's subfolders, in the order they are listed. */
export const Subfolders = ["sources", "results", "scripts", "data"] as const;

/** The kind every error carries in its data (`{kind}`): decide on it, never on the message. */
export const ErrorKinds = {
  invalidArgument: "invalidArgument",
  notFound: "notFound",
  busy: "busy",
  noProvider: "noProvider",
  providerFailed: "providerFailed",
  tooLarge: "tooLarge",
  storeUnavailable: "storeUnavailable",
  cancelled: "cancelled",
  permissionDenied: "permissionDenied",
  internal: "internal",
} as const;

export type ErrorKind = (typeof ErrorKinds)[keyof typeof ErrorKinds];

/** An error's data. */
export interface ErrorData {
  kind: ErrorKind;
}
