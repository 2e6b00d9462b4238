;;; ctxls.el --- Chat with ctxls beside your language server  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience
;; URL: https://github.com/ctxls/ctxls
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; ctxls is a language server for AI chat sessions: it keeps the exact text
;; of your buffers, unsaved edits included, and answers questions about
;; them with the model you configure.  This package runs `ctxls serve' as a
;; second, independent connection with Emacs's built-in jsonrpc, BESIDE
;; whatever language server the buffer has: eglot and lsp-mode are left
;; untouched (eglot runs one server per buffer, so registering ctxls with
;; eglot would replace gopls or pyright).
;;
;; Setup:
;;
;;   (add-to-list 'load-path "/path/to/ctxls/editors/emacs")
;;   (require 'ctxls)
;;   (setq ctxls-provider '(:baseURL "http://127.0.0.1:11434/v1"
;;                          :model "qwen2.5-coder"))
;;   (ctxls-mode 1)
;;   (global-set-key (kbd "C-c x") ctxls-command-map)
;;
;; C-c x is only a suggestion: any key will do.  C-c and a letter is
;; yours by Emacs's conventions, but not C-c a, which Org's manual
;; suggests for `org-agenda'; and C-; cannot be typed in a terminal.
;; If ctxls is not installed (neither on `exec-path' nor in Go's install
;; folder, $GOBIN, $GOPATH/bin or ~/go/bin), `ctxls-mode' warns and
;; stays off: the rest of your init file runs.
;; The provider's key: `ctxls-api-key', nil by default, takes it from
;; the environment (OPENAI_API_KEY) or else from auth-source, as gptel
;; does: a line "machine api.openai.com login apikey password sk-..." in
;; ~/.authinfo.gpg (the host is that of the provider's base URL).  The
;; key goes to the daemon alone, in its environment (ctxls-setup.el).
;; A question asked with no usable provider says what to set, and
;; M-x ctxls-setup asks for the server, the key and the model (from the
;; server's list) and saves them; a `ctxls-provider' set (setq,
;; customize) while the daemon runs goes to it with the next request, no
;; restart needed (a key found then starts the daemon again with it).
;;
;; `ctxls-mode' syncs every file-visiting buffer; `ctxls-ask' (C-c x a)
;; asks a question and streams the answer into the *ctxls chat* buffer
;; while you keep editing.  Nothing blocks: every request is asynchronous.
;; The file in front of you goes with the question, its text as you see
;; it (unsaved edits included), or the lines of the active region: the
;; prompt says what goes ("Ask ctxls (with main.go:5-8): ") and the chat
;; shows it under the question.  C-u C-c x a leaves it out once;
;; `ctxls-send-active-file' nil leaves it out unless a region is active.
;; The other open files stay candidates the model may read.
;; The project's instructions for coding agents go too: the AGENTS.md at
;; the workspace root and in the folders of the files a turn involves
;; (at a root without one, CLAUDE.md or .github/copilot-instructions.md),
;; their text as you see it.  The *ctxls context* buffer (C-c x c) names
;; them, "instructions: AGENTS.md, pkg/AGENTS.md", each a button that
;; visits it, marked (unsaved) or (cut) when so; the prompt preview
;; (C-c x p) too.  `ctxls-project-instructions' nil leaves them out.
;; `ctxls-compose' (C-c x w) writes a longer question in a buffer of its
;; own: RET is a new line, C-c C-c sends it, C-c C-k aborts.
;; Where a question is typed (the prompt, that buffer) M-p and M-n bring
;; back the questions asked before, and "@" then C-M-i (or TAB) completes
;; a workspace file's path: "@auth/login.go" gives the model that file
;; too (see ctxls-input.el).
;; `ctxls-attach-image' (C-c x I) attaches an image file (PNG, JPEG, GIF
;; or WebP, 5 MiB at most) to the next question; the prompt and the
;; question buffer say so ("with image: shot.png"), C-u C-c x I takes it
;; back.  In the chat a question's image is a button that opens it.
;; `ctxls-regenerate' (C-c x G) asks the last question again, to retry a
;; failed answer or get another; `ctxls-edit-question' (C-c x E) opens it
;; in that buffer to change and send again.  Either way the question and
;; its answer are replaced, in the chat and in the session; when the
;; turns taken back changed files, whether to undo those changes too is
;; asked first.
;;
;; `ctxls-cancel' (C-c x k) stops an answer: it stays, marked _cancelled_;
;; one the daemon could not finish (it died) reads _interrupted_.  Each
;; answer ends with what it cost in tokens (the cached input too, when the
;; provider says), and the chat's header line shows the session's total
;; and the key hints that fit beside it; ? in the chat lists all its keys.
;; Turns another editor or machine adds to the session the chat shows
;; appear at its end as they are made, with the PostgreSQL store and with
;; the local (SQLite) one alike (there within a second: the daemon looks
;; at the sessions' activity every half second); g in the chat reads the
;; session again.
;;
;; `ctxls-resume' (C-c x r) offers the sessions most recent first;
;; `ctxls-rename-session' (C-c x R), `ctxls-set-model' (C-c x m, the
;; model shows in the chat's header line; C-u C-c x m makes it new
;; sessions' model too) and `ctxls-export' (C-c x x) act on the current
;; one.
;;
;; The model may call tools: ctxls's own, and those of the MCP servers in
;; `ctxls-mcp-servers' (and ~/.config/ctxls/mcp.json).  Each call is a line
;; in the chat buffer that shows its status as it goes; RET or TAB on it
;; shows what the model got back.  Before an MCP tool runs you are asked
;; (`ctxls-tool-permission-timeout'), in the chat: the question is two
;; lines under the call's, what is asked and its keys, with a notice in
;; the echo area.  Nothing takes focus or reads a key, so what you type
;; in your file never answers it.  In the chat y allows the call once, n
;; denies it, A (always in this session) asks you to confirm; M-x
;; ctxls-answer (C-c x q) answers from any buffer.  Once it is answered
;; (here or elsewhere), unanswered in time or cancelled, its lines become
;; one that says so.  Trusting a workspace's .mcp.json is asked the same
;; way (T trusts, after a confirmation; n does not).
;;
;; The model's shell commands (run_command) are asked about the same way,
;; naming the command line.  The call's line shows the command line; its
;; output is a fenced block under it, shown as it comes (replaced in
;; place while the command runs) and at the end with the exit status,
;; the line saying "failed: exit status 2" when it is not 0.  Only the
;; last `ctxls-command-output-lines' lines show, under a note that counts
;; those above: RET or TAB on the line shows them.
;;
;; The model may also edit your files (edit_file, create_file), in the text
;; you see: a buffer's, unsaved edits included.  Each edit is shown as a
;; diff first, in *ctxls review* beside your file, which keeps the cursor:
;; there C-c C-c accepts it, C-c C-a accepts it and the rest of the
;; turn's, C-c C-k (or killing the diff) rejects it.  An accepted edit goes
;; into the buffer, never to disk: it stays unsaved, and undo takes it back.
;; `ctxls-set-review-mode' makes edits apply unasked (auto) or turns them
;; off; `ctxls-apply-block' puts a code block of the chat into a file.
;; `ctxls-undo' (C-c x u) takes the last turn's changes back (a file the
;; model created is removed, its buffer killed; a file you typed in since
;; is left, and named); `ctxls-redo' (C-c x U) makes them again.
;;
;; The model can read the errors and warnings Flymake shows (eglot's, the
;; byte compiler's, any backend's) in the buffers visiting files: its
;; diagnostics tool asks ctxls.el for them.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'url-util)
(require 'subr-x)
(require 'parse-time)
(require 'text-property-search)
(require 'ctxls-protocol)
(require 'ctxls-input)
(require 'ctxls-setup)

(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function flymake-diagnostic-end "flymake" (diag))
(declare-function diff-beginning-of-hunk "diff-mode" (&optional try-harder))
(declare-function diff-end-of-hunk "diff-mode" (&optional style donttrustheader))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-text "flymake" (diag))
(declare-function flymake-diagnostic-backend "flymake" (diag))
(declare-function flymake-diagnostic-data "flymake" (diag))
(declare-function flymake-running-backends "flymake" ())
(declare-function flymake-reporting-backends "flymake" ())

(defconst ctxls-version "0.1.0"
  "The version of ctxls.el, sent as clientInfo.version.")

;;;; Options

(defgroup ctxls nil
  "Chat with the ctxls daemon about your buffers."
  :group 'tools
  :prefix "ctxls-"
  :link '(url-link "https://github.com/ctxls/ctxls"))

(defcustom ctxls-command '("ctxls" "serve")
  "The command that starts the daemon: the program, then its arguments.
The program is looked up on the variable `exec-path' unless it is an
absolute file name."
  :type '(repeat string))

(defcustom ctxls-provider nil
  "The model provider, sent as initializationOptions.provider.
A plist with any of :api, :baseURL, :model, :apiKeyEnv, :titleModel,
:contextWindow and :maxOutputTokens, for example
  (:baseURL \"http://127.0.0.1:11434/v1\" :model \"qwen2.5-coder\").
:api is \"openai\" (an OpenAI-compatible API, the default) or
\"anthropic\" (Anthropic's Messages API; unset, inferred from :baseURL).
The API key itself is never sent: :apiKeyEnv names the environment
variable the daemon reads it from (default OPENAI_API_KEY,
ANTHROPIC_API_KEY for \"anthropic\"), which `ctxls-api-key' (or
auth-source) fills in for the daemon alone.  nil leaves the choice to
the daemon (OPENAI_BASE_URL, OPENAI_API_KEY, a local Ollama).
\\[ctxls-setup] asks for the server and the model and saves them."
  :type '(plist :key-type (choice (const :api) (const :baseURL) (const :model) (const :apiKeyEnv)
                                  (const :titleModel) (const :contextWindow)
                                  (const :maxOutputTokens))
                :value-type (choice string integer)))

(defcustom ctxls-data-dir nil
  "The daemon's data directory (initializationOptions.dataDir).
nil uses the daemon's default (CTXLS_DATA_DIR, else
~/.local/share/ctxls)."
  :type '(choice (const :tag "Default" nil) directory))

(defcustom ctxls-view-idle-ms nil
  "How long, in milliseconds, the view must rest before ctxls records it.
Sent as initializationOptions.viewIdleMs (1 to 3600000); nil keeps the
daemon's default of 2000."
  :type '(choice (const :tag "Default" nil) natnum))

(defcustom ctxls-compact-at nil
  "When a turn summarises the session's earlier turns for the model.
The input's share of the context window in percent (1 to 100, or a
string such as \"80%\"), or \"off\" to leave the oldest turns out
instead.  Sent as initializationOptions.compactAt; nil keeps the
daemon's default of 80.  \\[ctxls-compact] summarises now."
  :type '(choice (const :tag "Default" nil) (natnum :tag "Percent") (const :tag "Off" "off") string))

(defcustom ctxls-mcp-servers nil
  "The MCP servers whose tools the model may call, beside ctxls's own.
An alist of (NAME . PLIST), PLIST with :command (a string), :args (a
list of strings) and :env (an alist of (VARIABLE . VALUE)), as Claude
Code's .mcp.json has them; for example
  ((\"github\" :command \"github-mcp-server\" :args (\"stdio\")
               :env ((\"GITHUB_TOKEN\" . \"...\"))))
Sent as initializationOptions.mcpServers; the daemon also reads the
servers of $XDG_CONFIG_HOME/ctxls/mcp.json.  The model sees each tool
as mcp__NAME__TOOL, and ctxls asks you before each call runs (see
`ctxls-tool-permission-timeout').  Changes take effect when the daemon
starts."
  :type '(alist :key-type (string :tag "Name")
                :value-type (plist :key-type (choice (const :command) (const :args) (const :env))
                                   :value-type sexp)))

;; A .dir-locals.el is the repository's: the settings that start programs
;; or say where the key goes are risky, so Emacs asks each time and never
;; lets the answer be kept as safe (`ctxls-command' is risky by its name).
(dolist (var '(ctxls-mcp-servers ctxls-provider ctxls-image-viewer ctxls-data-dir))
  (put var 'risky-local-variable t))

(defcustom ctxls-allow-read-only-tools nil
  "Non-nil: MCP tools their server says are read-only run unasked.
The model may then call them without asking you first
\(initializationOptions.allowReadOnlyTools)."
  :type 'boolean)

(defcustom ctxls-tool-permission-timeout nil
  "Seconds the question whether the model may call a tool waits for you.
Before an MCP tool runs, ctxls asks in the echo area with the server,
the tool and its arguments: y allows it once, a always in this
session, n denies it, and so does \\[keyboard-quit].  No answer
within this time denies it too, and the question goes away.  An edit
of the model's shown for review (`ctxls-review-mode') waits as long,
then is rejected.  Sent as
initializationOptions.toolPermissionTimeoutSeconds; nil keeps the
daemon's default of 120."
  :type '(choice (const :tag "Default (120)" nil) natnum))

(defcustom ctxls-command-output-lines 12
  "How many of a command's last output lines the chat shows.
The model's commands (run_command) show their output under the call's
line, as it comes and at the end; the lines above these are hidden
under a note that counts them (RET or TAB on the call's line shows
them)."
  :type 'natnum)

(defcustom ctxls-project-instructions t
  "Non-nil: the model is given the project's instructions files.
The AGENTS.md at each workspace folder (at one without it, CLAUDE.md,
else .github/copilot-instructions.md) and in the folders between a
file the turn involves and its workspace folder end the model's system
prompt, their text as you see it (unsaved edits included).  The
*ctxls context* buffer (\\[ctxls-show-context]) and the prompt preview
name them.  Sent as initializationOptions.projectInstructions; set
\(setq, customize) while the daemon runs, it goes to the daemon with the
next request (workspace/didChangeConfiguration) and counts from the next
turn."
  :type 'boolean)

(defcustom ctxls-send-active-file t
  "Non-nil: `ctxls-ask' sends the file in front of you with the question.
The current buffer's file (from the chat buffer, the file buffer used
last) goes as the turn's file, its current text, unsaved edits
included; with an active region, its lines.  The prompt says what
goes (\"Ask ctxls (with main.go:5-8): \"), and so does the chat, under
the question.  nil: only the session's relevant files go, and a
region's lines only when a region is active.  \\[universal-argument] \\[ctxls-ask]
leaves the file out once either way."
  :type 'boolean)

(defcustom ctxls-view-delay 0.3
  "Seconds of idleness before the view (file, point, region) is sent."
  :type 'number)

(defcustom ctxls-position-encodings '("utf-8" "utf-16")
  "The position encodings offered to the daemon, preferred first.
The daemon picks utf-8 when offered, else the LSP default utf-16."
  :type '(repeat (choice (const "utf-8") (const "utf-16"))))

(defcustom ctxls-request-timeout 30
  "Seconds before a command other than a chat turn is given up.
Chat turns have no timeout: they end when the answer is complete or
cancelled."
  :type 'number)

(defcustom ctxls-chat-buffer-name "*ctxls chat*"
  "The name of the chat buffer."
  :type 'string)

(defcustom ctxls-log-max-lines 2000
  "Lines kept in the *ctxls log* buffer (daemon logs and logMessage)."
  :type 'natnum)

(defcustom ctxls-events-buffer-size 0
  "Characters of JSON-RPC traffic kept in the *ctxls events* buffer.
0 keeps none (the default: streaming answers would fill it); nil keeps
everything, for debugging."
  :type '(choice (const :tag "Unlimited" nil) natnum))

(defcustom ctxls-lighter-title-width 24
  "Characters of the session title shown in the mode line."
  :type 'natnum)

(defcustom ctxls-ready-hook nil
  "Hook run when the daemon has answered initialize."
  :type 'hook)

;;;; Faces

(defface ctxls-session-heading '((t :inherit (bold font-lock-function-name-face) :height 1.1))
  "A session's header in the chat buffer.")

(defface ctxls-question-heading '((t :inherit (bold font-lock-keyword-face)))
  "The \"You\" heading above a question.")

(defface ctxls-answer-heading '((t :inherit (bold font-lock-type-face)))
  "The \"ctxls\" heading above an answer.")

(defface ctxls-note '((t :inherit (shadow italic)))
  "Notes in the chat buffer: thinking, cancelled, errors.")

(defface ctxls-tool '((t :inherit font-lock-builtin-face))
  "A tool call's line in the chat buffer.")

(defface ctxls-tool-pending '((t :inherit warning))
  "The status of a tool call waiting for your permission.")

(defface ctxls-tool-failed '((t :inherit error))
  "The status of a tool call that failed.")

(defface ctxls-tool-declined '((t :inherit warning))
  "The status of a tool call that was declined.")

(defface ctxls-command-note '((t :inherit shadow))
  "The note over a command's output that counts the lines above it.")

;;;; State

(defvar ctxls-mode)

(defvar ctxls--connection nil
  "The jsonrpc connection to the daemon, or nil.")

(defvar ctxls--state nil
  "The connection's state: nil, `starting', `ready' or `failed'.")

(defvar ctxls--failure nil
  "Why the daemon could not be started or stopped, for the mode line.")

(defvar ctxls--encoding 'utf-16
  "The negotiated position encoding: `utf-8', `utf-16' or `utf-32'.")

(defvar ctxls--pending nil
  "Functions waiting for the daemon to be ready, oldest first.")

(defvar ctxls--folders nil
  "The workspace folders the daemon knows, as directory names.")

(defvar ctxls--buffers nil
  "The buffers `ctxls-mode' syncs.")

(defvar ctxls--session-id nil
  "The current session's id, when known.")

(defvar ctxls--session-title nil
  "The current session's title, when known.")

(defvar ctxls--images nil
  "The images attached to the next question, in order.
Each a plist (:file ABSOLUTE-NAME :url DATA-URL).")

(defvar ctxls--session-folder nil
  "The current session's folder, when known.")

(defvar ctxls--turn nil
  "The running chat turn, a plist (:token :buffer :started :answered), or nil.")

(defvar ctxls--seq 0
  "Counter for workDoneTokens.")

(defvar ctxls--view-timer nil
  "The idle timer that sends the view.")

(defvar ctxls--last-view nil
  "The last view sent, to send only changes.")

(defvar ctxls--stderr nil
  "The pipe process receiving the daemon's stderr.")

(defvar ctxls--model nil
  "The model the current session's turns use, when known.")

(defvar ctxls--session-usage nil
  "What the current session's turns have cost, in words, or nil.")

(defvar ctxls--live-pending nil
  "Non-nil when the session changed elsewhere while a turn ran here.")

(defvar ctxls--live-settling nil
  "Non-nil from the start of a turn here until the chat knows what it stored.
Its progress may end before its result names the last message it
stored: until then, a turn made elsewhere cannot be told from it.")

(defvar ctxls--provider-sent nil
  "The value of `ctxls-provider' the running daemon was last given.")

(defvar ctxls--instructions-sent t
  "The value of `ctxls-project-instructions' the running daemon was last
given (t or nil).")

(defvar ctxls--instructions nil
  "The project's instructions files shown (*ctxls context*): a list of
the daemon's plists (:path :bytes :size :unsaved :cut), from
ctxls.context.get or the last turn's result.")

(defvar ctxls--live-state nil
  "nil, `reading' while a ctxls.session.show for an update is out, or
`again' when another update came meanwhile.")

(defvar ctxls--files 'unknown
  "The current session's context as last announced, to tell its changes.
An alist of (SET . ITEMS), the editor view left out (`ctxls--told-context').")

(defvar-local ctxls--uri nil
  "The URI this buffer was opened with on the daemon, or nil.")
(put 'ctxls--uri 'permanent-local t)

(defvar-local ctxls--version 0
  "The version of this buffer's text last sent.")
(put 'ctxls--version 'permanent-local t)

(defvar-local ctxls--change nil
  "The region and LSP range recorded by `before-change-functions'.
A list (BEG END START END-POSITION), START and END-POSITION LSP
positions computed before the change.")
(put 'ctxls--change 'permanent-local t)

(defvar-local ctxls--tick nil
  "`buffer-chars-modified-tick' when the daemon last got this buffer's text.")
(put 'ctxls--tick 'permanent-local t)

(defvar-local ctxls--has-cr nil
  "Non-nil when the buffer holds a carriage return.
The daemon counts a lone CR as a line end and Emacs does not, so such a
buffer is synced whole.")
(put 'ctxls--has-cr 'permanent-local t)

;;;; Small helpers

(defun ctxls--empty-object ()
  "An empty JSON object (nil would be sent as null)."
  (make-hash-table :size 1))

(defun ctxls--key (name)
  "The plist key of the protocol's field NAME (its generated name)."
  (intern (concat ":" name)))

(defun ctxls--plist (&rest kvs)
  "A plist of the pairs in KVS whose value is not nil."
  (let (out)
    (while kvs
      (when (cadr kvs)
        (setq out (nconc out (list (car kvs) (cadr kvs)))))
      (setq kvs (cddr kvs)))
    out))

(defun ctxls--one-line (text &optional width)
  "TEXT on one line, cut to WIDTH (the echo area's) characters."
  (let* ((s (replace-regexp-in-string "[ \t\n\r]+" " " (string-trim (or text ""))))
         (w (or width (max 20 (1- (frame-width))))))
    (truncate-string-to-width s w nil nil "…")))

(defun ctxls--say (fmt &rest args)
  "Show FMT with ARGS in the echo area on one line, prefixed ctxls."
  (let ((text (apply #'format fmt args)))
    (setq text (string-remove-prefix "ctxls: " text))
    (message "%s" (ctxls--one-line (concat "ctxls: " text)))))

(defun ctxls--log (fmt &rest args)
  "Append FMT with ARGS to the *ctxls log* buffer."
  (with-current-buffer (get-buffer-create "*ctxls log*")
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-max))
        (insert (apply #'format fmt args))
        (unless (bolp) (insert "\n"))
        (when (> (count-lines (point-min) (point-max)) ctxls-log-max-lines)
          (goto-char (point-min))
          (forward-line (- (count-lines (point-min) (point-max)) ctxls-log-max-lines))
          (delete-region (point-min) (point))))
      (setq buffer-read-only t))))

(defconst ctxls--uri-allowed
  (let ((vec (copy-sequence url-path-allowed-chars)))
    (aset vec ?: nil)
    vec)
  "Characters left as they are in a file URI's path.")

(defun ctxls--path-uri (path)
  "The file:// URI of PATH."
  (concat "file://" (url-hexify-string (expand-file-name path) ctxls--uri-allowed)))

(defun ctxls--project-root (dir)
  "The root of the project holding DIR, or nil."
  (when-let ((pr (and dir (file-directory-p dir) (project-current nil dir))))
    (directory-file-name (expand-file-name (project-root pr)))))

(defun ctxls--language-id ()
  "The LSP languageId of the current buffer, from its major mode."
  (let ((mode (symbol-name major-mode)))
    (pcase mode
      ((or "fundamental-mode" "text-mode") "plaintext")
      ("emacs-lisp-mode" "emacs-lisp")
      ((or "js-mode" "js2-mode" "javascript-mode") "javascript")
      ("sh-mode" "shellscript")
      ("c++-mode" "cpp")
      (_ (replace-regexp-in-string "\\(?:-ts\\)?-mode\\'" "" mode)))))

(defun ctxls--syncable-p (&optional buffer)
  "Non-nil when BUFFER (default current) visits a local file."
  (with-current-buffer (or buffer (current-buffer))
    (and buffer-file-name
         (not (file-remote-p buffer-file-name))
         (not (minibufferp)))))

;;;; Positions

(defun ctxls--column (bol pos)
  "The LSP character offset of POS on the line starting at BOL."
  (let ((s (buffer-substring-no-properties bol pos)))
    (if (= (length s) (string-bytes s))
        (length s)                      ; ASCII: the same in every encoding
      (pcase ctxls--encoding
        ('utf-8 (length (encode-coding-string s 'utf-8-unix t)))
        ('utf-32 (length s))
        (_ (+ (length s)
              (cl-count-if (lambda (c) (and (> c #xFFFF) (<= c #x10FFFF))) s)))))))

(defun ctxls--position (pos)
  "The LSP position (a plist) of buffer position POS, ignoring narrowing."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (forward-line 0)
      (list :line (1- (line-number-at-pos pos t))
            :character (ctxls--column (point) pos)))))

(defun ctxls--range (beg end)
  "The LSP range from BEG to END."
  (list :start (ctxls--position beg) :end (ctxls--position end)))

(defun ctxls--buffer-text ()
  "The whole text of the current buffer, narrowing ignored."
  (save-restriction
    (widen)
    (buffer-substring-no-properties (point-min) (point-max))))

(defun ctxls--scan-cr ()
  "Set `ctxls--has-cr' from the buffer's text."
  (setq ctxls--has-cr
        (save-excursion
          (save-restriction
            (widen)
            (goto-char (point-min))
            (and (search-forward "\r" nil t) t)))))

;;;; The connection

(defun ctxls--live-p ()
  "Return non-nil when the daemon's process is alive."
  (and ctxls--connection (jsonrpc-running-p ctxls--connection)))

(defun ctxls--usable-p ()
  "Return non-nil when the daemon runs and is not shutting down."
  (and (ctxls--live-p) (memq ctxls--state '(starting ready))))

(defun ctxls--go-bin-dirs ()
  "Go's install folders, where `go install' puts ctxls.
$GOBIN, $GOPATH/bin (each folder of GOPATH), ~/go/bin."
  (delete-dups
   (append (let ((gobin (getenv "GOBIN")))
             (and gobin (not (string-empty-p gobin)) (list gobin)))
           (mapcar (lambda (d) (expand-file-name "bin" d))
                   (let ((gopath (getenv "GOPATH")))
                     (and gopath (split-string gopath path-separator t))))
           (list (expand-file-name "~/go/bin")))))

(defun ctxls--find-program ()
  "The daemon's executable: (t . FILE), or (nil . WHY) when it is nowhere.
A program name that is not absolute is looked up on the variable
`exec-path', then in Go's install folders (`ctxls--go-bin-dirs')."
  (let ((prog (car ctxls-command)))
    (cond
     ((null prog) (cons nil "`ctxls-command' names no program"))
     ((file-name-absolute-p prog)
      (if (file-executable-p prog) (cons t prog)
        (cons nil (format "ctxls is not installed at %s" prog))))
     ((executable-find prog) (cons t (executable-find prog)))
     (t
      (let* ((dirs (ctxls--go-bin-dirs))
             (found (cl-some (lambda (d)
                               (let ((f (expand-file-name prog d)))
                                 (and (file-executable-p f) (not (file-directory-p f)) f)))
                             dirs)))
        (if found (cons t found)
          (cons nil (format "ctxls is not installed: %S is neither on exec-path nor in Go's install folder (%s)"
                            prog (mapconcat #'abbreviate-file-name dirs ", ")))))))))

(defconst ctxls--install-hint
  "install it with CGO_ENABLED=0 go install ./cmd/ctxls in a clone of ctxls (its README), or set `ctxls-command' (M-x customize-option RET ctxls-command)"
  "What to do when the daemon's program is not found.")

(defun ctxls--program ()
  "The daemon's executable, or signal a `user-error' saying where it looked."
  (let ((found (ctxls--find-program)))
    (if (car found) (cdr found)
      (user-error "ctxls: %s; %s" (cdr found) ctxls--install-hint))))

(defun ctxls--stderr-filter (_proc string)
  "Copy the daemon's stderr STRING to the log."
  (ctxls--log "%s" (string-trim-right string)))

(defun ctxls--capabilities ()
  "The client capabilities sent with initialize."
  (list :general (list :positionEncodings (vconcat ctxls-position-encodings))
        :window (list :workDoneProgress t
                      :showMessage (list :messageActionItem (list :additionalPropertiesSupport :json-false)))
        :workspace (list :workspaceFolders t :configuration :json-false
                         :didChangeConfiguration (list :dynamicRegistration :json-false)
                         ;; The model's edits: `ctxls--apply-edit'.
                         :applyEdit t
                         :workspaceEdit (list :documentChanges t :resourceOperations ["create" "delete"]))
        :textDocument (list :synchronization (list :dynamicRegistration :json-false
                                                   :didSave t :willSave :json-false))))

(defun ctxls--init-options ()
  "The initializationOptions, from the options.
After a restart, the session that was current is resumed."
  (or (ctxls--plist (ctxls--key ctxls-protocol-init-option-provider) ctxls-provider
                    (ctxls--key ctxls-protocol-init-option-data-dir) (and ctxls-data-dir (expand-file-name ctxls-data-dir))
                    (ctxls--key ctxls-protocol-init-option-view-idle-ms) ctxls-view-idle-ms
                    (ctxls--key ctxls-protocol-init-option-compact-at) ctxls-compact-at
                    (ctxls--key ctxls-protocol-init-option-mcp-servers) (ctxls--mcp-servers-json)
                    (ctxls--key ctxls-protocol-init-option-allow-read-only-tools) (and ctxls-allow-read-only-tools t)
                    (ctxls--key ctxls-protocol-init-option-tool-permission-timeout-seconds) ctxls-tool-permission-timeout
                    (ctxls--key ctxls-protocol-init-option-project-instructions) (if ctxls-project-instructions t :json-false)
                    ;; Edits are reviewed in a diff buffer (`ctxls--review-next').
                    (ctxls--key ctxls-protocol-init-option-review-edits) t
                    ;; Questions are shown in the chat (`ctxls--on-question'),
                    ;; never asked with window/showMessageRequest.
                    (ctxls--key ctxls-protocol-init-option-questions) t
                    ;; The model reads Flymake's diagnostics (`ctxls--diagnostics-request').
                    (ctxls--key ctxls-protocol-init-option-diagnostics) t
                    (ctxls--key ctxls-protocol-init-option-session) ctxls--session-id)
      (ctxls--empty-object)))

(defun ctxls--mcp-servers-json ()
  "`ctxls-mcp-servers' as the JSON object the daemon reads, or nil."
  (when ctxls-mcp-servers
    (let ((servers (make-hash-table :test #'equal)))
      (pcase-dolist (`(,name . ,spec) ctxls-mcp-servers)
        (let ((server (make-hash-table :test #'equal))
              (env (make-hash-table :test #'equal)))
          (puthash "command" (plist-get spec :command) server)
          (puthash "args" (vconcat (plist-get spec :args)) server)
          (pcase-dolist (`(,k . ,v) (plist-get spec :env))
            (puthash (format "%s" k) v env))
          (puthash "env" env server)
          (puthash (format "%s" name) server servers)))
      servers)))

(defun ctxls--folder (dir)
  "The LSP workspace folder for DIR."
  (list :uri (ctxls--path-uri dir) :name (file-name-nondirectory dir)))

(defun ctxls--events-buffer-args ()
  "The initargs that size jsonrpc's events buffer (`ctxls-events-buffer-size').
jsonrpc.el 1.0.14 (Emacs 28) takes :events-buffer-scrollback-size;
later ones (Emacs 30) warn that it is deprecated and take
:events-buffer-config."
  (if (slot-exists-p 'jsonrpc-process-connection '-events-buffer-config)
      (list :events-buffer-config (list :size ctxls-events-buffer-size :format 'full))
    (list :events-buffer-scrollback-size ctxls-events-buffer-size)))

(defvar ctxls--filtering nil
  "Non-nil while the daemon's output is being handled.")

(defun ctxls--filter-in-order (filter proc string)
  "Hand the daemon's output STRING to FILTER, never inside FILTER itself.
A handler that sends a request may read more output (`process-send-string'
does while a write waits on a full pipe), and with it run PROC's filter
inside the running one: jsonrpc.el 1.0.14 (Emacs 28) then loses messages
\(bug#60088; later versions defer such output themselves).  Output read
that way waits in PROC's backlog and is handled, in the order read, when
the running filter returns (or soon after, when a handler failed)."
  (process-put proc 'ctxls-backlog (nconc (process-get proc 'ctxls-backlog) (list string)))
  (unless ctxls--filtering
    (let ((ctxls--filtering t))
      (unwind-protect
          (while (process-get proc 'ctxls-backlog)
            (funcall filter proc (pop (process-get proc 'ctxls-backlog))))
        ;; A handler's error left output unhandled: on with it soon.
        (when (process-get proc 'ctxls-backlog)
          (run-at-time 0 nil #'ctxls--filter-in-order filter proc ""))))))

(defvar ctxls--key-inputs-given nil
  "`ctxls--key-inputs' when the key was last looked up.")

(defvar ctxls--key-recheck nil
  "Non-nil when the next question looks the key up again: the last was
refused for want of a provider.")

(defun ctxls--start (&optional found)
  "Start the daemon and send initialize; return at once.
The daemon gets the provider's key in its environment (`ctxls-api-key'):
FOUND is (KEY), KEY what `ctxls--find-key' returned already; else it is
looked up now."
  (let* ((exe (ctxls--program))
         (root (or (ctxls--project-root default-directory)
                   (directory-file-name (expand-file-name default-directory))))
         (default-directory (file-name-as-directory root))
         (key (if found (car found) (ctxls--find-key)))
         (stderr (make-pipe-process :name "ctxls stderr" :noquery t
                                    :filter #'ctxls--stderr-filter))
         (proc (let ((process-environment
                      ;; For the daemon alone: never `setenv', which every
                      ;; other process Emacs starts would inherit.
                      (if key (cons (concat (car key) "=" (cdr key)) process-environment)
                        process-environment)))
                 (make-process :name "ctxls" :command (cons exe (cdr ctxls-command))
                               :connection-type 'pipe :coding 'utf-8-emacs-unix
                               :noquery t :stderr stderr))))
    (process-put proc 'ctxls-stderr stderr)
    (setq ctxls--key-given (ctxls--key-fingerprint key)
          ctxls--key-inputs-given (ctxls--key-inputs))
    (when ctxls--key-error
      (ctxls--say "%s" ctxls--key-error))
    ;; The root, then the projects of the buffers already synced (after a
    ;; restart).
    (setq ctxls--folders (list root)
          ctxls--state 'starting)
    (dolist (buf ctxls--buffers)
      (when (buffer-live-p buf)
        (ctxls--add-folder-for (buffer-local-value 'buffer-file-name buf))))
    (setq ctxls--stderr stderr
          ctxls--state 'starting
          ctxls--failure nil
          ctxls--connection
          (apply #'make-instance 'jsonrpc-process-connection
                 :name "ctxls" :process proc
                 :notification-dispatcher #'ctxls--on-notification
                 :request-dispatcher #'ctxls--on-request
                 :on-shutdown #'ctxls--on-shutdown
                 (ctxls--events-buffer-args)))
    (add-function :around (process-filter proc) #'ctxls--filter-in-order)
    (jsonrpc-async-request
     ctxls--connection 'initialize
     (list :processId (emacs-pid)
           :clientInfo (list :name "emacs ctxls.el"
                             :version (format "%s (Emacs %s)" ctxls-version emacs-version))
           :rootUri (ctxls--path-uri root)
           :rootPath root
           :workspaceFolders (vconcat (mapcar #'ctxls--folder ctxls--folders))
           :capabilities (ctxls--capabilities)
           :initializationOptions (prog1 (ctxls--init-options)
                                    (setq ctxls--provider-sent (copy-tree ctxls-provider)
                                          ctxls--instructions-sent (and ctxls-project-instructions t))))
     :success-fn #'ctxls--on-initialized
     :error-fn (lambda (err)
                 (ctxls--fail (format "initialize failed: %s" (plist-get err :message))))
     :timeout 30
     :timeout-fn (lambda () (ctxls--fail "the daemon did not answer initialize within 30 s")))
    (force-mode-line-update t)))

(defun ctxls--on-initialized (result)
  "Handle the initialize RESULT: negotiate, open the buffers, run waiters."
  (let ((enc (plist-get (plist-get result :capabilities) :positionEncoding)))
    (setq ctxls--encoding (pcase enc ("utf-8" 'utf-8) ("utf-32" 'utf-32) (_ 'utf-16))))
  (setq ctxls--state 'ready)
  (jsonrpc-notify ctxls--connection 'initialized (ctxls--empty-object))
  (dolist (buf ctxls--buffers)
    (when (buffer-live-p buf)
      (with-current-buffer buf
        (setq ctxls--uri nil)
        (ctxls--did-open))))
  (let ((waiting ctxls--pending))
    (setq ctxls--pending nil)
    (dolist (fn waiting)
      (with-demoted-errors "ctxls: %S" (funcall fn))))
  (run-hooks 'ctxls-ready-hook)
  (force-mode-line-update t))

(defun ctxls--fail (why)
  "Record that the daemon failed for WHY, tell the user, stop the process."
  (setq ctxls--state 'failed ctxls--failure why ctxls--pending nil ctxls--live-settling nil)
  (when ctxls--turn                     ; it waited for the daemon in vain
    (ctxls--finish-turn ctxls--turn (concat "error: " why)))
  (ctxls--log "ctxls: %s" why)
  (ctxls--say "%s (see *ctxls log*)" why)
  (when (ctxls--live-p)
    (delete-process (jsonrpc--process ctxls--connection)))
  (force-mode-line-update t))

(defvar ctxls--open-questions)         ; Questions in the chat, below

(defun ctxls--on-shutdown (conn)
  "Clean up after the daemon's connection CONN ended."
  ;; Its stderr's pipe, also when another daemon took its place.
  (let ((stderr (process-get (jsonrpc--process conn) 'ctxls-stderr)))
    (when (and (processp stderr) (not (eq stderr ctxls--stderr)) (process-live-p stderr))
      (delete-process stderr)))
  (when (eq conn ctxls--connection)
    (let ((status (process-exit-status (jsonrpc--process conn))))
      (unless (eq ctxls--state 'stopping)
        (ctxls--log "ctxls: the daemon exited with status %s" status)
        (when ctxls-mode
          (ctxls--say "the daemon exited (status %s); the next command restarts it" status))))
    (when ctxls--turn
      (ctxls--finish-turn ctxls--turn "error: the daemon exited"))
    ;; Its questions can no longer be answered, nor closed by it.
    (dolist (q ctxls--open-questions)
      (ctxls--on-question-closed (list :id (plist-get (plist-get q :params) :id) :outcome "exited")))
    (setq ctxls--connection nil
          ctxls--live-settling nil
          ctxls--state (if (eq ctxls--state 'failed) 'failed nil))
    (when (process-live-p ctxls--stderr)
      (delete-process ctxls--stderr))
    (dolist (buf ctxls--buffers)
      (when (buffer-live-p buf)
        (with-current-buffer buf (setq ctxls--uri nil))))
    (force-mode-line-update t)))

(defun ctxls--when-ready (fn)
  "Call FN once the daemon is ready, starting it if needed."
  (unless ctxls-mode
    (ctxls-mode 1))
  (unless (ctxls--usable-p)
    (ctxls--start))
  (if (eq ctxls--state 'ready)
      (funcall fn)
    (setq ctxls--pending (append ctxls--pending (list fn)))
    (ctxls--say "starting the daemon…")))

(defun ctxls--restart (&optional found)
  "Stop the daemon and start another, in the same session.
FOUND is passed on to `ctxls--start'.  The buffers are opened on the
new daemon as it is ready, and the view is sent again."
  (ctxls--stop)
  (setq ctxls--connection nil
        ctxls--state nil
        ctxls--last-view nil)
  (ctxls--start found))

(defun ctxls--key-current (&optional force)
  "Give the running daemon the key to give it now, starting it again if need be.
The key is looked up again when FORCE is non-nil, when the last question
was refused for want of a provider, when the last lookup failed, or when
what it depends on changed (`ctxls-api-key', the provider's host or
variable); when it is not the key the daemon has, the daemon starts
again with it (the user who has just put the key in ~/.authinfo.gpg
need not restart anything)."
  (when (and (ctxls--usable-p) (not ctxls--turn)
             (or force ctxls--key-recheck ctxls--key-error
                 (not (equal (ctxls--key-inputs) ctxls--key-inputs-given))))
    (setq ctxls--key-recheck nil)
    (let ((key (ctxls--find-key)))
      (setq ctxls--key-inputs-given (ctxls--key-inputs))
      (unless (equal (ctxls--key-fingerprint key) ctxls--key-given)
        (ctxls--restart (list key))))))

(defun ctxls--stop ()
  "Shut the daemon down: shutdown, then exit, without waiting."
  (let ((conn ctxls--connection))
    (when (and conn (jsonrpc-running-p conn))
      (setq ctxls--state 'stopping)
      (let ((proc (jsonrpc--process conn)))
        (jsonrpc-async-request
         conn 'shutdown nil
         :success-fn (lambda (_) (ignore-errors (jsonrpc-notify conn 'exit nil)))
         :error-fn (lambda (_) (ignore-errors (jsonrpc-notify conn 'exit nil)))
         :timeout 2
         :timeout-fn (lambda () (when (process-live-p proc) (delete-process proc))))
        ;; Whatever happens, the process does not outlive this by long.
        (run-with-timer 3 nil (lambda () (when (process-live-p proc) (delete-process proc))))))))

(defun ctxls--kill-emacs ()
  "Tell the daemon to exit as Emacs exits."
  (when (ctxls--live-p)
    (ignore-errors (jsonrpc-notify ctxls--connection 'exit nil))))

;;;; Requests

(defun ctxls--request (method params on-success &optional on-error timeout)
  "Send request METHOD with PARAMS once the daemon is ready.
ON-SUCCESS gets the result; ON-ERROR the error plist, also when no
answer came in time (default: say it).  TIMEOUT is in seconds,
default `ctxls-request-timeout'; `never' waits as long as it takes."
  (ctxls--when-ready
   (lambda ()
     (ctxls--flush)
     (jsonrpc-async-request
      ctxls--connection method params
      :success-fn (lambda (result) (ctxls--guarded method on-success result))
      :error-fn (lambda (err)
                  (if on-error (ctxls--guarded method on-error err)
                    (ctxls--say "%s" (or (plist-get err :message) err))))
      :timeout (if (eq timeout 'never) nil (or timeout ctxls-request-timeout))
      :timeout-fn (lambda ()
                    (let ((why (format "%s did not answer in time" method)))
                      (if on-error (ctxls--guarded method on-error (list :message why))
                        (ctxls--say "%s" why))))))))

(defun ctxls--command (id arg on-success &optional on-error)
  "Run the daemon's command ID with the plist ARG; ON-SUCCESS gets the result.
ON-ERROR gets the error plist (default: say it)."
  (ctxls--request 'workspace/executeCommand
                  (list :command id :arguments (vector (or arg (ctxls--empty-object))))
                  (or on-success #'ignore) on-error))

(defun ctxls--ensure-ready ()
  "Start the daemon if needed and wait (at most 10 s) until it is ready."
  (unless ctxls-mode
    (ctxls-mode 1))
  (unless (ctxls--usable-p)
    (ctxls--start))
  (with-timeout (10 (user-error "ctxls: the daemon did not start within 10 s"))
    (while (eq ctxls--state 'starting)
      (accept-process-output nil 0.05)))
  (unless (eq ctxls--state 'ready)
    (user-error "ctxls: the daemon is not running: %s" (or ctxls--failure "it exited"))))

(defun ctxls--call (id arg)
  "Run the daemon's command ID with the plist ARG and return its result.
Only for the lists a picker shows (sessions, search hits, context files,
the last question to ask again):
the daemon answers them from its store at once, and the prompt that
follows needs them in the command's own context (keyboard macros, C-g).
Chat turns and everything else are asynchronous."
  (ctxls--ensure-ready)
  (ctxls--flush)
  (condition-case err
      (ctxls--request-wait ctxls--connection 'workspace/executeCommand
                           (list :command id :arguments (vector (or arg (ctxls--empty-object))))
                           ctxls-request-timeout)
    (jsonrpc-error
     (user-error "ctxls: %s" (or (alist-get 'jsonrpc-error-message (cdr err)) (cadr err))))))

(defun ctxls--request-wait (conn method params timeout)
  "Send METHOD with PARAMS on CONN and wait up to TIMEOUT seconds for its result.
Signals `jsonrpc-error' as `jsonrpc-request' does.  Not `jsonrpc-request'
itself: in Emacs 28's jsonrpc (1.0.14) its answer leaves the process
filter with a `throw', and the messages read with the answer (a question
the daemon asks, a title) wait in the process buffer until the daemon
writes again, which may be never (a turn waiting for that question's
answer).  Here the answer only sets a variable; the filter goes on."
  (let ((outcome nil))
    (jsonrpc-async-request
     conn method params
     :success-fn (lambda (result) (setq outcome (list :result result)))
     :error-fn (jsonrpc-lambda (&key code message data)
                 (setq outcome (list :error `((jsonrpc-error-code . ,code)
                                              (jsonrpc-error-message . ,message)
                                              (jsonrpc-error-data . ,data)))))
     :timeout timeout
     :timeout-fn (lambda () (setq outcome (list :error '((jsonrpc-error-message . "Timed out"))))))
    ;; TIMEOUT ends the wait through :timeout-fn (timers run in here).
    (while (and (null outcome) (jsonrpc-running-p conn))
      (accept-process-output nil 0.05))
    (pcase outcome
      (`(:result ,result) result)
      (`(:error ,data) (signal 'jsonrpc-error (cons "request failed" data)))
      (_ (signal 'jsonrpc-error (list "request failed" (cons 'jsonrpc-error-message "the daemon exited")))))))

(defun ctxls--on-request (_conn method params)
  "Answer the daemon's request METHOD with PARAMS."
  (pcase method
    ('window/workDoneProgress/create nil)
    ;; ctxls asks in the chat (ctxls/question): no key is read here, a
    ;; question asked this way is said and answered null (no).
    ('window/showMessageRequest
     (ctxls--say "%s" (plist-get params :message))
     nil)
    ('workspace/configuration
     (make-vector (length (plist-get params :items)) nil))
    ('workspace/applyEdit (ctxls--apply-edit params))
    ((or 'client/registerCapability 'client/unregisterCapability) nil)
    (_ (jsonrpc-error :code -32601 :message (format "%s is not handled by ctxls.el" method)))))

;;;; Text synchronisation

(defun ctxls--track (&optional buffer)
  "Start syncing BUFFER (default current) if it visits a local file."
  (with-current-buffer (or buffer (current-buffer))
    (when (and ctxls-mode (ctxls--syncable-p))
      (unless (memq (current-buffer) ctxls--buffers)
        (push (current-buffer) ctxls--buffers)
        (add-hook 'before-change-functions #'ctxls--before-change nil t)
        (add-hook 'after-change-functions #'ctxls--after-change nil t)
        (add-hook 'kill-buffer-hook #'ctxls--on-kill nil t)
        (add-hook 'after-revert-hook #'ctxls--resync nil t))
      (ctxls--add-folder-for buffer-file-name)
      (when (eq ctxls--state 'ready)
        (ctxls--did-open)))))

(defun ctxls--untrack (&optional buffer)
  "Stop syncing BUFFER (default current), closing it on the daemon."
  (with-current-buffer (or buffer (current-buffer))
    (ctxls--did-close)
    (setq ctxls--buffers (delq (current-buffer) ctxls--buffers))
    (remove-hook 'before-change-functions #'ctxls--before-change t)
    (remove-hook 'after-change-functions #'ctxls--after-change t)
    (remove-hook 'kill-buffer-hook #'ctxls--on-kill t)
    (remove-hook 'after-revert-hook #'ctxls--resync t)))

(dolist (fn '(ctxls--before-change ctxls--after-change ctxls--on-kill ctxls--resync))
  ;; A major mode change keeps the buffer synced.
  (put fn 'permanent-local-hook t))

(defun ctxls--add-folder-for (file)
  "Tell the daemon about FILE's project when it is a new workspace folder."
  (when-let ((root (ctxls--project-root (file-name-directory file))))
    (unless (cl-some (lambda (f) (or (string= f root) (file-in-directory-p root f)))
                     ctxls--folders)
      (setq ctxls--folders (append ctxls--folders (list root)))
      (when (eq ctxls--state 'ready)
        (jsonrpc-notify ctxls--connection 'workspace/didChangeWorkspaceFolders
                        (list :event (list :added (vector (ctxls--folder root))
                                           :removed [])))))))

(defun ctxls--did-open ()
  "Send didOpen for the current buffer."
  (when (and (eq ctxls--state 'ready) (ctxls--syncable-p) (not ctxls--uri))
    (condition-case err
        (let ((uri (ctxls--path-uri buffer-file-name)))
          (ctxls--scan-cr)
          (setq ctxls--version 1 ctxls--change nil)
          (jsonrpc-notify ctxls--connection 'textDocument/didOpen
                          (list :textDocument (list :uri uri :languageId (ctxls--language-id)
                                                    :version ctxls--version
                                                    :text (ctxls--buffer-text))))
          (setq ctxls--uri uri ctxls--tick (buffer-chars-modified-tick)))
      (error (ctxls--log "ctxls: didOpen %s failed: %S" buffer-file-name err)))))

(defun ctxls--did-close ()
  "Send didClose for the current buffer if it is open on the daemon."
  (when ctxls--uri
    (when (eq ctxls--state 'ready)
      (ignore-errors
        (jsonrpc-notify ctxls--connection 'textDocument/didClose
                        (list :textDocument (list :uri ctxls--uri)))))
    (setq ctxls--uri nil ctxls--change nil)))

(defun ctxls--send-change (change)
  "Send one didChange with CHANGE, a TextDocumentContentChangeEvent."
  (setq ctxls--version (1+ ctxls--version))
  (jsonrpc-notify ctxls--connection 'textDocument/didChange
                  (list :textDocument (list :uri ctxls--uri :version ctxls--version)
                        :contentChanges (vector change)))
  (setq ctxls--tick (buffer-chars-modified-tick)))

(defun ctxls--send-full ()
  "Send the whole text of the current buffer as one change."
  (ctxls--scan-cr)
  (ctxls--send-change (list :text (ctxls--buffer-text))))

(defun ctxls--before-change (beg end)
  "Record the LSP range of BEG..END before it changes."
  (when (and ctxls--uri (eq ctxls--state 'ready))
    (condition-case err
        (setq ctxls--change
              (if (or ctxls--has-cr (not (eql ctxls--tick (buffer-chars-modified-tick))))
                  'full             ; a lone CR, or a change made silently
                (list beg end (ctxls--position beg) (ctxls--position end))))
      (error (setq ctxls--change 'full)
             (ctxls--log "ctxls: before-change: %S" err)))))

(defun ctxls--after-change (beg end old-len)
  "Send the change of BEG..END (OLD-LEN characters before) to the daemon."
  (when (and ctxls--uri (eq ctxls--state 'ready))
    (condition-case err
        (let ((rec ctxls--change))
          (setq ctxls--change nil)
          (pcase rec
            ;; The after-change region lies inside the one recorded before
            ;; the change (capitalize-word, fill-paragraph and friends
            ;; announce more than they change): send the recorded range
            ;; with its new text.
            (`(,b ,e ,start ,stop)
             (if (and (<= b beg) (<= (+ beg old-len) e) (not ctxls--has-cr)
                      (not (string-search "\r" (buffer-substring-no-properties beg end))))
                 (ctxls--send-change
                  (list :range (list :start start :end stop)
                        :text (save-restriction
                                (widen)
                                (buffer-substring-no-properties b (+ e (- end beg old-len))))))
               (ctxls--send-full)))
            (_ (ctxls--send-full))))
      (error (ctxls--log "ctxls: after-change: %S" err)))))

(defun ctxls--resync ()
  "Send the whole text again (after a revert)."
  (when (and ctxls--uri (eq ctxls--state 'ready))
    (ctxls--send-full)))

(defun ctxls--sync-settings ()
  "Give the daemon the options it reads while running, if changed since.
`ctxls-provider' set (setq, customize) after the daemon started, say
after a first question answered \"no usable model provider\", is used
by the next request, with no restart; so is
`ctxls-project-instructions' (workspace/didChangeConfiguration)."
  (when (eq ctxls--state 'ready)
    (let* ((provider (and ctxls-provider (not (equal ctxls-provider ctxls--provider-sent))))
           (on (and ctxls-project-instructions t))
           (instructions (not (eq on ctxls--instructions-sent))))
      (when (or provider instructions)
        (when provider
          (setq ctxls--provider-sent (copy-tree ctxls-provider)))
        (setq ctxls--instructions-sent on)
        (jsonrpc-notify ctxls--connection 'workspace/didChangeConfiguration
                        (list :settings
                              (list :ctxls (ctxls--plist
                                            (ctxls--key ctxls-protocol-setting-provider) (and provider ctxls-provider)
                                            (ctxls--key ctxls-protocol-setting-project-instructions)
                                            (and instructions (if on t :json-false))))))))))

(defun ctxls--flush ()
  "Resend buffers whose text changed without the change hooks seeing it.
A changed `ctxls-provider' or `ctxls-project-instructions' goes first
\(`ctxls--sync-settings')."
  (ctxls--sync-settings)
  (when (eq ctxls--state 'ready)
    (dolist (buf ctxls--buffers)
      (when (buffer-live-p buf)
        (with-current-buffer buf
          (cond
           ((and (ctxls--syncable-p) (not ctxls--uri)) (ctxls--did-open))
           ((and ctxls--uri (not (eql ctxls--tick (buffer-chars-modified-tick))))
            (ctxls--send-full))))))))

(defun ctxls--on-kill ()
  "Close the buffer on the daemon as it is killed."
  (ctxls--untrack))

(defun ctxls--after-save ()
  "Send didSave; a buffer saved under a new name is reopened under it."
  (when ctxls-mode
    (cond
     ((not (memq (current-buffer) ctxls--buffers)) (ctxls--track))
     ((and ctxls--uri buffer-file-name
           (not (string= ctxls--uri (ctxls--path-uri buffer-file-name))))
      (ctxls--did-close)
      (ctxls--did-open))
     ((and ctxls--uri (eq ctxls--state 'ready))
      (jsonrpc-notify ctxls--connection 'textDocument/didSave
                      (list :textDocument (list :uri ctxls--uri)))))))

;;;; The view

(defun ctxls--view ()
  "The didChangeView params of the selected window, or nil."
  (let* ((win (selected-window))
         (buf (window-buffer win)))
    (with-current-buffer buf
      (when ctxls--uri
        (let ((sel (if (use-region-p)
                       (ctxls--range (region-beginning) (region-end))
                     (ctxls--range (window-point win) (window-point win)))))
          (list :textDocument (list :uri ctxls--uri)
                :selection sel
                :visibleRange (ctxls--range (window-start win)
                                            (min (point-max) (window-end win)))))))))

(defun ctxls--send-view ()
  "Send ctxls/didChangeView when the view changed since the last one."
  (when (and (eq ctxls--state 'ready) (not (minibufferp (window-buffer (selected-window)))))
    (condition-case err
        (let ((view (ctxls--view)))
          (when (and view (not (equal view ctxls--last-view)))
            (setq ctxls--last-view view)
            (jsonrpc-notify ctxls--connection
                            (intern ctxls-protocol-client-notification-did-change-view)
                            view)))
      (error (ctxls--log "ctxls: view: %S" err)))))

;;;; Notifications

(defun ctxls--guarded (what fn &rest args)
  "Call FN with ARGS; an error is logged (naming WHAT), not signalled.
For what jsonrpc.el runs as a message arrives (notifications, answers).
Up to jsonrpc 1.0.14 (Emacs 28) that is its process filter, where an
error would leave the messages that came with it in the same output
unread until the daemon writes again, which it may never do (a request
then seems unanswered); later ones (Emacs 30) run each message from a
timer of its own.  1.0.14's filter binds `inhibit-read-only' around
the handlers, later ones do not: a handler that writes into a read-only
buffer binds it itself."
  (condition-case err
      (apply fn args)
    (user-error (ctxls--say "%s" (error-message-string err)) nil)
    (error (ctxls--log "ctxls: %s failed: %s" what (error-message-string err))
           (ctxls--say "%s failed: %s (see *ctxls log*)" what (error-message-string err))
           nil)))

(defun ctxls--on-notification (conn method params)
  "Handle the daemon's notification METHOD with PARAMS (CONN's)."
  (ctxls--guarded method #'ctxls--handle-notification conn method params))

(defun ctxls--handle-notification (_conn method params)
  "Handle the daemon's notification METHOD with PARAMS."
  (let ((name (symbol-name method)))
    (cond
     ((eq method '$/progress) (ctxls--on-progress params))
     ((string= name ctxls-protocol-notification-context-changed) (ctxls--on-context-changed params))
     ((string= name ctxls-protocol-notification-session-updated) (ctxls--on-session-updated params))
     ((string= name ctxls-protocol-notification-session-files-changed) (ctxls--on-files-changed params))
     ((string= name ctxls-protocol-notification-tool-call) (ctxls--on-tool-call params))
     ((string= name ctxls-protocol-notification-question) (ctxls--on-question params))
     ((string= name ctxls-protocol-notification-question-closed) (ctxls--on-question-closed params))
     ((eq method 'window/showMessage)
      (ctxls--log "%s" (plist-get params :message))
      ;; An error before the turn began is the refusal its reply brings,
      ;; said then in Emacs's words (no usable provider): said once.
      (unless (and ctxls--turn (not (plist-get ctxls--turn :begun))
                   (eql (plist-get params :type) 1))
        (ctxls--say "%s" (plist-get params :message))))
     ((eq method 'window/logMessage)
      (ctxls--log "%s" (plist-get params :message))))))

(defun ctxls--set-label (key)
  "How the context set KEY (:files, :applet, ...) is named to the user."
  (if (eq key :applet) "editor view" (substring (symbol-name key) 1)))

(defun ctxls--told-context (ctx)
  "The part of the context sets CTX a change of which is said.
The editor view (the set the daemon captures whenever point rests) is
left out: it changes all the time, by itself."
  (cl-loop for (key items) on ctx by #'cddr
           unless (or (eq key :applet) (zerop (length items)))
           collect (cons key (append items nil))))

(defun ctxls--on-context-changed (params)
  "Say in one line what the context is now (PARAMS of contextChanged).
Only a resume, or a change the user or the model made (to the files
or another set), is said: the editor view's capture changes the
context each time you rest, silently."
  (let* ((ctx (plist-get params :context))
         (told (ctxls--told-context ctx))
         (files (alist-get :files told))
         (others (assq-delete-all :files (copy-alist told)))
         (missing (append (plist-get params :missing) nil))
         (resume (equal (plist-get params :reason) "resume"))
         (changed (or resume (not (equal told ctxls--files)))))
    (when (or resume
              (if (eq ctxls--files 'unknown) told (not (equal told ctxls--files))))
      (ctxls--say "%s: %s%s%s" (if resume "resumed context" "context")
                  (if files
                      (mapconcat #'file-name-nondirectory files ", ")
                    "no files")
                  (mapconcat (lambda (o) (format ", %s (%d)" (ctxls--set-label (car o)) (length (cdr o))))
                             others "")
                  (if missing (format " (%d missing)" (length missing)) "")))
    (setq ctxls--files told)
    (when-let ((buf (get-buffer "*ctxls context*")))
      (ctxls--render-context buf ctx)
      ;; Other files may bring other folders' AGENTS.md.
      (when changed
        (ctxls--command ctxls-protocol-command-context-get nil
                        (lambda (r) (ctxls--show-instructions (plist-get r :instructions)))
                        #'ignore)))))

(defvar ctxls--titles (make-hash-table :test #'equal)
  "Titles the daemon announced, by session id.
A first turn's title may be announced after the turn has ended but
before its result names the session: the result takes it from here.")

(defvar ctxls--titles-announced 0
  "How many titles sessionUpdated announced: a session read again that
started before the last one keeps the title it announced.")

(defun ctxls--on-session-updated (params)
  "Show a session's new title and turns made elsewhere (PARAMS of sessionUpdated)."
  (let ((id (plist-get params :sessionId)))
    (puthash id (plist-get params :title) ctxls--titles)
    (when (or (equal id ctxls--session-id)
              (and (null ctxls--session-id) ctxls--turn))
      (unless (equal (plist-get params :title) ctxls--session-title)
        (setq ctxls--session-folder nil)) ; renamed: the folder moved
      (setq ctxls--session-id id
            ctxls--session-title (plist-get params :title)
            ctxls--titles-announced (1+ ctxls--titles-announced))
      (ctxls--update-header)
      (force-mode-line-update t)
      ;; Its messages may have changed too: a turn made elsewhere.
      (ctxls--live-refresh))))

(defun ctxls--on-files-changed (params)
  "Show a session file written or removed (PARAMS of sessionFilesChanged)."
  (let* ((subdir (plist-get params :subdir))
         (name (plist-get params :name))
         (rel (concat subdir "/" name))
         (removed (eq (plist-get params :removed) t)))
    (ctxls--say "%s %s%s" (if removed "removed" "wrote") rel
                (if removed "" (format " (%s bytes)" (plist-get params :size))))
    (when (and (equal (plist-get params :by) "model") (not removed)
               (or (equal (plist-get params :sessionId) ctxls--session-id)
                   (and ctxls--turn (null ctxls--session-id))))
      (let ((session (plist-get params :sessionId)))
        (ctxls--chat-insert
         (lambda ()
           (insert "\n")
           (insert-text-button (format "[wrote %s]" rel)
                               'action (lambda (_) (ctxls--open-session-file session rel))
                               'help-echo (format "Open %s from the session folder" rel))
           (insert "\n")))))))

(defun ctxls--open-session-file (session rel &optional open tries)
  "Open REL, a file in SESSION's folder, asked for each time.
The folder moves when the session's title changes (a folder kept from
before opened an empty file of the old name), also between the answer
and the opening: a file not found there is asked for again, up to TRIES
times (default 3), before saying it is gone.  OPEN, a function of the
file's name, opens it (default `find-file-other-window')."
  (setq open (or open #'find-file-other-window)
        tries (or tries 3))
  (ctxls--command ctxls-protocol-command-session-show (list :sessionId session)
                  (lambda (r)
                    (let* ((folder (plist-get (plist-get r :session) :folder))
                           (file (and folder (expand-file-name rel folder))))
                      (when (equal session ctxls--session-id)
                        (setq ctxls--session-folder folder))
                      (cond
                       ((and file (file-exists-p file)) (funcall open file))
                       ((> tries 1)
                        (run-at-time 0.2 nil #'ctxls--open-session-file session rel open (1- tries)))
                       (t (ctxls--say "%s is no longer in the session's folder" rel)))))))

;;;; The chat buffer

(defvar ctxls-chat-buffer-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "a") #'ctxls-ask)
    (define-key map (kbd "w") #'ctxls-compose)
    (define-key map (kbd "G") #'ctxls-regenerate)
    (define-key map (kbd "E") #'ctxls-edit-question)
    (define-key map (kbd "C-c C-c") #'ctxls-ask)
    (define-key map (kbd "C-c C-k") #'ctxls-cancel)
    (define-key map (kbd "n") #'ctxls-new-session)
    (define-key map (kbd "r") #'ctxls-resume)
    (define-key map (kbd "s") #'ctxls-search)
    (define-key map (kbd "+") #'ctxls-add-file)
    (define-key map (kbd "-") #'ctxls-remove-file)
    (define-key map (kbd "c") #'ctxls-show-context)
    (define-key map (kbd "p") #'ctxls-preview)
    (define-key map (kbd "q") #'quit-window)
    (define-key map (kbd "g") #'ctxls-chat-refresh)
    (define-key map (kbd "TAB") #'ctxls-chat-tab)
    (define-key map (kbd "i") #'ctxls-apply-block)
    (define-key map (kbd "I") #'ctxls-attach-image)
    (define-key map (kbd "u") #'ctxls-undo)
    (define-key map (kbd "U") #'ctxls-redo)
    (define-key map (kbd "?") #'ctxls-chat-keys)
    map)
  "Keys of the chat buffer.")

(define-minor-mode ctxls-chat-buffer-mode
  "Toggle the keys and header line of the ctxls chat buffer.
Each tool call of the model's is a line, \"• server · tool \\=`{args}\\=` —
status\", changed as the call goes: waiting for your permission,
running, done, failed, declined or cancelled (a call of ctxls's own tools that
says what came of it shows that in place of done: an edit's \"+3 −1
lines\").  Once it has ended, RET or TAB on the line shows what the
model got back (\"▾\") and hides it again (\"▸\"); isearch shows it too.
The model's searches (grep, find_files, list_directory) name what they
looked for and end with what they found
\(\"▸ grep \\=`loginRedirect\\=` — 12 matches in 4 files\"); their
result lines are buttons that visit the file at the line.  Each answer
ends with what it cost in tokens; the header line shows the session's
total and the key hints that fit (\\[ctxls-chat-keys] lists them all).
\\<ctxls-chat-buffer-mode-map>\\[ctxls-chat-refresh] shows the turns made elsewhere in the session since
it was shown (see `ctxls-chat-refresh').
\\{ctxls-chat-buffer-mode-map}"
  :lighter nil
  (setq header-line-format (and ctxls-chat-buffer-mode '(:eval (ctxls--header-line)))))

(defvar-local ctxls--chat-session nil
  "The session whose header the chat buffer shows last: an id, `new' or nil.")

(defvar-local ctxls--chat-shown-id nil
  "The id of the last stored message the chat shows for its session, or nil.
Messages after it are turns made elsewhere.")

(defvar-local ctxls--chat-shown-count nil
  "How many messages up to `ctxls--chat-shown-id' the session held, or nil.
Fewer later: some were removed elsewhere (a question asked again there).")

(defvar-local ctxls--chat-live nil
  "The part of the chat that shows a turn still running elsewhere, or nil.
A pair of markers (START . END); the next update replaces it.")

(defvar-local ctxls--title-start nil
  "Marker at the start of the current session's title in the chat buffer.")

(defvar-local ctxls--title-end nil
  "Marker at the end of the current session's title in the chat buffer.")

(defvar-local ctxls--after-tool nil
  "Non-nil when the chat buffer ends with a tool call's line.")

(defvar-local ctxls--tool-lines nil
  "The chat buffer's tool call lines by call id: markers at their starts.
The newest line of an id: a session shown again makes new ones.")

(defconst ctxls--chat-hints
  '("a ask" "w write" "r resume" "n new" "s search" "+ add file" "c context" "i insert block")
  "The key hints of the chat's header line, most wanted first.")

(defun ctxls--header-line ()
  "The chat buffer's header line: the session, then the key hints that fit.
The hints end with \"? keys\" (all the chat's keys); those that would not
fit in the chat's window are left out, so none is cut in half."
  (let* ((info (concat " ctxls · " (or ctxls--session-title "no session")
                       (let ((model (or ctxls--model (plist-get ctxls-provider :model))))
                         (if model (concat " · " model) ""))
                       (if ctxls--session-usage (concat " · " ctxls--session-usage) "")
                       (cond (ctxls--turn (if (plist-get ctxls--turn :answered) " · answering…" " · thinking…"))
                             ((eq ctxls--state 'starting) " · starting…")
                             (t ""))))
         (win (if (eq (window-buffer) (current-buffer)) (selected-window) (get-buffer-window nil t)))
         (width (1- (if win (window-width win) (frame-width))))
         (last (if ctxls--turn "C-c C-k cancel" "? keys"))
         (line (lambda (hints) (concat info "   " (string-join (append hints (list last)) "  "))))
         (hints nil))
    (unless ctxls--turn
      (cl-loop for hint in ctxls--chat-hints
               while (<= (string-width (funcall line (append hints (list hint)))) width)
               do (setq hints (append hints (list hint)))))
    (let ((full (funcall line hints)))
      (if (<= (string-width full) width) full info))))

(defun ctxls-chat-keys ()
  "Show the keys of the chat buffer."
  (interactive)
  (describe-keymap 'ctxls-chat-buffer-mode-map))

(defvar ctxls--chat nil
  "The chat buffer, once made.")

(defun ctxls--chat-buffer ()
  "The chat buffer, created when needed."
  (or (and (buffer-live-p ctxls--chat) ctxls--chat)
      (with-current-buffer (setq ctxls--chat (generate-new-buffer ctxls-chat-buffer-name))
        (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
        (ctxls-chat-buffer-mode 1)
        (setq buffer-read-only t)
        (setq-local truncate-lines nil)
        (setq-local word-wrap t)
        (buffer-disable-undo)
        ;; Come back to the chat: turns made elsewhere show, should an
        ;; update have been missed (a daemon restarted meanwhile).
        (add-hook 'window-selection-change-functions #'ctxls--chat-selected nil t)
        (current-buffer))))

(defun ctxls--show-chat ()
  "Show the chat buffer in a window without selecting it; return the buffer."
  (let ((buf (ctxls--chat-buffer)))
    (unless (get-buffer-window buf t)
      (display-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)
                            (inhibit-same-window . t))))
    buf))

(defun ctxls--chat-insert (fn)
  "Call FN at the end of the chat buffer; windows at the end follow."
  (with-current-buffer (ctxls--chat-buffer)
    (let* ((inhibit-read-only t)
           (end (point-max))
           (following (cl-remove-if-not (lambda (w) (>= (window-point w) end))
                                        (get-buffer-window-list (current-buffer) nil t)))
           (at-end (= (point) end)))
      (save-excursion
        (goto-char (point-max))
        (funcall fn))
      (when at-end (goto-char (point-max)))
      (dolist (w following)
        (set-window-point w (point-max))))))

(defun ctxls--chat-append (text)
  "Append TEXT to the chat buffer."
  (ctxls--chat-insert (lambda () (insert text))))

(defun ctxls--chat-append-prose (text)
  "Append TEXT to the chat buffer, after a blank line if it ends with a tool call."
  (with-current-buffer (ctxls--chat-buffer)
    (when ctxls--after-tool
      (setq ctxls--after-tool nil)
      (unless (string-prefix-p "\n" text)
        (setq text (concat "\n" text)))
      (when (string-prefix-p "\n\n" text)
        (setq text (substring text 1)))))
  (ctxls--chat-append text))

(defun ctxls--separator ()
  "Blank lines before a new block, unless the buffer is empty."
  (with-current-buffer (ctxls--chat-buffer)
    (cond ((= (point-min) (point-max)) "")
          ((string-suffix-p "\n\n" (buffer-substring (max (point-min) (- (point-max) 2)) (point-max))) "")
          ((eq (char-before (point-max)) ?\n) "\n")
          (t "\n\n"))))

(defun ctxls--session-header (id title)
  "Start a session block for session ID (or `new') titled TITLE."
  (let ((sep (ctxls--separator)))
    (ctxls--chat-insert
     (lambda ()
       (insert sep)
       (let ((head (point)))
         (insert "# ")
         (let ((start (point)))
           (insert (or title "New session"))
           (setq ctxls--title-start (copy-marker start)
                 ctxls--title-end (copy-marker (point))))
         (ctxls--face head (point) 'ctxls-session-heading))
       (insert "\n\n")))
    (with-current-buffer (ctxls--chat-buffer)
      (setq ctxls--chat-session id
            ctxls--chat-shown-id (if (eq id 'new) 0 nil)
            ctxls--chat-shown-count (if (eq id 'new) 0 nil))
      (ctxls--live-forget))))

(defun ctxls--face (beg end face)
  "Give BEG..END the FACE, also under font-lock (markdown-mode)."
  (add-text-properties beg end (list 'face face 'font-lock-face face)))

(defun ctxls--heading (text face)
  "TEXT with FACE, for insertion."
  (propertize text 'face face 'font-lock-face face))

(defun ctxls--question-heading ()
  "The \"## You\" heading that starts a turn, marked for `ctxls--last-turn-start'."
  (propertize "## You" 'face 'ctxls-question-heading 'font-lock-face 'ctxls-question-heading
              'ctxls-question t))

(defun ctxls--last-turn-start ()
  "Where the chat's last turn of the current session starts, or nil.
Only when the chat's last block shows the current session."
  (when (and (ctxls--live-shown-p ctxls--session-id))
    (with-current-buffer ctxls--chat
      (save-excursion
        (goto-char (point-max))
        (let ((match (text-property-search-backward 'ctxls-question t t)))
          (and match ctxls--title-start
               (> (prop-match-beginning match) ctxls--title-start)
               (prop-match-beginning match)))))))

(defun ctxls--update-header ()
  "Show the current title in the chat buffer's session header."
  (when-let ((buf (and (buffer-live-p ctxls--chat) ctxls--chat)))
    (with-current-buffer buf
      (when (memq ctxls--chat-session '(new))
        (setq ctxls--chat-session ctxls--session-id))
      (when (and ctxls--title-start (equal ctxls--chat-session ctxls--session-id)
                 ctxls--session-title)
        (let ((inhibit-read-only t))
          (save-excursion
            (goto-char ctxls--title-start)
            (delete-region ctxls--title-start ctxls--title-end)
            (insert (ctxls--heading ctxls--session-title 'ctxls-session-heading))
            (set-marker ctxls--title-end (point))))))))

(defun ctxls--status-note (status)
  "The note shown after an answer stored with STATUS, or nil.
A stopped answer is \"cancelled\"; one the daemon could not finish (it
stopped or crashed) \"interrupted\"; one still streaming elsewhere (a
turn of another editor or machine) is being answered."
  (pcase status
    ((pred (equal ctxls-protocol-status-cancelled)) "_cancelled_")
    ((pred (equal ctxls-protocol-status-interrupted)) "_interrupted: the daemon stopped before the answer was complete_")
    ((pred (equal ctxls-protocol-status-streaming)) "_answering elsewhere…_")))

(defun ctxls--count (n)
  "N with thousands separated by commas: 48,210."
  (let ((s (number-to-string (or n 0))))
    (while (string-match "\\([0-9]\\)\\([0-9]\\{3\\}\\)\\(?:,\\|\\'\\)" s)
      (setq s (replace-match "\\1,\\2" t nil s 0)))
    s))

(defun ctxls--usage-text (usage)
  "USAGE (promptTokens, completionTokens, cachedTokens) in words, or nil.
\"1,834 in (1,536 cached) · 211 out\"; nil when the provider said nothing."
  (let ((in (or (plist-get usage :promptTokens) 0))
        (out (or (plist-get usage :completionTokens) 0))
        (cached (or (plist-get usage :cachedTokens) 0)))
    (unless (and (zerop in) (zerop out))
      (format "%s in%s · %s out" (ctxls--count in)
              (if (> cached 0) (format " (%s cached)" (ctxls--count cached)) "")
              (ctxls--count out)))))

(defun ctxls--usage-add (acc usage)
  "ACC, a usage plist or nil, with USAGE added."
  (if (null usage) acc
    (list :promptTokens (+ (or (plist-get acc :promptTokens) 0) (or (plist-get usage :promptTokens) 0))
          :completionTokens (+ (or (plist-get acc :completionTokens) 0) (or (plist-get usage :completionTokens) 0))
          :cachedTokens (+ (or (plist-get acc :cachedTokens) 0) (or (plist-get usage :cachedTokens) 0)))))

(defun ctxls--usage-line (usage)
  "The note that says what a turn cost (USAGE), with its blank line, or \"\"."
  (if-let ((text (ctxls--usage-text usage)))
      (concat (ctxls--heading (concat "_tokens: " text "_") 'ctxls-note) "\n\n")
    ""))

(defun ctxls--render-message (msg results continued)
  "Insert the stored message MSG (a plist from ctxls.session.show).
RESULTS maps tool call ids to their results, for MSG's tool calls.
CONTINUED: MSG continues an answer after its tool calls' results (a
turn with tool calls is stored as an answer per round, shown as one)."
  (let ((role (plist-get msg :role))
        (content (or (plist-get msg :content) ""))
        (note (ctxls--status-note (plist-get msg :status)))
        (calls (ctxls--stored-calls msg results)))
    (when (and ctxls--after-tool (not (equal role "assistant")))
      (setq ctxls--after-tool nil)
      (insert "\n"))
    (pcase role
      ("user" (insert (ctxls--question-heading) "\n\n")
       ;; The files that went with it, as the daemon kept them.
       (when-let ((files (append (plist-get msg :files) nil)))
         (insert (ctxls--heading (format "_with %s_" (mapconcat #'ctxls--stored-file-label files ", "))
                                 'ctxls-note)
                 "\n\n"))
       (let ((start (point)))
         (insert content)
         (ctxls--buttonize-images start (point) (or (and (stringp ctxls--chat-session) ctxls--chat-session)
                                                    ctxls--session-id))
         (ctxls--buttonize-mentions start (point)))
       (insert "\n\n"))
      ("assistant"
       (unless continued
         (insert (ctxls--heading "## ctxls" 'ctxls-answer-heading) "\n\n"))
       (when (or note (not (string-empty-p content)))
         (when ctxls--after-tool
           (setq ctxls--after-tool nil)
           (insert "\n")))
       (unless (string-empty-p content)
         (insert content "\n\n"))
       (when note
         (insert (ctxls--heading note 'ctxls-note) "\n\n"))
       (dolist (c calls)
         (ctxls--tool-insert c)))
      ("system" (insert (ctxls--heading (concat "_" (ctxls--one-line content 200) "_") 'ctxls-note) "\n\n")))))

(defun ctxls--first-questions (n)
  "What a summary of the first N questions covers, as people count a conversation.
\"the first question and its answer\", \"the first 3 questions and their answers\"."
  (if (= n 1)
      "the first question and its answer"
    (format "the first %d questions and their answers" n)))

(defun ctxls--compacted-line (span &optional summary)
  "Insert the line that marks where the model's view starts, for SPAN.
SPAN is the newest summary's summaryOf: it covers the messages above.
SUMMARY, its text, is shown by a button on the line."
  (when ctxls--after-tool
    (setq ctxls--after-tool nil)
    (insert "\n"))
  (insert (ctxls--heading (format "_summarised for the model: %s; all are kept here_"
                                  (ctxls--first-questions (or (plist-get span :questions) 0)))
                          'ctxls-note))
  (when summary
    (insert " ")
    (insert-text-button "[show the summary]"
                        'action (lambda (_) (ctxls--show-summary summary))
                        'help-echo "RET: show what the model is given instead of the messages above"))
  (insert "\n\n"))

(defun ctxls--show-summary (text)
  "Show TEXT, the summary the model is given of a session's earlier turns."
  (let ((buf (get-buffer-create "*ctxls summary*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
        (insert text)
        (goto-char (point-min)))
      (setq buffer-read-only t)
      (local-set-key (kbd "q") #'quit-window))
    (display-buffer buf)))

(defun ctxls--insert-messages (messages results prev &optional span summary)
  "Insert the stored MESSAGES at point, as the chat shows them.
RESULTS maps tool call ids to their result messages; PREV is the role
of the message before the first (nil: none).  Summaries and tool
results are not shown as messages; each turn ends with what its
answers cost.  SPAN, the newest summary's summaryOf, puts the line that
marks where the model's view starts after the last message it covers,
with a button that shows SUMMARY, its text.
Return nil when that line was inserted, non-nil when it is still due."
  (let ((marked (not span))
        usage)
    (cl-flet ((flush ()
                (when usage
                  (when ctxls--after-tool
                    (setq ctxls--after-tool nil)
                    (insert "\n"))
                  (insert (ctxls--usage-line usage))
                  (setq usage nil))))
      (dolist (m messages)
        (let ((role (plist-get m :role)))
          (when (equal role "user")
            (flush)
            (when (and (not marked) (> (plist-get m :id) (plist-get span :last)))
              (ctxls--compacted-line span summary)
              (setq marked t)))
          (unless (or (plist-get m :summaryOf) (equal role "tool"))
            (ctxls--render-message m results (equal prev "tool")))
          (when (equal role "assistant")
            (setq usage (ctxls--usage-add usage (plist-get m :usage))))
          (unless (plist-get m :summaryOf)
            (setq prev role))))
      (flush))
    (when ctxls--after-tool
      (setq ctxls--after-tool nil)
      (insert "\n"))
    (and span (not marked))))

(defun ctxls--tool-results (messages)
  "The tool result messages among MESSAGES, by their call ids."
  (let ((results (make-hash-table :test #'equal)))
    (dolist (m messages)
      (when (equal (plist-get m :role) "tool")
        (puthash (plist-get m :toolCallId) m results)))
    results))

(defun ctxls--last-id (messages)
  "The largest id among MESSAGES, or 0."
  (apply #'max 0 (mapcar (lambda (m) (or (plist-get m :id) 0)) messages)))

(defun ctxls--count-upto (messages id)
  "How many of MESSAGES, summaries left out, have an id up to ID."
  (cl-count-if (lambda (m) (and (<= (plist-get m :id) id) (not (plist-get m :summaryOf)))) messages))

(defun ctxls--render-session (show &optional live)
  "Render SHOW, a ctxls.session.show result, as a new block.
Summaries are not shown as messages: a line after the last message the
newest one covers marks where the model's view of the session starts.
LIVE: a last turn still being answered (elsewhere) is shown as turns
made elsewhere are, so that its answer follows as it is stored."
  (let* ((session (plist-get show :session))
         (id (plist-get session :id))
         (all (append (plist-get show :messages) nil))
         ;; The unfinished last turn, from its question on, is left to
         ;; `ctxls--live-apply': shown as done, its answer would never come.
         (cut (and live all (not (ctxls--turn-done-p all))
                   (plist-get (car (last (cl-remove-if-not (lambda (m) (equal (plist-get m :role) "user")) all)))
                              :id)))
         (messages (if cut
                       (cl-remove-if (lambda (m) (and (>= (plist-get m :id) cut) (not (plist-get m :summaryOf)))) all)
                     all)))
    (ctxls--session-header id (plist-get session :title))
    (ctxls--chat-insert
     (lambda ()
       (let* ((newest (car (last (cl-remove-if-not (lambda (m) (plist-get m :summaryOf)) messages))))
              (span (plist-get newest :summaryOf))
              (summary (plist-get newest :content)))
         (setq ctxls--after-tool nil)
         (cond ((null all) (insert "_no messages yet_\n\n"))
               (messages
                (when (ctxls--insert-messages messages (ctxls--tool-results all) nil span summary)
                  (ctxls--compacted-line span summary)))))))
    (with-current-buffer (ctxls--chat-buffer)
      (setq ctxls--chat-shown-id (if cut (1- cut) (ctxls--last-id messages))
            ctxls--chat-shown-count (ctxls--count-upto all ctxls--chat-shown-id))
      (ctxls--live-forget))
    (if cut
        (ctxls--live-apply id show)
      (ctxls--refresh-usage id))))

;;;; Turns made elsewhere

;; Another editor or machine may add turns to the session this chat shows
;; (the daemon says so with ctxls/sessionUpdated: a PostgreSQL store's
;; daemons tell each other, a SQLite store's look every half second).
;; The chat then shows the messages stored after the last one it shows,
;; at its end: a turn still being answered there is shown as it stands and
;; replaced by the next update, until it is complete.  While a turn of
;; this Emacs streams, nothing is inserted: the update waits for its end.

(defun ctxls--live-forget ()
  "Keep the part of the chat showing a turn running elsewhere as it is."
  (when ctxls--chat-live
    (set-marker (car ctxls--chat-live) nil)
    (set-marker (cdr ctxls--chat-live) nil)
    (setq ctxls--chat-live nil)))

(defun ctxls--live-shown-p (id)
  "Non-nil when the chat buffer's last block shows session ID."
  (and id (buffer-live-p ctxls--chat)
       (equal (buffer-local-value 'ctxls--chat-session ctxls--chat) id)))

(defun ctxls--live-refresh ()
  "Show the turns made elsewhere in the current session, when the chat shows it."
  (let ((id ctxls--session-id))
    (cond
     ((not (and (ctxls--live-shown-p id) (ctxls--usable-p))))
     ((or ctxls--turn ctxls--live-settling) (setq ctxls--live-pending t))
     (ctxls--live-state (setq ctxls--live-state 'again))
     (t
      (setq ctxls--live-state 'reading)
      (ctxls--command ctxls-protocol-command-session-show (list :sessionId id)
                      (let ((announced ctxls--titles-announced))
                        (lambda (show)
                          (let ((again (eq ctxls--live-state 'again)))
                            (setq ctxls--live-state nil)
                            ;; A title announced since the read began is newer than the read's.
                            (when (= announced ctxls--titles-announced)
                              (ctxls--live-title id show))
                            (ctxls--live-apply id show)
                            (when again (ctxls--live-refresh)))))
                      (lambda (err)
                        (setq ctxls--live-state nil)
                        (ctxls--log "ctxls: the session was not read again: %s" (plist-get err :message))))))))

(defun ctxls--live-title (id show)
  "Take the title of SHOW (session ID read again) when it is not the one shown.
The daemon announces a rename made elsewhere (sessionUpdated) when it
sees the change; with the SQLite store it does not see one made within
the same look at the database as a change of its own (the end of a turn
here), so reading the session again also reads its title."
  (let ((title (plist-get (plist-get show :session) :title)))
    (when (and title (equal id ctxls--session-id) (not (equal title ctxls--session-title)))
      (puthash id title ctxls--titles)
      (setq ctxls--session-title title)
      (ctxls--update-header)
      (force-mode-line-update t))))

(defun ctxls--turn-done-p (messages)
  "Non-nil when the last turn of MESSAGES has ended (its answer is final)."
  (let ((last (car (last (cl-remove-if (lambda (m) (plist-get m :summaryOf)) messages)))))
    (and last (equal (plist-get last :role) "assistant")
         (not (equal (plist-get last :status) ctxls-protocol-status-streaming))
         (not (plist-get last :toolCalls)))))

(defun ctxls--live-apply (id show)
  "Show the messages of SHOW (session ID) stored after those the chat shows."
  (cond
   ((not (and (equal id ctxls--session-id) (ctxls--live-shown-p id))))
   ((or ctxls--turn ctxls--live-settling) (setq ctxls--live-pending t))
   (t
    (with-current-buffer (ctxls--chat-buffer)
      (let* ((messages (append (plist-get show :messages) nil))
             (shown ctxls--chat-shown-id)
             (new (and shown (cl-remove-if-not (lambda (m) (> (plist-get m :id) shown)) messages))))
        (cond
         ((null shown) (setq ctxls--chat-shown-id (ctxls--last-id messages)
                             ctxls--chat-shown-count (ctxls--count-upto messages ctxls--chat-shown-id)))
         ((and ctxls--chat-shown-count (< (ctxls--count-upto messages shown) ctxls--chat-shown-count))
          ;; Turns this chat shows were removed elsewhere (asked again
          ;; there): the session is shown again, as it is now.
          (ctxls--live-forget)
          (ctxls--chat-insert
           (lambda ()
             (insert (ctxls--separator)
                     (ctxls--heading "_the session was changed elsewhere (a question asked again): shown again below_"
                                     'ctxls-note)
                     "\n")))
          (ctxls--render-session show t))
         ((or ctxls--chat-live
              (cl-some (lambda (m) (member (plist-get m :role) '("user" "assistant"))) new))
          (let* ((before (cl-remove-if (lambda (m) (or (> (plist-get m :id) shown) (plist-get m :summaryOf)))
                                       messages))
                 (prev (plist-get (car (last before)) :role))
                 (done (ctxls--turn-done-p new))
                 (inhibit-read-only t))
            (when ctxls--chat-live
              (delete-region (car ctxls--chat-live) (cdr ctxls--chat-live)))
            (ctxls--chat-insert
             (lambda ()
               (let ((start (if ctxls--chat-live (car ctxls--chat-live) (point))))
                 (goto-char (if ctxls--chat-live (cdr ctxls--chat-live) (point-max)))
                 (unless ctxls--chat-live
                   (insert (ctxls--separator))
                   (setq start (point)))
                 (setq ctxls--after-tool nil)
                 (ctxls--insert-messages new (ctxls--tool-results messages) prev)
                 (unless (or done (equal (plist-get (car (last new)) :status) ctxls-protocol-status-streaming))
                   ;; The question, or a tool's result, before the answer.
                   (insert (ctxls--heading (ctxls--status-note ctxls-protocol-status-streaming) 'ctxls-note) "\n\n"))
                 (if done
                     (progn (ctxls--live-forget)
                            (setq ctxls--chat-shown-id (ctxls--last-id messages)
                                  ctxls--chat-shown-count (ctxls--count-upto messages ctxls--chat-shown-id)))
                   (unless ctxls--chat-live
                     (setq ctxls--chat-live (cons (copy-marker start) (copy-marker (point) t))))))))
            (when done
              (ctxls--refresh-usage id))))))))))

(defun ctxls--turn-stored (id message-id)
  "Note that this Emacs's turn in session ID stored up to MESSAGE-ID.
The session is read for how many messages that is (and, without
MESSAGE-ID, a cancelled or failed turn, for the last one).  Then an
update that came during the turn is shown."
  (let ((then (lambda (messages)
                (when (and messages (ctxls--live-shown-p id) (equal id ctxls--session-id))
                  (with-current-buffer ctxls--chat
                    (setq ctxls--chat-shown-id (max (or ctxls--chat-shown-id 0)
                                                    (if (and (numberp message-id) (> message-id 0)) message-id
                                                      (ctxls--last-id messages)))
                          ctxls--chat-shown-count (ctxls--count-upto messages ctxls--chat-shown-id))))
                (setq ctxls--live-settling nil)
                (when (and ctxls--live-pending (not ctxls--turn))
                  (setq ctxls--live-pending nil)
                  (ctxls--live-refresh))
                (ctxls--refresh-usage id))))
    (if (not (and id (ctxls--usable-p)))
        ;; Never restarts a daemon that has died: its next command does.
        (setq ctxls--live-settling nil)
      (ctxls--command ctxls-protocol-command-session-show (list :sessionId id)
                      (lambda (show) (funcall then (append (plist-get show :messages) nil)))
                      (lambda (_) (funcall then nil))))))

;;;###autoload
(defun ctxls-chat-refresh ()
  "Show the turns made elsewhere in the chat's session since it was shown.
Another editor or machine may continue the session: its turns show by
themselves, as they are made (with the local SQLite store within a
second).  This command, like coming back to the chat (its window
selected, Emacs focused, \\[ctxls-chat]), reads the session again, should
an update have been missed."
  (interactive)
  (ctxls--live-refresh))

(defun ctxls--chat-selected (win)
  "Show turns made elsewhere when the chat's window WIN is selected."
  (when (and (eq win (selected-window)) (eq (window-buffer win) ctxls--chat))
    (ctxls--live-refresh)))

(defun ctxls--on-focus-change ()
  "Show turns made elsewhere when Emacs is come back to and shows the chat."
  (when (and ctxls-mode (buffer-live-p ctxls--chat) (get-buffer-window ctxls--chat 'visible)
             (cl-some #'frame-focus-state (frame-list)))
    (ctxls--live-refresh)))

;;;; Token usage

(defun ctxls--refresh-usage (id)
  "Read what session ID's turns have cost, for the header line."
  (cond
   ((null id) (setq ctxls--session-usage nil))
   ((ctxls--usable-p)
    (ctxls--command ctxls-protocol-command-session-usage (list :sessionId id)
                    (lambda (r)
                      (when (equal id ctxls--session-id)
                        (setq ctxls--session-usage (ctxls--usage-text r))
                        (force-mode-line-update t)))
                    #'ignore))))

(defun ctxls--set-session (session)
  "Make SESSION (a plist from a result) the current one."
  (unless (equal (plist-get session :id) ctxls--session-id)
    (setq ctxls--files 'unknown ctxls--session-usage nil))
  (setq ctxls--session-id (plist-get session :id)
        ctxls--session-title (plist-get session :title)
        ctxls--session-folder (plist-get session :folder)
        ctxls--model (ctxls--session-model session))
  (force-mode-line-update t))

;;;; Tool calls

;; Each tool call of the model's is a line in the chat buffer, changed in
;; place as ctxls/toolCall reports it: "• server · tool `{args}` — status"
;; (ctxls's own tools by name).  Once it ends, what the model got back
;; follows the line, hidden: RET or TAB on the line (a button) shows it
;; ("▾") and hides it again ("▸").

(defvar ctxls-tool-button-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map button-map)
    ;; Emacs 30's `button-map' has TAB move to the next button.
    (define-key map (kbd "TAB") #'ctxls-chat-tab)
    map)
  "The keys on a tool call's line: RET and TAB show or hide its output.")

(define-button-type 'ctxls-tool
  'action #'ctxls--tool-button-toggle
  'keymap ctxls-tool-button-map
  'follow-link t
  'face nil
  'help-echo "RET or TAB: show or hide what the model got back")

(defun ctxls--tool-split-name (name)
  "The server and tool of NAME, as the model calls a tool: (SERVER . TOOL).
An MCP server's tool is mcp__SERVER__TOOL; ctxls's own have no server."
  (if (string-match "\\`mcp__\\(.+?\\)__\\(.+\\)\\'" name)
      (cons (match-string 1 name) (match-string 2 name))
    (cons "" name)))

(defun ctxls--tool-args (args)
  "ARGS, a call's JSON arguments, shortened for its line, as inline code."
  (let ((a (string-trim (replace-regexp-in-string "[ \t\n\r]+" " " (or args "")))))
    (cond ((member a '("" "{}")) "")
          (t (when (> (length a) 60)
               (setq a (concat (substring a 0 59) "…")))
             (if (string-search "`" a) (format " `` %s ``" a) (format " `%s`" a))))))

(defun ctxls--command-p (params)
  "Non-nil when the tool call PARAMS is ctxls's run_command."
  (and (string-empty-p (or (plist-get params :server) ""))
       (equal (or (plist-get params :name) (plist-get params :tool)) "run_command")))

(defun ctxls--command-label (params)
  "The command line of the run_command call PARAMS for its line, as code.
\" \\=`make test\\=`\", and \" in \\=`pkg\\=`\" when it runs elsewhere
than the workspace folder."
  (let* ((args (ignore-errors (json-parse-string (or (plist-get params :arguments) "")
                                                 :object-type 'plist :null-object nil :false-object nil)))
         (code (lambda (s)
                 (let ((a (ctxls--one-line (format "%s" s) 120)))
                   (if (string-search "`" a) (format " `` %s ``" a) (format " `%s`" a)))))
         (command (and (listp args) (plist-get args :command)))
         (cwd (and (listp args) (plist-get args :cwd))))
    (if (not (stringp command))
        (ctxls--tool-args (plist-get params :arguments))
      (concat (funcall code command)
              (if (and (stringp cwd) (not (member cwd '("" ".")))) (concat " in" (funcall code cwd)) "")))))

(defun ctxls--command-end-status (params)
  "How the ended run_command call PARAMS ended: \"exit status 2\", or nil.
Its summary, else the output's last line when it is bracketed."
  (let ((summary (plist-get params :summary))
        (out (string-trim-right (or (plist-get params :output) ""))))
    (cond ((and summary (not (string-empty-p summary))) (ctxls--one-line summary 80))
          ((string-match "\\[\\(exit status [0-9]+\\|killed by [^]\n]+\\)\\]\\'" out)
           (match-string 1 out)))))

(defun ctxls--command-face (text face)
  "TEXT marked to be shown in FACE inside a command's output block.
An overlay gives it (`ctxls--command-insert-block'): markdown-mode's
face for code blocks would hide a text property's."
  (propertize text 'ctxls-command-face face))

(defun ctxls--command-block (params)
  "The output of the run_command call PARAMS, to insert under its line.
Nil before it has any; else (TEXT . HIDDEN): TEXT fenced, its last
`ctxls-command-output-lines' lines under a note that counts those
above; HIDDEN, when they are in TEXT, their span in it (BEG . END), the
note's after it.  While the command runs, its output so far (the
daemon sends the last 4 KiB) without the lines above; at its end, the
whole output the call gave, the exit status last."
  (let* ((status (plist-get params :status))
         (running (equal status ctxls-protocol-tool-status-running))
         (raw (if running (plist-get params :progress) (plist-get params :output))))
    (when (and raw (not (string-empty-p raw))
               (not (equal status ctxls-protocol-tool-status-pending)))
      (let* ((lines (split-string (string-trim-right raw "\n") "\n"))
             ;; The daemon's tail of the output may start inside a line.
             (cut (and running (>= (string-bytes raw) 4000) (cdr lines)))
             (lines (if cut (cdr lines) lines))
             (above (max 0 (- (length lines) (max 1 ctxls-command-output-lines))))
             (tail (nthcdr above lines))
             (longest 0)
             (start 0))
        (while (string-match "`+" raw start)
          (setq longest (max longest (- (match-end 0) (match-beginning 0)))
                start (match-end 0)))
        (let* ((fence (concat (make-string (max 3 (1+ longest)) ?`) "\n"))
               (head (if running ""
                       (mapconcat (lambda (l) (concat l "\n")) (butlast lines (length tail)) "")))
               (note (cond ((> above 0)
                            (ctxls--command-face
                             (format "… %d line%s above%s\n" above (if (= above 1) "" "s")
                                     (if running (if cut " (and more before)" "")
                                       " (RET on the line shows them)"))
                             'ctxls-command-note))
                           (cut (ctxls--command-face "… more lines above\n" 'ctxls-command-note))
                           (t "")))
               (body (mapconcat (lambda (l) (concat l "\n")) tail ""))
               (last (car (last tail))))
          ;; The exit status, in the failed face when it is not 0.
          (when (and (not running) last (string-match-p "\\`\\[.*\\]\\'" last))
            (let ((b (- (length body) (length last) 1)))
              (setq body (concat (substring body 0 b)
                                 (ctxls--command-face last (if (equal status ctxls-protocol-tool-status-failed)
                                                               'ctxls-tool-failed
                                                             'ctxls-command-note))
                                 "\n"))))
          (cons (concat fence head note body fence)
                (and (not (string-empty-p head))
                     (cons (length fence) (+ (length fence) (length head))))))))))

(defun ctxls--command-insert-block (line params)
  "Insert the output of the run_command call PARAMS at point.
LINE is the marker at the start of the call's line: a hidden part's
overlay is put on the line's first character, as other calls' output.
The block's text is marked `ctxls-command-block' with the call's id."
  (let ((block (ctxls--command-block params))
        (beg (point)))
    (when block
      (insert (car block))
      (put-text-property beg (point) 'ctxls-command-block (plist-get params :id))
      (let ((pos beg))
        (while (< pos (point))
          (let ((next (next-single-property-change pos 'ctxls-command-face nil (point))))
            (when-let ((face (get-text-property pos 'ctxls-command-face)))
              (let ((ov (make-overlay pos next nil t nil)))
                (overlay-put ov 'face face)
                (overlay-put ov 'evaporate t)))
            (setq pos next))))
      (when-let ((hidden (cdr block)))
        (let ((ov (make-overlay (+ beg (car hidden)) (+ beg (cdr hidden)) nil t nil))
              (note (make-overlay (+ beg (cdr hidden)) (save-excursion (goto-char (+ beg (cdr hidden)))
                                                                      (line-beginning-position 2))
                                  nil t nil)))
          (overlay-put ov 'invisible t)
          (overlay-put ov 'evaporate t)
          (overlay-put ov 'ctxls-tool-output t)
          (overlay-put ov 'ctxls-tool-line line)
          (overlay-put ov 'ctxls-tool-note note)
          (overlay-put ov 'isearch-open-invisible
                       (lambda (ov) (ctxls--tool-show (overlay-get ov 'ctxls-tool-line) ov t)))
          (overlay-put note 'evaporate t)
          (put-text-property line (1+ line) 'ctxls-tool-overlay ov)
          ov)))))

(defun ctxls--command-update (start params)
  "Show the run_command call PARAMS again at its line, START: line and output.
The output so far is replaced in place; whether its hidden part is
shown is kept."
  (let* ((old (get-text-property start 'ctxls-tool-overlay))
         (shown (and old (not (overlay-get old 'invisible))))
         (block (ctxls--command-block params))
         (glyph (cond ((not (cdr block)) "•") (shown "▾") (t "▸"))))
    (goto-char start)
    (delete-region start (line-end-position))
    (insert (ctxls--tool-line params glyph))
    (forward-line 1)
    (when (equal (get-text-property (point) 'ctxls-command-block) (plist-get params :id))
      (let ((end (or (next-single-property-change (point) 'ctxls-command-block) (point-max))))
        (when old
          (when-let ((note (overlay-get old 'ctxls-tool-note))) (delete-overlay note))
          (delete-overlay old))
        (delete-region (point) end)))
    (let ((ov (ctxls--command-insert-block start params)))
      (when (and ov shown)
        (ctxls--tool-show start ov t)))))

(defun ctxls--plan-items (params)
  "The plan the tool call PARAMS set, if it is ctxls's update_plan: its items.
Each item is a plist (:content :status :priority); nil for another call
or arguments that are not a plan."
  (when (and (string-empty-p (or (plist-get params :server) ""))
             (equal (or (plist-get params :name) (plist-get params :tool)) "update_plan"))
    (let ((args (ignore-errors (json-parse-string (or (plist-get params :arguments) "")
                                                  :object-type 'plist :array-type 'list
                                                  :null-object nil :false-object nil))))
      (and (listp args) (plist-member args :items) (listp (plist-get args :items))
           (or (plist-get args :items) '(:empty))))))

(defun ctxls--plan-text (params)
  "The plan the ended tool call PARAMS set, as a task list, or nil.
\"- [x] done\", \"- [~] under way\", \"- [ ] to do\"; a high priority
is said after its item."
  (let ((items (and (equal (plist-get params :status) ctxls-protocol-tool-status-done)
                    (ctxls--plan-items params))))
    (cond ((null items) nil)
          ((equal items '(:empty)) "(the plan is empty)\n")
          (t (mapconcat
              (lambda (it)
                (format "- %s %s%s\n"
                        (pcase (plist-get it :status)
                          ((pred (equal ctxls-protocol-plan-status-completed)) "[x]")
                          ((pred (equal ctxls-protocol-plan-status-in-progress)) "[~]")
                          (_ "[ ]"))
                        (ctxls--one-line (format "%s" (or (plist-get it :content) "")) 500)
                        (if (equal (plist-get it :priority) ctxls-protocol-plan-priority-high) "  (high priority)" "")))
              items "")))))

(defun ctxls--tool-status-text (params)
  "The status of the tool call PARAMS, in words."
  (let ((status (plist-get params :status))
        (progress (plist-get params :progress))
        (plan (and (equal (plist-get params :status) ctxls-protocol-tool-status-done)
                   (ctxls--plan-items params))))
    (cond ((and (ctxls--command-p params)
                (member status (list ctxls-protocol-tool-status-done ctxls-protocol-tool-status-failed)))
           (let ((end (ctxls--command-end-status params)))
             (cond ((null end) status)
                   ((equal status ctxls-protocol-tool-status-failed) (concat "failed: " end))
                   (t end))))
          ((and (ctxls--command-p params) (equal status ctxls-protocol-tool-status-running))
           "running")
          (plan
           (let ((items (if (equal plan '(:empty)) nil plan)))
             (let ((done 0))
               (dolist (it items)
                 (when (equal (plist-get it :status) ctxls-protocol-plan-status-completed)
                   (setq done (1+ done))))
               (format "%d of %d done" done (length items)))))
          ((and (equal status ctxls-protocol-tool-status-done)
                (not (string-empty-p (or (plist-get params :summary) ""))))
           (ctxls--one-line (plist-get params :summary) 80))
          ((equal status ctxls-protocol-tool-status-pending) "waiting for your permission")
          ((and (equal status ctxls-protocol-tool-status-running) progress (not (string-empty-p progress)))
           (concat "running: " (ctxls--one-line progress 80)))
          (t (or status "")))))

(defun ctxls--tool-output (params)
  "What the ended tool call PARAMS gave the model, fenced, or nil."
  (let ((out (plist-get params :output)))
    (when (and out (member (plist-get params :status) (list ctxls-protocol-tool-status-done ctxls-protocol-tool-status-failed
                                                            ctxls-protocol-tool-status-declined
                                                            ctxls-protocol-tool-status-cancelled)))
      (let* ((text (if (string-empty-p out) "(no output)" (string-trim-right out "\n")))
             (longest 0)
             (start 0))
        (while (string-match "`+" text start)
          (setq longest (max longest (- (match-end 0) (match-beginning 0)))
                start (match-end 0)))
        (let ((fence (make-string (max 3 (1+ longest)) ?`)))
          (concat fence "\n" text "\n" fence "\n"))))))

(defun ctxls--tool-line (params glyph)
  "The line of the tool call PARAMS, starting with GLYPH, as a button.
A search names what it looked for: \"grep \\=`loginRedirect\\=` — 12 matches
in 4 files\"."
  (let* ((server (plist-get params :server))
         (plan (ctxls--plan-items params))
         (what (cond (plan "plan")
                     ((and server (not (string-empty-p server)))
                      (format "%s · %s" server (plist-get params :tool)))
                     (t (or (plist-get params :tool) (plist-get params :name)))))
         (args (cond
                ((ctxls--command-p params) (ctxls--command-label params))
                ((or plan (ctxls--search-p params))
                   (let ((label (ctxls--search-label (plist-get params :name) (plist-get params :arguments))))
                     (if (string-empty-p label) "" (concat " " label))))
                (t (ctxls--tool-args (plist-get params :arguments)))))
         (head (concat glyph " " what args " — "))
         (status (ctxls--tool-status-text params))
         (status-value (plist-get params :status))
         (face (cond ((equal status-value ctxls-protocol-tool-status-pending) 'ctxls-tool-pending)
                     ((equal status-value ctxls-protocol-tool-status-failed) 'ctxls-tool-failed)
                     ((member status-value (list ctxls-protocol-tool-status-declined ctxls-protocol-tool-status-cancelled))
                      'ctxls-tool-declined)
                     (t 'ctxls-tool)))
         (line (concat (ctxls--heading head 'ctxls-tool) (ctxls--heading status face))))
    (make-text-button line nil 'type 'ctxls-tool 'ctxls-tool (plist-get params :id))))

(defun ctxls--tool-insert (params)
  "Insert the line of the tool call PARAMS at point (the chat's end)."
  (let* ((command (ctxls--command-p params))
         (plan (and (not command) (ctxls--plan-text params)))
         (output (and (not plan) (not command) (ctxls--tool-output params)))
         (sep (cond ((or ctxls--after-tool (bobp)) "")
                    ((looking-back "\n\n" (max (point-min) (- (point) 2))) "")
                    ((eq (char-before) ?\n) "\n")
                    (t "\n\n"))))
    (insert sep)
    (let ((start (point-marker)))
      (insert (ctxls--tool-line params (if (or output (and command (cdr (ctxls--command-block params))))
                                           "▸" "•"))
              "\n")
      (when command
        (ctxls--command-insert-block start params))
      (when plan
        (insert plan))
      (when output
        (ctxls--tool-set-output start output params))
      (puthash (plist-get params :id) start
               (or ctxls--tool-lines (setq ctxls--tool-lines (make-hash-table :test #'equal)))))
    (setq ctxls--after-tool t)))

(defun ctxls--tool-set-output (start output &optional params)
  "Insert OUTPUT after the tool call's line at START, hidden; point after it.
PARAMS are the call's: a search's results are buttons that visit them."
  (goto-char start)
  (forward-line 1)
  (let ((beg (point)))
    (insert output)
    (when (and params (ctxls--search-p params))
      (ctxls--search-buttons beg (point) (plist-get params :name)))
    (let ((ov (make-overlay beg (point) nil t nil)))
      (overlay-put ov 'invisible t)
      (overlay-put ov 'ctxls-tool-output t)
      (overlay-put ov 'ctxls-tool-line start)
      (overlay-put ov 'isearch-open-invisible
                   (lambda (ov) (ctxls--tool-show (overlay-get ov 'ctxls-tool-line) ov t)))
      (put-text-property start (1+ start) 'ctxls-tool-overlay ov))))

(defun ctxls--tool-update (params)
  "Show the tool call PARAMS in the chat buffer: its line, new or changed."
  (ctxls--chat-insert
   (lambda ()
     (let ((start (and ctxls--tool-lines (gethash (plist-get params :id) ctxls--tool-lines))))
       (cond
        ((not (and start (marker-buffer start)))
         (ctxls--tool-insert params))
        ((ctxls--command-p params)
         (ctxls--command-update start params))
        (t
         (goto-char start)
         (let* ((ov (get-text-property start 'ctxls-tool-overlay))
                (plan (and (not ov) (ctxls--plan-text params)))
                (output (and (not ov) (not plan) (ctxls--tool-output params)))
                (glyph (cond ((and ov (not (overlay-get ov 'invisible))) "▾")
                             ((or ov output) "▸")
                             (t "•"))))
           (delete-region start (line-end-position))
           (insert (ctxls--tool-line params glyph))
           (when ov
             (put-text-property start (1+ start) 'ctxls-tool-overlay ov))
           (when plan ; the plan shown under its line, not hidden
             (forward-line 1)
             (insert plan))
           (when output
             (ctxls--tool-set-output start output params)))))))))

(defun ctxls--on-tool-call (params)
  "Show a tool call of the model's as it changes (PARAMS of ctxls/toolCall)."
  (when (or (equal (plist-get params :sessionId) ctxls--session-id)
            (and ctxls--turn (null ctxls--session-id)))
    (when ctxls--turn
      (ctxls--drop-thinking)
      (setq ctxls--turn (plist-put ctxls--turn :tool-note t)))
    (ctxls--tool-update params)))

(defun ctxls--tool-show (pos ov show)
  "SHOW (or hide) OV, the output of the tool call whose line starts at POS."
  (let ((inhibit-read-only t))
    (overlay-put ov 'invisible (not show))
    (when-let ((note (overlay-get ov 'ctxls-tool-note)))
      (overlay-put note 'invisible show))
    (save-excursion
      (goto-char pos)
      (when (memq (char-after) '(?▸ ?▾))
        (subst-char-in-region pos (1+ pos) (char-after) (if show ?▾ ?▸) t)))))

(defun ctxls--tool-button-toggle (button)
  "Show or hide the output of the tool call of BUTTON."
  (ctxls-toggle-tool-output (button-start button)))

(defun ctxls-toggle-tool-output (&optional pos)
  "Show or hide what the model got back from the tool call at POS (point)."
  (interactive)
  (let* ((start (save-excursion (goto-char (or pos (point))) (line-beginning-position)))
         (ov (get-text-property start 'ctxls-tool-overlay)))
    (if ov
        (ctxls--tool-show start ov (overlay-get ov 'invisible))
      (ctxls--say "no tool call output on this line"))))

(defun ctxls-chat-tab ()
  "On a tool call's line, show or hide its output; elsewhere, TAB as usual."
  (interactive)
  (if (get-text-property (line-beginning-position) 'ctxls-tool-overlay)
      (ctxls-toggle-tool-output)
    (let* ((ctxls-chat-buffer-mode nil)
           (cmd (key-binding (kbd "TAB"))))
      (when (commandp cmd)
        (call-interactively cmd)))))

;;;;; Searches

;; The model's searches of the workspace (ctxls's grep, find_files and
;; list_directory) name what they looked for on their line and end with
;; what they found: "▸ grep `loginRedirect` — 12 matches in 4 files".
;; Their results are grep's "path:LINE: text" lines (a match only in
;; unsaved text ends with "  (unsaved)"; context lines "path-LINE- text")
;; and find_files' paths, relative to the workspace folder (with several,
;; starting with the folder's name): each is a button that visits the
;; file at its line.

(defconst ctxls--search-tools '("grep" "find_files" "list_directory")
  "ctxls's own tools that search the workspace.")

(defface ctxls-search-location '((t :inherit link))
  "The file and line of a search's result in the chat buffer.")

(defface ctxls-search-context '((t :inherit shadow))
  "A context line of a search's results (not a match).")

(defface ctxls-search-unsaved '((t :inherit shadow :slant italic))
  "The mark of a search's match found only in a buffer's unsaved text.")

(define-button-type 'ctxls-search-result
  'action #'ctxls--search-visit
  'follow-link t
  'face nil
  'help-echo "RET or mouse-1: visit this line")

(defun ctxls--search-p (params)
  "Non-nil when the tool call PARAMS is a search of ctxls's own."
  (and (member (plist-get params :name) ctxls--search-tools)
       (member (or (plist-get params :server) "") '(""))))

(defun ctxls--search-code (s)
  "S as inline code."
  (if (string-search "`" s) (format "`` %s ``" s) (format "`%s`" s)))

(defun ctxls--search-label (name args)
  "What the search NAME with ARGS (JSON) looked for, for its line."
  (let* ((a (ignore-errors (json-parse-string (or args "") :object-type 'plist)))
         (str (lambda (k) (let ((v (plist-get a k))) (and (stringp v) (not (string-empty-p v)) v))))
         (pattern (funcall str :pattern))
         (path (funcall str :path))
         (glob (funcall str :glob)))
    (concat (cond ((equal name "list_directory") (ctxls--search-code (or path ".")))
                  (pattern (ctxls--search-code (replace-regexp-in-string "[ \t\n\r]+" " " pattern)))
                  (t ""))
            (if (and path (not (equal name "list_directory"))) (concat " in " path) "")
            (if (and glob (equal name "grep")) (format " (%s)" glob) ""))))

(defun ctxls--search-parse (line)
  "LINE of grep's results as (PATH LNUM TEXT MATCH), or nil.
MATCH is non-nil for a matching line, nil for a context line.  Of the
two forms, the one whose \"path:LINE:\" prefix ends first wins."
  (let ((m (and (string-match "\\`\\(.+?\\):\\([0-9]+\\): " line)
                (list (match-string 1 line) (match-string 2 line) (match-end 0))))
        (c (and (string-match "\\`\\(.+?\\)-\\([0-9]+\\)- " line)
                (list (match-string 1 line) (match-string 2 line) (match-end 0)))))
    (cond ((and m (or (not c) (<= (nth 2 m) (nth 2 c))))
           (list (nth 0 m) (string-to-number (nth 1 m)) (substring line (nth 2 m)) t))
          (c (list (nth 0 c) (string-to-number (nth 1 c)) (substring line (nth 2 c)) nil)))))

(defun ctxls--search-thousands (n)
  "N with thousands separators, as the daemon writes it: 12,345."
  (let ((s (number-to-string n)))
    (while (string-match "\\([0-9]\\)\\([0-9]\\{3\\}\\)\\($\\|,\\)" s)
      (setq s (replace-match "\\1,\\2\\3" t nil s)))
    s))

(defun ctxls--search-count (n one many)
  "N ONE or MANY, as the daemon says it: \"1 file\", \"1,234 files\"."
  (if (= n 1) (concat "1 " one) (concat (ctxls--search-thousands n) " " many)))

(defun ctxls--search-number (s)
  "S, digits with commas, as a number."
  (string-to-number (replace-regexp-in-string "," "" s)))

(defun ctxls--search-summary (name output)
  "What the search NAME found, read from its OUTPUT, as the daemon says it.
\"12 matches in 4 files\", \"37 files\", \"14 entries\"; results cut short
say how many there were and how many are shown; nil for an error."
  (when (and (stringp output) (not (string-prefix-p "error: " output)))
    (let ((lines (split-string (string-trim-right output "\n") "\n"))
          (more nil))
      (dolist (l lines)
        (when (and (not more) (string-match "\\`\\[\\([0-9,]+\\) more " l))
          (setq more (ctxls--search-number (match-string 1 l)))))
      (if (equal name "grep")
          (if (equal (car lines) "No matches.")
              "no matches"
            (let ((n 0) (files nil))
              (dolist (l lines)
                (let ((m (ctxls--search-parse l)))
                  (when (nth 3 m)
                    (setq n (1+ n))
                    (cl-pushnew (car m) files :test #'equal))))
              (cond ((= n 0) nil)
                    (more (format "%s (%s shown)" (ctxls--search-count (+ n more) "match" "matches")
                                  (ctxls--search-thousands n)))
                    (t (concat (ctxls--search-count n "match" "matches") " in "
                               (ctxls--search-count (length files) "file" "files"))))))
        (cond ((equal (car lines) "No files found.") "no files")
              ((equal (car lines) "(empty)") "empty")
              (t (let ((n (or (cl-position "" lines :test #'equal) (length lines)))
                       (one (if (equal name "list_directory") "entry" "file"))
                       (many (if (equal name "list_directory") "entries" "files")))
                   (if more
                       (format "%s (%s shown)" (ctxls--search-count (+ n more) one many)
                               (ctxls--search-thousands n))
                     (ctxls--search-count n one many)))))))))

(defun ctxls--search-resolve (path)
  "The file a search's result PATH names.
An absolute path as it is; with one workspace folder, under it; with
several, under the folder whose name starts it."
  (let ((roots (or ctxls--folders
                   (list (or (ctxls--project-root default-directory)
                             (directory-file-name (expand-file-name default-directory)))))))
    (cond ((file-name-absolute-p path) path)
          ((and (cdr roots) (string-match "\\`\\([^/]+\\)/?\\(.*\\)\\'" path)
                (cl-find (match-string 1 path) roots :key #'file-name-nondirectory :test #'equal))
           (let ((root (cl-find (match-string 1 path) roots :key #'file-name-nondirectory :test #'equal))
                 (rest (match-string 2 path)))
             (if (string-empty-p rest) root (expand-file-name rest root))))
          (t (expand-file-name path (car roots))))))

(defun ctxls--search-buttons (beg end name)
  "Make the results of the search NAME between BEG and END buttons.
grep's match and context lines visit their line; find_files' paths
their file.  Overlays: markdown-mode's code block faces stay below them."
  (save-excursion
    (goto-char beg)
    (let ((files t))
      (while (< (point) end)
        (let* ((bol (point))
               (eol (line-end-position))
               (line (buffer-substring-no-properties bol eol)))
          (cond
           ((equal name "grep")
            (when-let ((m (ctxls--search-parse line)))
              (let ((b (make-button bol eol 'type 'ctxls-search-result
                                    'ctxls-path (nth 0 m) 'ctxls-line (nth 1 m)
                                    'help-echo (format "RET or mouse-1: visit %s at line %d" (nth 0 m) (nth 1 m))))
                    (loc (make-overlay bol (+ bol (length (nth 0 m)) 1 (length (number-to-string (nth 1 m)))))))
                (overlay-put b 'evaporate t)
                (overlay-put loc 'evaporate t)
                (overlay-put loc 'face (if (nth 3 m) 'ctxls-search-location 'ctxls-search-context))
                (if (nth 3 m)
                    (when (string-suffix-p "  (unsaved)" line)
                      (let ((mark (make-overlay (- eol (length "(unsaved)")) eol)))
                        (overlay-put mark 'evaporate t)
                        (overlay-put mark 'face 'ctxls-search-unsaved)))
                  (let ((rest (make-overlay (overlay-end loc) eol)))
                    (overlay-put rest 'evaporate t)
                    (overlay-put rest 'face 'ctxls-search-context))))))
           ((and (equal name "find_files") files)
            (cond ((or (string-empty-p line) (equal line "No files found.")) (setq files nil))
                  ((string-prefix-p "```" line))
                  (t (let ((b (make-button bol eol 'type 'ctxls-search-result
                                           'ctxls-path line 'ctxls-line 1
                                           'help-echo (format "RET or mouse-1: visit %s" line))))
                       (overlay-put b 'evaporate t)
                       (overlay-put b 'face 'ctxls-search-location))))))
          (forward-line 1))))))

(defun ctxls--search-visit (button)
  "Visit the file and line of the search result BUTTON, in another window."
  (let ((file (ctxls--search-resolve (button-get button 'ctxls-path)))
        (line (button-get button 'ctxls-line)))
    (if (not (or (file-exists-p file) (find-buffer-visiting file)))
        (ctxls--say "%s does not exist (any more)" file)
      (pop-to-buffer (find-file-noselect file)
                     '((display-buffer-reuse-window display-buffer-use-some-window)
                       (inhibit-same-window . t)))
      (widen)
      (goto-char (point-min))
      (forward-line (1- line))
      (recenter))))

;;;;; Stored calls

(defun ctxls--stored-status (result)
  "The status of a stored tool call from its RESULT message, or nil without one."
  (pcase (and result (plist-get result :status))
    ('nil (and result ctxls-protocol-tool-status-done))
    ((pred (equal ctxls-protocol-status-declined)) ctxls-protocol-tool-status-declined)
    ((pred (equal ctxls-protocol-status-error)) ctxls-protocol-tool-status-failed)
    ((pred (equal ctxls-protocol-status-cancelled)) ctxls-protocol-tool-status-cancelled)
    (_ ctxls-protocol-tool-status-done)))

(defun ctxls--stored-calls (msg results)
  "MSG's tool calls as ctxls/toolCall params, with their RESULTS (a hash).
The calls are OpenAI's ({id, function: {name, arguments}})."
  (let (out)
    (dolist (c (append (plist-get msg :toolCalls) nil))
      (let* ((f (or (plist-get c :function) c))
             (name (or (plist-get f :name) "?"))
             (split (ctxls--tool-split-name name))
             (result (gethash (plist-get c :id) results)))
        (let ((call (list :id (plist-get c :id) :name name :server (car split) :tool (cdr split)
                          :arguments (or (plist-get f :arguments) "")
                          :status (or (ctxls--stored-status result) "no result")
                          :output (and result (plist-get result :content)))))
          ;; The summary is not stored: a search's is read from its output.
          (when (and (equal (plist-get call :status) ctxls-protocol-tool-status-done)
                     (ctxls--search-p call))
            (setq call (plist-put call :summary (ctxls--search-summary name (plist-get call :output)))))
          (push call out))))
    (nreverse out)))

;;;;; Questions in the chat

;; The daemon asks (may the model call an MCP tool, trust a workspace's
;; .mcp.json) with ctxls/question, since ctxls.el sets
;; initializationOptions.questions: the question becomes two lines at the
;; end of the chat buffer, what is asked and the keys that answer it, and
;; a notice in the echo area.  Nothing here selects a window, blocks or
;; reads a key: typing in another buffer never answers.  The keys act in
;; the chat buffer only, while a question is open (`ctxls-question-keys'):
;; y allows once (or accepts), n denies (or rejects, or does not trust);
;; a deliberate action (always in this session, trust the file, accept
;; the rest of the turn's edits) has a capital key and a confirmation.
;; M-x ctxls-answer answers from anywhere.  ctxls/questionClosed (answered
;; here or elsewhere, no answer in time, its turn cancelled) turns the
;; lines into one that says the outcome.

(defconst ctxls--question-keys
  '(("allow" . ?y) ("accept" . ?y) ("deny" . ?n) ("reject" . ?n) ("distrust" . ?n)
    ("always" . ?A) ("acceptAll" . ?A) ("trust" . ?T))
  "The key of each question action in the chat buffer.
The chat's own `a' (ask) and `r' (resume) stay theirs.")

(defconst ctxls--question-outcomes
  '(("allow" . "allowed once") ("deny" . "denied")
    ("always" . "always allowed in this session")
    ("trust" . "trusted") ("distrust" . "not trusted")
    ("accept" . "accepted") ("reject" . "rejected")
    ("acceptAll" . "accepted with the rest of the turn's edits")
    ("timeout" . "no answer in time") ("cancelled" . "cancelled with its turn")
    ("exited" . "not answered: the daemon exited"))
  "What a closed question's line says of its outcome.")

(defface ctxls-question '((t :inherit warning))
  "An open question's line in the chat buffer.")

(defface ctxls-question-keys '((t :inherit (bold font-lock-keyword-face)))
  "The line of an open question's keys in the chat buffer.")

(defface ctxls-question-closed '((t :inherit shadow))
  "A closed question's line in the chat buffer.")

(defvar ctxls--open-questions nil
  "The questions waiting for an answer, newest first.
Each is a plist (:params PARAMS :start MARKER): ctxls/question's
PARAMS, and where its lines start in the chat buffer (nil: not shown).")

(defvar ctxls--questions-asked 0
  "How many questions the daemon has asked.")

(defvar ctxls--questions-closed nil
  "The closed questions' outcomes: an alist of (ID . OUTCOME), newest first.")

(defvar ctxls-question-keys-map
  (let ((map (make-sparse-keymap)))
    (dolist (k (delete-dups (mapcar #'cdr ctxls--question-keys)))
      (define-key map (vector k) #'ctxls-question-key))
    map)
  "The keys of the open questions in the chat buffer (over the chat's own).")

(define-minor-mode ctxls-question-keys
  "The keys that answer the questions open in the chat buffer.
On while one is open: \\<ctxls-question-keys-map>y allows the call once (or accepts the
edit), n denies it (or rejects, or does not trust); A (always in this
session, accept the rest of the turn's edits) and T (trust the
workspace's .mcp.json) ask you to confirm first.  The key answers the
question point is on, else the newest that offers it.  `ctxls-answer'
answers from any buffer."
  :lighter " ctxls-asks")

(defun ctxls--question-message (params)
  "The question PARAMS asks, on one line, without the \"ctxls: \" prefix."
  (ctxls--one-line (string-remove-prefix "ctxls: " (or (plist-get params :message) "")) 2000))

(defun ctxls--question-key-line (params)
  "The line that says the keys of the question PARAMS."
  (concat "> "
          (mapconcat (lambda (a)
                       (let ((k (cdr (assoc (plist-get a :id) ctxls--question-keys))))
                         (format "[%s] %s%s" (if k (string k) "-") (downcase (plist-get a :title))
                                 (if (eq (plist-get a :deliberate) t) " (asks to confirm)" ""))))
                     (append (plist-get params :actions) nil) "  ")
          "  (or M-x ctxls-answer)"))

(defun ctxls--question-in-chat-p (params)
  "Non-nil when the question PARAMS belongs in the chat buffer's session."
  (let ((sid (plist-get params :sessionId)))
    (or (null sid) (string-empty-p sid)
        (equal sid ctxls--session-id)
        (and ctxls--turn (null ctxls--session-id)))))

(defun ctxls--question-face (beg end face)
  "Show BEG..END of the chat in FACE.
An overlay: the chat's Markdown mode fontifies its text (a \"> \" line
is a quotation to it), over any face property."
  (let ((ov (make-overlay beg end)))
    (overlay-put ov 'face face)
    (overlay-put ov 'ctxls-question-face t)
    (overlay-put ov 'evaporate t)))

(defun ctxls--question-row (q)
  "The start of the question Q's lines in the chat, or nil (not there now)."
  (let ((start (plist-get q :start)))
    (when (and start (buffer-live-p (marker-buffer start)))
      (with-current-buffer (marker-buffer start)
        (and (< start (point-max))
             (equal (get-text-property start 'ctxls-asked-id)
                    (plist-get (plist-get q :params) :id))
             (marker-position start))))))

(defun ctxls--question-sync-keys ()
  "Turn the chat's question keys on while a question is shown there, off after."
  (when (buffer-live-p ctxls--chat)
    (with-current-buffer ctxls--chat
      (let ((want (and (cl-some #'ctxls--question-row ctxls--open-questions) t)))
        (unless (eq want ctxls-question-keys)
          (ctxls-question-keys (if want 1 -1)))
        ;; Over the chat's own keys (n is a new session there).
        (unless (assq 'ctxls-question-keys minor-mode-overriding-map-alist)
          (push (cons 'ctxls-question-keys ctxls-question-keys-map) minor-mode-overriding-map-alist))))))

(defun ctxls--on-question (params)
  "Show the daemon's question PARAMS (ctxls/question) in the chat, and say it."
  (let ((id (plist-get params :id)))
    (unless (or (cl-find id ctxls--open-questions :key (lambda (q) (plist-get (plist-get q :params) :id))
                         :test #'equal)
                (assoc id ctxls--questions-closed))
      (let ((q (list :params params :start nil))
            (text (ctxls--question-message params)))
        (setq ctxls--questions-asked (1+ ctxls--questions-asked))
        (when (ctxls--question-in-chat-p params)
          ;; "thinking…" would stay above it, then leave a blank line.
          (when ctxls--turn
            (ctxls--drop-thinking))
          (ctxls--chat-insert
           (lambda ()
             (insert (cond ((bobp) "")
                           ((looking-back "\n\n" (max (point-min) (- (point) 2))) "")
                           ((eq (char-before) ?\n) "\n")
                           (t "\n\n")))
             (let ((start (point)))
               (insert "> ctxls asks: " text "\n")
               (ctxls--question-face start (point) 'ctxls-question)
               (let ((keys (point)))
                 (insert (ctxls--question-key-line params) "\n")
                 (ctxls--question-face keys (point) 'ctxls-question-keys))
               (put-text-property start (point) 'ctxls-asked-id id)
               (insert "\n")
               ;; What follows starts after the blank line, not as a tool's output.
               (setq ctxls--after-tool nil)
               (setq q (plist-put q :start (copy-marker start)))))))
        (push q ctxls--open-questions)
        (ctxls--question-sync-keys)
        ;; How to answer first: the echo area's line cuts what is too long.
        (ctxls--say "%s: %s"
                    (if (plist-get q :start)
                        (format "in the chat, %s (or M-x ctxls-answer)"
                                (mapconcat (lambda (a)
                                             (format "%c %s" (or (cdr (assoc (plist-get a :id) ctxls--question-keys)) ?-)
                                                     (plist-get a :id)))
                                           (append (plist-get params :actions) nil) ", "))
                      "answer with M-x ctxls-answer")
                    text)))))

(defun ctxls--on-question-closed (params)
  "Show the outcome of a question (PARAMS of ctxls/questionClosed)."
  (let* ((id (plist-get params :id))
         (outcome (plist-get params :outcome))
         (q (cl-find id ctxls--open-questions :key (lambda (q) (plist-get (plist-get q :params) :id))
                     :test #'equal)))
    (when q
      (setq ctxls--open-questions (delq q ctxls--open-questions))
      (push (cons id outcome) ctxls--questions-closed)
      (when (> (length ctxls--questions-closed) 100)
        (setcdr (nthcdr 99 ctxls--questions-closed) nil))
      (when-let ((start (ctxls--question-row q)))
        (with-current-buffer (marker-buffer (plist-get q :start))
          (let ((inhibit-read-only t))
            (save-excursion
              (goto-char start)
              (let ((end (or (next-single-property-change start 'ctxls-asked-id) (point-max))))
                (remove-overlays start end 'ctxls-question-face t)
                (delete-region start end)
                (insert (format "> ctxls asked: %s → %s"
                                (ctxls--question-message (plist-get q :params))
                                (or (cdr (assoc outcome ctxls--question-outcomes)) outcome))
                        "\n")
                (ctxls--question-face start (point) 'ctxls-question-closed))))))
      (set-marker (plist-get q :start) nil)
      (ctxls--question-sync-keys)
      (when (equal outcome "timeout")
        (ctxls--say "no answer within %d s: %s" (ctxls--permission-timeout)
                    (pcase (plist-get (plist-get q :params) :kind)
                      ("trust" "it is asked again next time")
                      ("review" "the edit is not applied")
                      (_ "the call did not run")))))))

(defun ctxls--question-send (q action)
  "Answer the question Q with ACTION (an action's id)."
  (ctxls--command ctxls-protocol-command-question-answer
                  (list :id (plist-get (plist-get q :params) :id) :action action)
                  #'ignore
                  (lambda (err) (ctxls--say "%s" (or (plist-get err :message) err)))))

(defun ctxls--question-at-point ()
  "The open question whose lines point is on, or nil."
  (when-let ((id (get-text-property (line-beginning-position) 'ctxls-asked-id)))
    (cl-find id ctxls--open-questions :key (lambda (q) (plist-get (plist-get q :params) :id))
             :test #'equal)))

(defun ctxls-question-key ()
  "Answer a question in the chat with the action of the key just typed.
The question point is on, else the newest shown that offers the key.  A
deliberate action asks to confirm."
  (interactive)
  (let* ((key last-command-event)
         (offers (lambda (q)
                   (cl-find-if (lambda (a) (eq (cdr (assoc (plist-get a :id) ctxls--question-keys)) key))
                               (append (plist-get (plist-get q :params) :actions) nil))))
         (here (ctxls--question-at-point))
         (q (if (and here (funcall offers here)) here
              (cl-find-if (lambda (q) (and (ctxls--question-row q) (funcall offers q)))
                          ctxls--open-questions)))
         (action (and q (funcall offers q))))
    (cond
     ((null action)
      (ctxls--say "no open question here is answered with %s" (single-key-description key)))
     ((and (eq (plist-get action :deliberate) t)
           ;; One line: a trust question's message lists every server.
           (not (y-or-n-p (format "ctxls: %s (%s)? "
                                  (plist-get action :title)
                                  (ctxls--one-line (ctxls--question-message (plist-get q :params)) 60)))))
      (ctxls--say "not answered: the question stays open"))
     (t (ctxls--question-send q (plist-get action :id))))))

;;;###autoload
(defun ctxls-answer (question action)
  "Answer one of the daemon's open questions: QUESTION's ACTION.
Interactively, pick the question and the answer with completion (a
command of its own is deliberate enough for any answer, always in this
session too).  Works from any buffer."
  (interactive
   (let (cands)
     (unless ctxls--open-questions
       (user-error "ctxls: no question is waiting for an answer"))
     (dolist (q (reverse ctxls--open-questions))
       (dolist (a (append (plist-get (plist-get q :params) :actions) nil))
         (push (cons (format "%s — %s" (plist-get a :title) (ctxls--question-message (plist-get q :params)))
                     (list q (plist-get a :id)))
               cands)))
     (setq cands (nreverse cands))
     (let ((pick (completing-read "Answer ctxls: " cands nil t)))
       (cdr (assoc pick cands)))))
  (unless (memq question ctxls--open-questions)
    (user-error "ctxls: that question is not open any more"))
  (ctxls--question-send question action))

(defun ctxls--permission-timeout ()
  "Seconds the daemon waits for the answer to a question."
  (if (and (numberp ctxls-tool-permission-timeout) (>= ctxls-tool-permission-timeout 1))
      ctxls-tool-permission-timeout
    120))

;;;;; Requests taken out of jsonrpc's hands

(defun ctxls--receive (receive conn msg)
  "Around RECEIVE (`jsonrpc-connection-receive') of CONN's message MSG.
jsonrpc.el answers a request with what its dispatcher returns, from its
process filter (Emacs 28) or a timer (Emacs 30): ctxls's
ctxls/reviewEdit is queued for `ctxls--review-next' and answered once
you decide, its ctxls/diagnostics answered by
`ctxls--diagnostics-request'."
  (let ((method (plist-get msg :method)))
    (cond
     ((not (and (eq conn ctxls--connection) (plist-get msg :id)))
      (funcall receive conn msg))
     ((equal method ctxls-protocol-server-request-review-edit)
      (ctxls--review-add conn (plist-get msg :id) (plist-get msg :params)))
     ((equal method ctxls-protocol-server-request-diagnostics)
      (ctxls--diagnostics-request conn (plist-get msg :id) (plist-get msg :params)))
     (t (funcall receive conn msg)))))

(advice-add 'jsonrpc-connection-receive :around #'ctxls--receive)

(defun ctxls-unload-function ()
  "Remove the advice on `jsonrpc-connection-receive' as ctxls is unloaded."
  (advice-remove 'jsonrpc-connection-receive #'ctxls--receive)
  nil)

;;;; The model's edits

;; The model edits files with edit_file and create_file, in the text you
;; see.  In the `ask' review mode the daemon asks with ctxls/reviewEdit
;; (initializationOptions.reviewEdits): `ctxls--receive' queues the
;; question and `ctxls--review-next' shows it from a timer (the command
;; loop) as a diff, in the *ctxls review* buffer; the answer is sent when
;; you decide.  An accepted edit comes back as workspace/applyEdit, which
;; `ctxls--apply-edit' applies to the buffer (visiting the file if needed),
;; never saving it.

(defvar ctxls--reviews nil
  "The edits waiting for review, oldest first.
Each is a plist (:conn CONN :id ID :params PARAMS :received TIME
:timer TIMER): the request ID of CONN, ctxls/reviewEdit's PARAMS.")

(defvar ctxls--review nil
  "The review shown in the *ctxls review* buffer, or nil.")

(defvar ctxls--reviewed 0
  "How many reviews have been decided (or given up).")

(defvar ctxls-review-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'ctxls-review-accept)
    (define-key map (kbd "C-c C-a") #'ctxls-review-accept-all)
    (define-key map (kbd "C-c C-k") #'ctxls-review-reject)
    (define-key map (kbd "k") #'ctxls-review-leave-out)
    ;; diff-mode's q would hide the diff and leave the daemon waiting.
    (define-key map (kbd "q") #'ctxls-review-reject)
    map)
  "Keys of the *ctxls review* buffer (over `diff-mode''s).")

(define-minor-mode ctxls-review-mode
  "The model's edit shown as a diff, for you to decide on.
\\<ctxls-review-mode-map>\\[ctxls-review-accept] accepts it: the daemon applies it to the file's buffer,
unsaved (undo takes it back).  \\[ctxls-review-accept-all] accepts it and the rest of this
turn's edits, which are then applied without asking.
\\[ctxls-review-leave-out] on a change (a hunk) leaves it out: an accept
then applies the others only.
\\[ctxls-review-reject] (or q) rejects it, and so does killing the buffer, or no
decision within `ctxls-tool-permission-timeout' seconds.  The model is
told what became of it.
\\{ctxls-review-mode-map}"
  :lighter " ctxls-review")

(defvar-local ctxls--review-of nil
  "The review this *ctxls review* buffer shows.")

(defvar-local ctxls--review-left-out 0
  "How many of the edit's changes (hunks) were left out of this review.")

(defun ctxls--review-add (conn id params)
  "Queue the review of PARAMS, request ID of CONN, and show it when its turn comes."
  (let* ((review (list :conn conn :id id :params params :received (float-time)))
         (timer (run-at-time (ctxls--permission-timeout) nil #'ctxls--review-timed-out review)))
    (setq ctxls--reviews (append ctxls--reviews (list (plist-put review :timer timer))))
    (run-at-time 0 nil #'ctxls--review-next)))

(defun ctxls--review-timed-out (review)
  "Reject REVIEW: the daemon stopped waiting for it."
  (when (memq review ctxls--reviews)
    (ctxls--say "no decision within %d s: the edit of %s is rejected"
                (ctxls--permission-timeout)
                (file-name-nondirectory (plist-get (plist-get review :params) :path)))
    (ctxls--review-decide review nil)))

(defun ctxls--review-what (params)
  "The edit PARAMS in words: \"edit main.go (+1 −1 lines)\"."
  (format "%s %s (%s)" (if (eq (plist-get params :create) t) "create" "edit")
          (file-relative-name (plist-get params :path)) (plist-get params :summary)))

(defun ctxls--review-next ()
  "Show the oldest review waiting, unless one is shown."
  (unless (or ctxls--review (null ctxls--reviews))
    (let* ((review (car ctxls--reviews))
           (params (plist-get review :params))
           (path (plist-get params :path))
           (file-buffer (find-buffer-visiting path))
           (buf (get-buffer-create "*ctxls review*")))
      (setq ctxls--review review)
      (with-current-buffer buf
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (format "The model's edit of %s, against its text now%s:\n\n"
                          (file-relative-name path)
                          (if (and file-buffer (buffer-modified-p file-buffer)) " (unsaved edits included)" ""))
                  (ctxls--review-diff params))
          (diff-mode)
          (ctxls-review-mode 1)
          ;; Over diff-mode's read-only keys (q among them), which it puts
          ;; in this list.
          (push (cons 'ctxls-review-mode ctxls-review-mode-map) minor-mode-overriding-map-alist)
          (setq buffer-read-only t)
          (setq-local ctxls--review-of review)
          (setq header-line-format
                (format " ctxls: %s   C-c C-c accept   C-c C-a accept all in this turn   C-c C-k reject   k leave a change out"
                        (replace-regexp-in-string "%" "%%" (ctxls--review-what params))))
          (add-hook 'kill-buffer-hook #'ctxls--review-killed nil t)
          (goto-char (point-min))
          (when (re-search-forward "^@@" nil t)
            (goto-char (match-beginning 0)))))
      ;; Shown, never selected: what you type goes on going where it
      ;; went (a q meant for your file would reject the edit).  Its keys
      ;; act once you go to it.
      (display-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)
                            (inhibit-same-window . t)))
      (ctxls--say "the model wants to %s: C-c C-c accept, C-c C-a accept all, C-c C-k reject (in *ctxls review*)"
                  (ctxls--review-what params)))))

(defun ctxls--review-diff (params)
  "The review PARAMS' edit as a unified diff, a hunk for each change.
The daemon's diff is one hunk from the first changed line to the last;
diff(1) makes one per change, so that each can be left out
\(`ctxls-review-leave-out').  Without diff(1), the daemon's."
  (let ((old (plist-get params :oldText))
        (new (plist-get params :newText))
        (name (file-relative-name (plist-get params :path)))
        (a (make-temp-file "ctxls-old"))
        (b (make-temp-file "ctxls-new")))
    (unwind-protect
        (or (ignore-errors
              (let ((coding-system-for-write 'utf-8-unix)
                    (coding-system-for-read 'utf-8-unix))
                (with-temp-file a (insert old))
                (with-temp-file b (insert new))
                (with-temp-buffer
                  (when (memq (call-process diff-command nil t nil "-u"
                                            "--label" (if (eq (plist-get params :create) t) "/dev/null" (concat "a/" name))
                                            "--label" (concat "b/" name) a b)
                              '(0 1))
                    (buffer-string)))))
            (plist-get params :diff))
      (delete-file a)
      (delete-file b))))

(defun ctxls--review-killed ()
  "Reject the review of the buffer being killed, unless it was decided."
  (when (and ctxls--review-of (memq ctxls--review-of ctxls--reviews))
    (ctxls--review-decide ctxls--review-of ctxls-protocol-review-decision-reject t)))

(defun ctxls--review-decide (review decision &optional killed)
  "Answer REVIEW with DECISION (nil: null), close its diff, show the next.
KILLED: its buffer is being killed already."
  (when (memq review ctxls--reviews)
    (setq ctxls--reviews (delq review ctxls--reviews)
          ctxls--reviewed (1+ ctxls--reviewed))
    (when-let ((timer (plist-get review :timer)))
      (cancel-timer timer))
    (let ((conn (plist-get review :conn)))
      (when (jsonrpc-running-p conn)
        (let ((text (and (member decision (list ctxls-protocol-review-decision-accept ctxls-protocol-review-decision-accept-all))
                         (ctxls--review-chosen-text review))))
          (jsonrpc-connection-send conn :id (plist-get review :id)
                                   :result (and decision (if text (list :decision decision :text text)
                                                           (list :decision decision)))))))
    (when (eq review ctxls--review)
      (setq ctxls--review nil)
      (let ((buf (get-buffer "*ctxls review*")))
        (when (and buf (not killed))
          (with-current-buffer buf
            (setq ctxls--review-of nil))
          (dolist (win (get-buffer-window-list buf nil t))
            (quit-restore-window win 'bury))
          (kill-buffer buf))))
    (when ctxls--reviews
      (run-at-time 0 nil #'ctxls--review-next))))

(defun ctxls--review-drop-all ()
  "Give up the reviews waiting: their turn ended."
  (dolist (review ctxls--reviews)
    (ctxls--review-decide review nil)))

(defun ctxls--review-current ()
  "The review to decide on: the one shown, else the oldest."
  (or ctxls--review (car ctxls--reviews)
      (user-error "ctxls: no edit is waiting for review")))

(defun ctxls-review-accept ()
  "Accept the edit shown: the daemon applies it to the buffer, unsaved.
The changes left out (\\[ctxls-review-leave-out]) are not applied."
  (interactive)
  (ctxls--review-decide (ctxls--review-current) ctxls-protocol-review-decision-accept))

(defun ctxls-review-accept-all ()
  "Accept the edit shown and the rest of this turn's, which are not asked."
  (interactive)
  (ctxls--review-decide (ctxls--review-current) ctxls-protocol-review-decision-accept-all))

(defun ctxls-review-leave-out ()
  "Leave the change (the diff's hunk) at point out of the edit shown.
An accept then applies the other changes only; the model is told which."
  (interactive)
  (let ((review (ctxls--review-current))
        (buf (get-buffer "*ctxls review*")))
    (unless (and buf (eq (buffer-local-value 'ctxls--review-of buf) review))
      (user-error "ctxls: go to *ctxls review* to leave a change out"))
    (with-current-buffer buf
      (save-excursion
        (beginning-of-line)
        (unless (and (looking-at "[-+ @\\]") (not (looking-at "\\(?:---\\|\\+\\+\\+\\) "))
                     (ignore-errors (diff-beginning-of-hunk) t))
          (user-error "ctxls: no change here: put point on one of the diff's hunks (@@)"))
        (let ((inhibit-read-only t)
              (beg (point)))
          (diff-end-of-hunk)
          (delete-region beg (point))))
      (setq ctxls--review-left-out (1+ ctxls--review-left-out))
      (ctxls--say "left out: %d change%s (C-c C-c applies the rest)"
                  ctxls--review-left-out (if (= ctxls--review-left-out 1) "" "s")))))

(defun ctxls--review-chosen-text (review)
  "The file's text REVIEW's accept gives, if changes were left out, else nil.
The hunks still in *ctxls review* applied to the edit's old text."
  (let ((buf (get-buffer "*ctxls review*")))
    (when (and buf (eq (buffer-local-value 'ctxls--review-of buf) review)
               (> (buffer-local-value 'ctxls--review-left-out buf) 0))
      (ctxls--apply-hunks (plist-get (plist-get review :params) :oldText)
                          (with-current-buffer buf
                            (save-excursion
                              (goto-char (point-min))
                              (if (re-search-forward "^@@" nil t)
                                  (buffer-substring-no-properties (match-beginning 0) (point-max))
                                "")))))))

(defun ctxls--apply-hunks (old hunks)
  "OLD with the unified diff HUNKS (\"@@ …\" and their lines) applied, in order."
  (let ((lines (vconcat (split-string old "\n")))
        (i 0)
        out)
    (with-temp-buffer
      (insert hunks)
      (goto-char (point-min))
      (while (re-search-forward "^@@ -\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? \\+[0-9]+\\(?:,[0-9]+\\)? @@.*$" nil t)
        (let* ((start (string-to-number (match-string 1)))
               (count (if (match-string 2) (string-to-number (match-string 2)) 1))
               (from (if (= count 0) start (1- start)))) ; the hunk's first old line, from 0
          (while (and (< i from) (< i (length lines)))
            (push (aref lines i) out)
            (setq i (1+ i)))
          (forward-line 1)
          (while (and (not (eobp)) (not (looking-at "^@@")))
            (let ((text (buffer-substring-no-properties (min (1+ (point)) (line-end-position)) (line-end-position))))
              (pcase (char-after)
                (?\s (when (< i (length lines)) (push (aref lines i) out)) (setq i (1+ i)))
                (?- (setq i (1+ i)))
                (?+ (push text out))))
            (forward-line 1)))))
    (while (< i (length lines))
      (push (aref lines i) out)
      (setq i (1+ i)))
    (string-join (nreverse out) "\n")))

(defun ctxls-review-reject ()
  "Reject the edit shown: nothing changes, and the model is told."
  (interactive)
  (ctxls--review-decide (ctxls--review-current) ctxls-protocol-review-decision-reject))

;;;###autoload
(defun ctxls-set-review-mode (mode)
  "Set how the current session's edits are reviewed: MODE is a string.
\"ask\" (the default) shows each edit as a diff for you to accept or
reject; \"auto\" applies them at once (undo takes one back); \"off\"
offers the model no edit tools, so it can only tell you what to
change.  The mode is kept with the session."
  (interactive
   (list (completing-read "Review the model's edits: "
                          (list ctxls-protocol-review-mode-ask ctxls-protocol-review-mode-auto
                                ctxls-protocol-review-mode-off)
                          nil t nil nil ctxls-protocol-review-mode-ask)))
  (unless (member mode (list ctxls-protocol-review-mode-ask ctxls-protocol-review-mode-auto
                             ctxls-protocol-review-mode-off))
    (user-error "ctxls: the review mode is ask, auto or off, not %S" mode))
  (ctxls--command ctxls-protocol-command-session-set-review-mode
                  (ctxls--plist :sessionId ctxls--session-id :mode mode)
                  (lambda (r)
                    (ctxls--set-session (plist-get r :session))
                    (ctxls--say "review mode %s: %s" mode
                                (pcase mode
                                  ("auto" "edits are applied at once (undo takes one back)")
                                  ("off" "the model cannot edit files")
                                  (_ "each edit is shown as a diff for you to accept"))))))

;;;;; Applying an edit

(defun ctxls--uri-file (uri)
  "The file name of the file:// URI."
  (decode-coding-string (url-unhex-string (string-remove-prefix "file://" uri)) 'utf-8))

(defun ctxls--lsp-point (pos)
  "The buffer position of the LSP position POS (a plist).
Its character is counted in the negotiated encoding.  Past the end of a
line is its end; past the last line, the buffer's end."
  ;; The daemon sent {Line, Character} for a while: both spellings are read.
  (let ((line (or (plist-get pos :line) (plist-get pos :Line) 0))
        (char (or (plist-get pos :character) (plist-get pos :Character) 0)))
    (save-excursion
      (save-restriction
        (widen)
        (goto-char (point-min))
        (if (> (forward-line line) 0)
            (point-max)
          (let ((eol (line-end-position))
                (n 0))
            (while (and (< n char) (< (point) eol))
              (let ((c (char-after)))
                (setq n (+ n (pcase ctxls--encoding
                               ('utf-8 (cond ((< c #x80) 1) ((< c #x800) 2) ((< c #x10000) 3) (t 4)))
                               ('utf-32 1)
                               (_ (if (> c #xFFFF) 2 1))))))
              (forward-char 1))
            (point)))))))

(defun ctxls--apply-text-edits (edits)
  "Apply the LSP TextEdits EDITS to the current buffer, as one undo step."
  (save-restriction
    (widen)
    (let ((changes (mapcar (lambda (e)
                             (let ((range (plist-get e :range)))
                               (list (copy-marker (ctxls--lsp-point (plist-get range :start)))
                                     (copy-marker (ctxls--lsp-point (plist-get range :end)) t)
                                     (or (plist-get e :newText) ""))))
                           (append edits nil))))
      (undo-boundary)
      (dolist (c changes)
        (pcase-let ((`(,beg ,end ,text) c))
          (save-excursion
            (goto-char beg)
            (delete-region beg end)
            (insert text))
          (set-marker beg nil)
          (set-marker end nil)))
      (undo-boundary))))

(defun ctxls--created-buffer (path)
  "A buffer visiting the new file PATH, not saved; its folder is made on save.
Visiting a file in a folder that does not exist yet makes a read-only
buffer (the file is not writable until then): it is made writable."
  (let ((buf (find-file-noselect path t)))
    (with-current-buffer buf
      (setq buffer-read-only nil)
      (add-hook 'before-save-hook
                (lambda () (make-directory (file-name-directory buffer-file-name) t))
                nil t))
    buf))

(defun ctxls--edit-refusal (changes)
  "Why the documentChanges CHANGES cannot be applied, or nil.
A version that is not the buffer's (a change typed since), a file not
open whose buffer has unsaved changes, a new file that exists, a
read-only buffer (or a file not writable) refuse."
  (let ((new-files nil))
    (cl-loop
     for c in changes
     for kind = (plist-get c :kind)
     thereis
     (cond
      ((equal kind "create")
       (let* ((path (ctxls--uri-file (plist-get c :uri)))
              (buf (find-buffer-visiting path))
              (opts (plist-get c :options)))
         (push path new-files)
         (and (or (file-exists-p path)
                  (and buf (or (buffer-modified-p buf) (> (buffer-size buf) 0))))
              (not (eq (plist-get opts :ignoreIfExists) t))
              (not (eq (plist-get opts :overwrite) t))
              (format "%s exists" (file-relative-name path)))))
      ((equal kind "delete")
       (let* ((path (ctxls--uri-file (plist-get c :uri)))
              (buf (find-buffer-visiting path))
              (opts (plist-get c :options)))
         (cond
          ((file-directory-p path) (format "%s is a folder" (file-relative-name path)))
          ((and (not (file-exists-p path)) (not buf) (not (eq (plist-get opts :ignoreIfNotExists) t)))
           (format "%s does not exist" (file-relative-name path)))
          ;; Text the daemon has not seen is the user's: kept.
          ((and buf (buffer-modified-p buf)
                (not (and (buffer-local-value 'ctxls--uri buf)
                          (eql (buffer-local-value 'ctxls--tick buf)
                               (with-current-buffer buf (buffer-chars-modified-tick))))))
           (format "%s changed since the edit was made" (file-relative-name path)))
          ((and (file-exists-p path) (not (file-writable-p (file-name-directory path))))
           (format "%s cannot be removed (its folder is read-only)" (file-relative-name path))))))
      (kind (format "ctxls.el does not %s files" kind))
      (t
       (let* ((doc (plist-get c :textDocument))
              (path (ctxls--uri-file (plist-get doc :uri)))
              (version (plist-get doc :version))
              (buf (find-buffer-visiting path)))
         (or
          (cond
           (version
            (if (not (and buf (buffer-local-value 'ctxls--uri buf)))
                (format "%s is not open any more" (file-relative-name path))
              (with-current-buffer buf
                (unless (and (eql ctxls--version version)
                             (eql ctxls--tick (buffer-chars-modified-tick)))
                  (format "%s changed since the edit was made (version %s, the buffer's is %s)"
                          (file-relative-name path) version ctxls--version)))))
           ((and buf (not (member path new-files)) (buffer-modified-p buf))
            (format "%s has unsaved changes the edit was not made against" (file-relative-name path))))
          (and (not (member path new-files))
               (if buf
                   (buffer-local-value 'buffer-read-only buf)
                 (and (file-exists-p path) (not (file-writable-p path))))
               (format "%s is read-only" (file-relative-name path))))))))))

(defun ctxls--remove-file (path)
  "Remove the file PATH the model created (an undo of its turn).
Its buffer is killed unasked: the daemon removes only a file that holds
the model's text, and `ctxls--edit-refusal' refused one with text typed
since."
  (when-let ((buf (find-buffer-visiting path)))
    (with-current-buffer buf
      (set-buffer-modified-p nil)
      (let ((kill-buffer-query-functions nil))
        (kill-buffer buf))))
  (when (file-exists-p path)
    (delete-file path)))

(defun ctxls--apply-edit (params)
  "Answer workspace/applyEdit (PARAMS): apply the edit to the buffers.
Every change is checked first (`ctxls--edit-refusal'); then a new file
gets a buffer (nothing is written), a file not open is visited, and the
edits go into the buffers as one undo step each, unsaved; a file to
delete (one the model created, its turn undone) is removed, its buffer
killed.  The daemon gets the changes (didChange) before the answer."
  (let* ((edit (plist-get params :edit))
         (changes (or (append (plist-get edit :documentChanges) nil)
                      (cl-loop for (uri edits) on (plist-get edit :changes) by #'cddr
                               collect (list :textDocument (list :uri (substring (symbol-name uri) 1))
                                             :edits edits))))
         (refusal (ctxls--edit-refusal changes)))
    (if refusal
        (progn (ctxls--say "refused the model's edit: %s" refusal)
               (list :applied :json-false :failureReason refusal))
      (let ((enable-local-variables :safe)
            (large-file-warning-threshold nil)
            (touched nil)
            (removed nil))
        (dolist (c changes)
          (let ((kind (plist-get c :kind)))
            (cond
             ((equal kind "delete")
              (let ((path (ctxls--uri-file (plist-get c :uri))))
                (ctxls--remove-file path)
                (setq touched (delq (find-buffer-visiting path) touched))
                (push (file-name-nondirectory path) removed)))
             ((equal kind "create")
              (push (ctxls--created-buffer (ctxls--uri-file (plist-get c :uri))) touched))
             ((null kind)
              (let* ((path (ctxls--uri-file (plist-get (plist-get c :textDocument) :uri)))
                     (buf (or (find-buffer-visiting path) (find-file-noselect path t))))
                (with-current-buffer buf
                  (ctxls--flush)
                  (ctxls--apply-text-edits (plist-get c :edits)))
                (push buf touched))))))
        (ctxls--flush)
        (setq touched (cl-remove-if-not #'buffer-live-p (delete-dups (nreverse touched))))
        (ctxls--say "%s"
                    (string-join
                     (delq nil (list (and touched
                                          (format "%s: unsaved (undo takes it back)"
                                                  (mapconcat #'buffer-name touched ", ")))
                                     (and removed
                                          (format "removed %s" (string-join (nreverse removed) ", ")))))
                     "; "))
        (list :applied t)))))

;;;;; Undoing a turn's changes

(defun ctxls--file-short (path)
  "PATH as a note names it: relative to its project's root, else abbreviated."
  (let ((root (ctxls--project-root (locate-dominating-file path #'file-directory-p))))
    (if (and root (file-in-directory-p path root))
        (file-relative-name path root)
      (abbreviate-file-name path))))

(defun ctxls--undo-text (verb result)
  "The note of an undo or redo (VERB \"undid\" or \"redid\") answered RESULT."
  (let ((restored (mapcar #'ctxls--file-short (append (plist-get result :restored) nil)))
        (left (mapcar (lambda (l)
                        (format "%s (%s)" (ctxls--file-short (plist-get l :path)) (plist-get l :reason)))
                      (append (plist-get result :left) nil))))
    (concat (if restored
                (format "%s the model's changes to %d file%s: %s" verb (length restored)
                        (if (cdr restored) "s" "") (string-join restored ", "))
              (format "%s none of the model's changes" verb))
            (if left (concat "; left: " (string-join left ", ")) ""))))

(defun ctxls--undo-note (session text)
  "Say TEXT, and append it to the chat as a note when it shows SESSION."
  (when (ctxls--live-shown-p session)
    (let ((sep (with-current-buffer ctxls--chat
                 (if ctxls--after-tool
                     (progn (setq ctxls--after-tool nil) "\n")
                   (ctxls--separator)))))
      (ctxls--chat-insert
       (lambda () (insert sep (ctxls--heading (concat "_" text "_") 'ctxls-note) "\n\n")))))
  (ctxls--say "%s" text))

(defun ctxls--undo-redo (command verb &optional from then)
  "Run the daemon's undo or redo COMMAND on the current session.
VERB (\"undid\", \"redid\") says what was done; FROM is a question's
id (undo every turn from it on).  THEN, if non-nil, is called after
the answer, an error included."
  (let ((session ctxls--session-id))
    (ctxls--command command (ctxls--plist :sessionId session :from from)
                    (lambda (r)
                      (ctxls--undo-note (or (plist-get r :sessionId) session) (ctxls--undo-text verb r))
                      (when then (funcall then)))
                    (lambda (err)
                      (ctxls--say "%s" (or (plist-get err :message) err))
                      (when then (funcall then))))))

;;;###autoload
(defun ctxls-undo ()
  "Undo the changes the model's edits made in the session's last turn.
Each turn not undone yet, newest first: the files the model edited get
their text from before the turn back, in their buffers (unsaved; a
buffer's own undo, \\[undo], takes the undo back), and the files it
created are removed, their buffers killed.  A file changed since the
turn (you typed in it) is left as it is; the note in the chat and the
echo area name it.  `ctxls-redo' makes the changes again."
  (interactive)
  (ctxls--undo-redo ctxls-protocol-command-session-undo "undid"))

;;;###autoload
(defun ctxls-redo ()
  "Make the changes of the turn undone last (`ctxls-undo') again.
A file that is not as the undo left it is left alone and named."
  (interactive)
  (ctxls--undo-redo ctxls-protocol-command-session-redo "redid"))

;;;;; A code block of the chat

(defun ctxls--block-at (pos)
  "The fenced code block of the chat buffer around POS: (TEXT BEG END), or nil.
TEXT is its lines without the fences; a fence line counts as in its block."
  (save-excursion
    (goto-char (point-min))
    (let (open run found)
      (while (and (not found) (not (eobp)))
        (when (looking-at "^ \\{0,3\\}\\(`\\{3,\\}\\|~\\{3,\\}\\)\\(.*\\)$")
          (let ((r (match-string 1)) (rest (match-string 2)))
            (cond
             ((not open) (setq open (line-beginning-position) run r))
             ((and (eq (aref r 0) (aref run 0)) (>= (length r) (length run))
                   (string-blank-p rest))
              (when (and (>= pos open) (<= pos (line-end-position)))
                (setq found (list (buffer-substring-no-properties
                                   (save-excursion (goto-char open) (forward-line 1) (point))
                                   (line-beginning-position))
                                  open (line-end-position))))
              (setq open nil)))))
        (when (and (not open) (> (line-beginning-position) pos))
          (goto-char (point-max)))
        (forward-line 1))
      found)))

(defun ctxls--file-window ()
  "The window used last, other than the selected one, that shows a file."
  (let (best)
    (dolist (w (window-list nil 'nomini))
      (when (and (not (eq w (selected-window)))
                 (buffer-local-value 'buffer-file-name (window-buffer w))
                 (or (null best) (> (window-use-time w) (window-use-time best))))
        (setq best w)))
    best))

;;;###autoload
(defun ctxls-apply-block ()
  "Put the chat's code block at point into the file shown in another window.
With point in a fenced code block of the chat buffer (a fence line
counts), its text (the fences left out) goes into the window used last
that shows a file: when that buffer's region is active (you selected
text there, then came to the chat), the block replaces the region;
otherwise it is inserted at that window's point, as yanking would.
That window is then selected, with point after the block and the mark
before it.  One undo step; the buffer is not saved."
  (interactive)
  (unless (eq (current-buffer) ctxls--chat)
    (user-error "ctxls: put point on a code block of the chat buffer first"))
  (let ((block (ctxls--block-at (point)))
        (win (ctxls--file-window)))
    (cond
     ((null block) (user-error "ctxls: point is not in a code block"))
     ((null win) (user-error "ctxls: no window shows a file: show it beside the chat")))
    (let* ((text (car block))
           (lines (length (split-string text "\n" t)))
           (buf (window-buffer win)))
      (select-window win)
      (with-current-buffer buf
        (undo-boundary)
        (if (region-active-p)
            (let ((beg (region-beginning)) (end (region-end)))
              (delete-region beg end)
              (goto-char beg)
              (ctxls--say "replaced the region of %s with the block (%d lines)" (buffer-name) lines))
          (ctxls--say "inserted the block (%d lines) into %s" lines (buffer-name)))
        (push-mark (point) t)
        (insert text)
        (deactivate-mark)
        (undo-boundary)))))

;;;; The editor's diagnostics

;; The model's diagnostics tool asks for the errors and warnings the editor
;; holds (ctxls/diagnostics, initializationOptions.diagnostics): Flymake's,
;; of every buffer visiting a file with `flymake-mode' on, whatever the
;; backend (eglot's language server, the byte compiler, checkdoc).  The
;; answer is sent from a timer, never from jsonrpc's process filter; with
;; waitMs, Flymake's diagnostics of the files asked about are looked at
;; every `ctxls--diagnostics-poll' seconds and the answer goes once they
;; differ from those of the request's arrival with every backend running
;; in those buffers reported (one backend's report alone, checkdoc's
;; before the byte compiler's, would answer with the other's old ones),
;; or when waitMs has passed.

(defconst ctxls--diagnostics-poll 0.2
  "Seconds between two looks at Flymake's diagnostics while waiting.")

(defun ctxls--diagnostic-severity (type)
  "LSP's severity of the Flymake diagnostic TYPE: 1 error ... 3 information."
  (pcase (or (get type 'flymake-category) type)
    ('flymake-error 1)
    ('flymake-warning 2)
    ('flymake-note 3)
    (_ (let ((level (get (or (get type 'flymake-category) type) 'severity)))
         (cond ((not (numberp level)) 1)
               ((>= level (warning-numeric-level :error)) 1)
               ((>= level (warning-numeric-level :warning)) 2)
               (t 3))))))

(defun ctxls--diagnostic (diag)
  "Flymake's DIAG of the current buffer as LSP's Diagnostic (a plist).
Positions in the negotiated encoding; `source' and `code' from the
language server's own diagnostic when eglot made it, else the backend."
  (let* ((data (flymake-diagnostic-data diag))
         (lsp (and (listp data) (cdr (assq 'eglot-lsp-diag data))))
         (source (or (and (listp lsp) (plist-get lsp :source))
                     (let ((b (flymake-diagnostic-backend diag)))
                       (and b (symbolp b) (symbol-name b)))))
         (code (and (listp lsp) (plist-get lsp :code)))
         (out (list :range (ctxls--range (flymake-diagnostic-beg diag) (flymake-diagnostic-end diag))
                    :severity (ctxls--diagnostic-severity (flymake-diagnostic-type diag))
                    :message (substring-no-properties (or (flymake-diagnostic-text diag) "")))))
    (when (stringp source)
      (setq out (plist-put out :source source)))
    (when (or (stringp code) (numberp code))
      (setq out (plist-put out :code code)))
    out))

(defun ctxls--buffer-diagnostics (buf)
  "BUF's Flymake diagnostics as a vector of LSP Diagnostics."
  (with-current-buffer buf
    (condition-case err
        (vconcat (mapcar #'ctxls--diagnostic (flymake-diagnostics)))
      (error (ctxls--log "diagnostics of %s: %s" (buffer-name buf) (error-message-string err))
             []))))

(defun ctxls--flymake-buffers ()
  "The live buffers visiting files with `flymake-mode' on."
  (cl-remove-if-not (lambda (b)
                      (and (buffer-local-value 'buffer-file-name b)
                           (buffer-local-value 'flymake-mode b)))
                    (and (boundp 'flymake-mode) (buffer-list))))

(defun ctxls--diagnostics-settled-p (uris)
  "Non-nil when every Flymake backend running in the buffers of URIS (a
list, or t for all) has reported since it started."
  (cl-every (lambda (b)
              (or (not (or (eq uris t)
                           (member (expand-file-name (buffer-local-value 'buffer-file-name b))
                                   (mapcar (lambda (u) (expand-file-name (ctxls--uri-file u))) uris))))
                  (with-current-buffer b
                    (cl-subsetp (flymake-running-backends) (flymake-reporting-backends)))))
            (ctxls--flymake-buffers)))

(defun ctxls--diagnostics-of (uris)
  "The answer to ctxls/diagnostics: the diagnostics of URIS (a list), or
with URIS t, of every buffer visiting a file that has some."
  (let ((bufs (ctxls--flymake-buffers)))
    (if (eq uris t)
        (vconcat (delq nil (mapcar (lambda (b)
                                     (let ((ds (ctxls--buffer-diagnostics b)))
                                       (when (> (length ds) 0)
                                         (list :uri (or (buffer-local-value 'ctxls--uri b)
                                                        (ctxls--path-uri (buffer-local-value 'buffer-file-name b)))
                                               :diagnostics ds))))
                                   bufs)))
      (vconcat (mapcar (lambda (uri)
                         (let* ((file (expand-file-name (ctxls--uri-file uri)))
                                (buf (cl-find file bufs :key (lambda (b) (expand-file-name (buffer-local-value 'buffer-file-name b)))
                                              :test #'string=)))
                           (list :uri uri :diagnostics (if buf (ctxls--buffer-diagnostics buf) []))))
                       uris)))))

(defun ctxls--diagnostics-when (params answer)
  "Call ANSWER with the answer to ctxls/diagnostics's PARAMS, from a timer.
With waitMs, once the diagnostics of the files asked about differ from
those now and their Flymake backends have all reported, or when waitMs
has passed."
  (let* ((uris (if (plist-member params :uris) (append (plist-get params :uris) nil) t))
         (wait (plist-get params :waitMs)))
    (if (not (and (numberp wait) (> wait 0)))
        (run-at-time 0 nil (lambda () (funcall answer (ctxls--diagnostics-of uris))))
      (let ((before (ctxls--diagnostics-of uris))
            (deadline (+ (float-time) (/ wait 1000.0)))
            timer)
        (setq timer
              (run-at-time ctxls--diagnostics-poll ctxls--diagnostics-poll
                           (lambda ()
                             (let ((now (ctxls--diagnostics-of uris)))
                               (when (or (and (not (equal now before)) (ctxls--diagnostics-settled-p uris))
                                         (>= (float-time) deadline))
                                 (cancel-timer timer)
                                 (funcall answer now))))))))))

(defun ctxls--diagnostics-request (conn id params)
  "Answer CONN's ctxls/diagnostics request ID with PARAMS, later."
  (ctxls--diagnostics-when params
                           (lambda (files)
                             (when (jsonrpc-running-p conn)
                               (jsonrpc-connection-send conn :id id :result files)))))

;;;; Chat turns

(defun ctxls--thinking-region ()
  "The thinking placeholder's bounds in the chat buffer, or nil."
  (with-current-buffer (ctxls--chat-buffer)
    (let ((pos (text-property-any (point-min) (point-max) 'ctxls-thinking t)))
      (when pos
        (cons pos (or (next-single-property-change pos 'ctxls-thinking) (point-max)))))))

(defun ctxls--drop-thinking ()
  "Remove the thinking placeholder."
  (when-let ((r (ctxls--thinking-region)))
    (with-current-buffer (ctxls--chat-buffer)
      (let ((inhibit-read-only t))
        (delete-region (car r) (cdr r))))))

(defun ctxls--on-progress (params)
  "Stream a $/progress report (PARAMS) into the chat buffer."
  (let ((turn ctxls--turn)
        (value (plist-get params :value)))
    (when (and turn (equal (plist-get params :token) (plist-get turn :token)))
      (pcase (plist-get value :kind)
        ("begin" (setq ctxls--turn (plist-put turn :begun t)))
        ("report"
         (let ((delta (plist-get value :delta))
               (msg (plist-get value :message))
               (usage (plist-get value :usage)))
           (when usage
             (setq turn (plist-put turn :usage usage) ctxls--turn turn))
           (when (and delta (not (string-empty-p delta)))
             (unless (plist-get turn :answered)
               (ctxls--drop-thinking)
               (setq turn (plist-put turn :answered t)
                     ctxls--turn turn))
             (ctxls--chat-append-prose delta))
           (when msg
             (if (plist-get turn :tool-note)
                 ;; The line of a tool call just shown says it already.
                 (setq turn (plist-put turn :tool-note nil) ctxls--turn turn)
               (ctxls--say "%s" msg)))))
        ("end" (ctxls--finish-turn turn (plist-get value :message)))))))

(defun ctxls--finish-turn (turn outcome &optional more)
  "End TURN with OUTCOME (\"done\", \"cancelled\", \"error: …\"), once.
MORE, Markdown, follows the outcome's line: what to do about it."
  (when (and turn (eq turn ctxls--turn))
    (setq ctxls--turn nil)
    ;; An edit still shown for review is moot once its turn has ended.
    (ctxls--review-drop-all)
    (ctxls--drop-thinking)
    (let ((note (cond ((or (null outcome) (equal outcome "done")) nil)
                      ((equal outcome "cancelled") "_cancelled_")
                      (t (format "_%s_" (ctxls--one-line outcome 300)))))
          (from (with-current-buffer (ctxls--chat-buffer) (point-max))))
      (ctxls--chat-append-prose (concat (if note
                                            (concat (if (plist-get turn :answered) "\n\n" "")
                                                    (ctxls--heading note 'ctxls-note))
                                          "")
                                        (if more (concat "\n\n" more) "")
                                        "\n\n"
                                        ;; What it cost: the last usage report.
                                        (ctxls--usage-line (plist-get turn :usage))))
      ;; What to do is read from its start: a window that follows the
      ;; chat's end shows it from the outcome's line (redisplay scrolls on
      ;; when it does not fit).
      (when more
        (with-current-buffer (ctxls--chat-buffer)
          (let ((start (save-excursion (goto-char from)
                                       (skip-chars-forward "\n")
                                       (line-beginning-position))))
            (dolist (w (get-buffer-window-list (current-buffer) nil t))
              (when (= (window-point w) (point-max))
                (set-window-start w start)))))))
    (force-mode-line-update t)))

(defun ctxls--turn-file (&optional leave-out)
  "The file that goes with a question asked now, or nil.
\"/abs/main.go\", or \"/abs/main.go:5-8\" with an active region: the
current buffer's file, else (from the chat buffer, or any buffer that
visits no file) the file buffer used last.  LEAVE-OUT (the prefix
argument of `ctxls-ask') sends none; so does `ctxls-send-active-file'
nil, unless a region is active."
  (let ((region (and (use-region-p) buffer-file-name
                     (cons (line-number-at-pos (region-beginning) t)
                           (line-number-at-pos (if (and (> (region-end) (region-beginning))
                                                        (= (char-before (region-end)) ?\n))
                                                   (1- (region-end))
                                                 (region-end))
                                               t)))))
    (unless (or leave-out (and (not ctxls-send-active-file) (not region)))
      (let ((buf (if buffer-file-name (current-buffer)
                   (cl-find-if (lambda (b) (buffer-local-value 'buffer-file-name b)) (buffer-list)))))
        (when buf
          (let ((file (expand-file-name (buffer-local-value 'buffer-file-name buf))))
            (if region
                (format "%s:%d-%d" file (car region) (cdr region))
              file)))))))

(defun ctxls--file-label (item)
  "How a turn's file ITEM (\"/abs/main.go:5-8\") is shown: \"main.go:5-8\"."
  (file-name-nondirectory item))

(defun ctxls--ask-args ()
  "Read the question for `ctxls-ask' and what goes with it (`ctxls--turn-file').
What would refuse it (a turn running, no daemon installed) is said
first: the question is not typed in vain."
  (when ctxls--turn
    (user-error "ctxls: a turn is running; M-x ctxls-cancel stops it"))
  (unless (ctxls--usable-p)
    (ctxls--program))
  (let* ((file (ctxls--turn-file current-prefix-arg))
         (with (ctxls--with-label (and file (list file)) ctxls--images))
         (prompt (if with (format "Ask ctxls (with %s): " with) "Ask ctxls: "))
         (q (ctxls--read-question prompt)))
    (when (string-blank-p q) (user-error "ctxls: nothing to ask"))
    (list q (and file (list file)))))

;;;###autoload
(defun ctxls-ask (message &optional files)
  "Ask ctxls MESSAGE; the answer streams into the chat buffer.
Interactively, the file in front of you goes with the question: the
current buffer's file (from the chat buffer, the file buffer used
last), its text as you see it, unsaved edits included; with an active
region, the region's lines (\"main.go:5-8\").  The prompt and the chat
say what goes.  With a prefix argument, or with
`ctxls-send-active-file' nil and no region, no file goes: only the
session's relevant files (the open ones stay candidates the model may
read).
FILES is a list of the files to give the model for this turn: file
names, or \"FILE:FIRST-LAST\" for lines of one.  The images attached
with `ctxls-attach-image' go with it too (the prompt names them).
At the prompt M-p and M-n walk the questions asked before
\(`ctxls-question-history'), and \"@\" then C-M-i (or TAB) completes a
workspace file's path: \"@auth/login.go\" gives the model that file too.
Emacs stays usable while the answer arrives; \\[ctxls-cancel] stops it."
  (interactive (ctxls--ask-args))
  (ctxls--ask message files))

(defun ctxls--ask (message files &optional rewind)
  "Ask MESSAGE with FILES (see `ctxls-ask').
REWIND, a question's message id, asks it again in place of that question
and everything after it: the chat's last turn gives way to the new one."
  (when ctxls--turn
    (user-error "ctxls: a turn is running; M-x ctxls-cancel stops it"))
  (unless (ctxls--usable-p)
    (ctxls--program))                   ; a missing daemon is said before anything shows
  (ctxls--key-current)                  ; a key set since the last refusal
  (let* ((token (format "ctxls-emacs-%d-%d" (emacs-pid) (cl-incf ctxls--seq)))
         (turn (list :token token :started (float-time) :answered nil))
         ;; The images attached go with a new question, not one asked again.
         (images (and (not rewind) ctxls--images)))
    (setq ctxls--turn turn
          ctxls--live-settling t)
    (deactivate-mark)
    (ctxls--show-chat)
    (when-let ((start (and rewind (ctxls--last-turn-start))))
      (with-current-buffer ctxls--chat
        (let ((inhibit-read-only t))
          (delete-region start (point-max))
          (setq ctxls--after-tool nil))))
    (with-current-buffer (ctxls--chat-buffer)
      ;; A turn made elsewhere shown as it stood stays so: this one follows.
      (ctxls--live-forget)
      (unless (and ctxls--chat-session
                   (or (eq ctxls--chat-session 'new)
                       (equal ctxls--chat-session ctxls--session-id)))
        (ctxls--session-header (or ctxls--session-id 'new) ctxls--session-title)))
    (let ((sep (ctxls--separator)))
      (ctxls--chat-insert
       (lambda ()
         (insert sep (ctxls--question-heading) "\n\n"
                 ;; The turn's file, then those the message mentions.
                 (let ((labels (append (mapcar #'ctxls--file-label files) (ctxls--mentions message files))))
                   (if labels
                       (concat (ctxls--heading (format "_with %s_" (string-join labels ", ")) 'ctxls-note)
                               "\n\n")
                     "")))
         ;; A question asked again holds its images' lines: buttons.
         (let ((start (point)))
           (insert message)
           (ctxls--buttonize-images start (point) ctxls--session-id)
           (ctxls--buttonize-mentions start (point)))
         (insert "\n\n")
         (dolist (i images)
           (let ((file (plist-get i :file)))
             (ctxls--insert-image-button (file-name-nondirectory file)
                                         (lambda () (ctxls--open-image file)) file)
             (insert "\n")))
         (when images (insert "\n"))
         (insert (ctxls--heading "## ctxls" 'ctxls-answer-heading) "\n\n")
         (insert (propertize "_thinking…_" 'ctxls-thinking t 'face 'ctxls-note 'font-lock-face 'ctxls-note)))))
    (force-mode-line-update t)
    (condition-case err
        (progn (ctxls--ask-request turn message files rewind images)
               (when images
                 (setq ctxls--images nil)
                 (ctxls--compose-refresh-header)))
      (error (ctxls--finish-turn turn (format "error: %s" (error-message-string err)))
             (setq ctxls--live-settling nil)
             (signal (car err) (cdr err))))
    nil))

;;;;; Images with the question

(defcustom ctxls-image-thumbnails t
  "Non-nil: in a graphical Emacs, the chat shows a question's images small.
Each image of a question is a button, \"[image: sources/NAME]\", that
opens it; this adds a thumbnail after the button."
  :type 'boolean)

(defcustom ctxls-image-viewer nil
  "How an image of the chat opens (its button, \"[image: …]\").
nil: in Emacs (`image-mode') when it can show images, else (a terminal)
with the desktop's opener, xdg-open or open, else its file name is said
and copied.  A string names a program run with the file's name; a
function is called with it."
  :type '(choice (const :tag "Emacs, or the desktop's opener" nil)
                 (string :tag "Program")
                 (function :tag "Function")))

(defun ctxls--open-image (file)
  "Open the image FILE (see `ctxls-image-viewer')."
  (let ((viewer (cond ((functionp ctxls-image-viewer) ctxls-image-viewer)
                      (ctxls-image-viewer)
                      ((display-graphic-p) #'find-file-other-window)
                      ((or (executable-find "xdg-open") (executable-find "open"))))))
    (cond
     ((functionp viewer) (funcall viewer file))
     (viewer
      (let ((process-connection-type nil))
        (set-process-query-on-exit-flag (start-process "ctxls image" nil viewer file) nil))
      (ctxls--say "%s opened with %s" (file-name-nondirectory file) (file-name-nondirectory viewer)))
     (t (kill-new file)
        (ctxls--say "this Emacs cannot show images; the image is %s (copied)" file)))))

(defconst ctxls--image-max-bytes (* 5 1024 1024)
  "The largest image that goes with a question, in bytes (5 MiB).")

(defconst ctxls--image-max-count 10
  "How many images go with a question at most.")

(defun ctxls--image-type (bytes)
  "The MIME type of the image whose first BYTES (unibyte) are given, or nil.
Only PNG, JPEG, GIF and WebP are known, by their magic bytes."
  (cond ((string-prefix-p "\x89PNG\r\n\x1a\n" bytes) "image/png")
        ((string-prefix-p "\xff\xd8\xff" bytes) "image/jpeg")
        ((or (string-prefix-p "GIF87a" bytes) (string-prefix-p "GIF89a" bytes)) "image/gif")
        ((and (>= (length bytes) 12) (string= (substring bytes 0 4) "RIFF")
              (string= (substring bytes 8 12) "WEBP"))
         "image/webp")))

(defun ctxls--image-data-url (file)
  "FILE's bytes as a data URL, after checking it may go with a question.
Signal a `user-error' saying why not: not a PNG, JPEG, GIF or WebP
image (by its extension and its first bytes), or over 5 MiB."
  (let ((name (file-name-nondirectory file))
        (size (file-attribute-size (file-attributes file))))
    (unless (and size (file-regular-p file) (file-readable-p file))
      (user-error "ctxls: %s is not a file that can be read" file))
    (unless (member (downcase (or (file-name-extension file) "")) '("png" "jpg" "jpeg" "gif" "webp"))
      (user-error "ctxls: %s is not an image that goes with a question: PNG, JPEG, GIF or WebP only" name))
    (when (> size ctxls--image-max-bytes)
      (user-error "ctxls: %s is %s bytes; an image may have 5 MiB (%s bytes)" name
                  (ctxls--count size) (ctxls--count ctxls--image-max-bytes)))
    (with-temp-buffer
      (set-buffer-multibyte nil)
      (insert-file-contents-literally file)
      (let* ((bytes (buffer-string))
             (type (ctxls--image-type bytes)))
        (unless type
          (user-error "ctxls: %s is not a PNG, JPEG, GIF or WebP image (its first bytes say otherwise)" name))
        (concat "data:" type ";base64," (base64-encode-string bytes t))))))

;;;###autoload
(defun ctxls-attach-image (file &optional remove)
  "Attach the image FILE to the next question (`ctxls-ask', `ctxls-compose').
PNG, JPEG, GIF or WebP, of at most 5 MiB, ten at most; anything else
is refused, saying why.  The prompt and the question buffer's header
line say what goes (\"with image: shot.png\").  The daemon keeps the
image in the session folder's sources/ and the chat shows it as a
button that opens it.  With a prefix argument (REMOVE), the images
attached so far are taken back."
  (interactive (if current-prefix-arg (list nil t)
                 (list (read-file-name "Image for the next question: " nil nil t))))
  (if remove
      (if (null ctxls--images)
          (ctxls--say "no image goes with the next question")
        (let ((names (mapconcat (lambda (i) (file-name-nondirectory (plist-get i :file))) ctxls--images ", ")))
          (setq ctxls--images nil)
          (ctxls--say "taken back: %s; no image goes with the next question" names)))
    (let ((file (expand-file-name file)))
      (when (>= (length ctxls--images) ctxls--image-max-count)
        (user-error "ctxls: %d images at most go with a question" ctxls--image-max-count))
      (setq ctxls--images (append ctxls--images (list (list :file file :url (ctxls--image-data-url file)))))
      (ctxls--say "%s goes with the next question (C-u %s takes it back)"
                  (file-name-nondirectory file)
                  (or (let ((k (where-is-internal #'ctxls-attach-image nil t))) (and k (key-description k)))
                      "M-x ctxls-attach-image"))))
  (ctxls--compose-refresh-header))

(defun ctxls--stored-file-label (item)
  "How a stored question's file ITEM (\"/abs/auth/x.go:5-8\") is shown:
relative to its workspace folder, with its lines (\"auth/x.go:5-8\")."
  (let ((lines (and (string-match ":[0-9]+\\(-[0-9]+\\)?\\'" item) (match-string 0 item))))
    (concat (ctxls--workspace-relative (if lines (substring item 0 (match-beginning 0)) item))
            lines)))

(defun ctxls--with-label (files images)
  "What goes with a question: \"main.go:5-8; image: shot.png\", or nil.
FILES are the turn's files, IMAGES plists of `ctxls--images'."
  (let ((parts (delq nil (list (and files (mapconcat #'ctxls--file-label files ", "))
                               (and images
                                    (concat (if (cdr images) "images: " "image: ")
                                            (mapconcat (lambda (i) (file-name-nondirectory (plist-get i :file)))
                                                       images ", ")))))))
    (and parts (string-join parts "; "))))

(defconst ctxls--image-line-re "^\\[image: \\(sources/[^]\n]+\\)\\]$"
  "A stored question's line naming one of its images in the session folder.")

(defun ctxls--insert-image-button (label open &optional thumbnail)
  "Insert \"[image: LABEL]\" as a button that calls OPEN.
THUMBNAIL, an image file, is shown small after it in a graphical Emacs
\(`ctxls-image-thumbnails')."
  (insert-text-button (format "[image: %s]" label)
                      'action (lambda (_) (funcall open))
                      'follow-link t
                      'help-echo (format "RET: open %s" label))
  (when-let ((image (and thumbnail ctxls-image-thumbnails (display-graphic-p) (display-images-p)
                         (file-readable-p thumbnail)
                         (ignore-errors (create-image thumbnail nil nil :max-width 240 :max-height 160)))))
    (insert " ")
    (insert-image image "[thumbnail]")))

(defun ctxls--buttonize-images (start end session)
  "Make the image lines of a question between START and END buttons.
Each \"[image: sources/NAME]\" opens NAME in SESSION's folder.  Point
ends at END (moved by the buttons)."
  (goto-char start)
  (let ((end (copy-marker end t)))
    (while (re-search-forward ctxls--image-line-re end t)
      (let* ((rel (match-string 1))
             (folder (and (equal session ctxls--session-id) ctxls--session-folder)))
        (delete-region (match-beginning 0) (match-end 0))
        (ctxls--insert-image-button rel (lambda () (ctxls--open-session-file session rel #'ctxls--open-image))
                                    (and folder (expand-file-name rel folder)))))
    (goto-char end)
    (set-marker end nil)))

;;;;; A longer question

(defvar ctxls-compose-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'ctxls-compose-send)
    (define-key map (kbd "C-c C-k") #'ctxls-compose-abort)
    (define-key map (kbd "M-p") #'ctxls-previous-question)
    (define-key map (kbd "M-n") #'ctxls-next-question)
    (define-key map (kbd "M-r") #'ctxls-search-questions)
    (set-keymap-parent map ctxls-question-input-map)
    map)
  "Keys of the *ctxls question* buffer.")

(define-minor-mode ctxls-compose-mode
  "Write a question to ctxls over several lines.
RET starts a new line; \\<ctxls-compose-mode-map>\\[ctxls-compose-send] sends the question (the answer streams into
the chat buffer), \\[ctxls-compose-abort] throws it away.  The file (or lines) shown in the
header line go with it, as with `ctxls-ask', and the images attached
\(`ctxls-attach-image').  \\[ctxls-previous-question] and \\[ctxls-next-question] bring back the questions asked
before (`ctxls-question-history'), \\[ctxls-search-questions] picks one with completion;
\\[completion-at-point] (or TAB) after \"@\"
completes a workspace file's path: \"@auth/login.go\" gives the model
that file with the question.
\\{ctxls-compose-mode-map}"
  :lighter " ctxls-question")

(defvar-local ctxls--compose-files nil
  "The files that go with the question written in this buffer.")

(defvar-local ctxls--compose-rewind nil
  "The id of the question this buffer's question replaces, or nil.")

(defvar-local ctxls--compose-edits nil
  "Non-nil when the turns this buffer's question takes back made file changes.")

(defun ctxls--compose-refresh-header ()
  "Show in the question buffer's header line what goes with the question."
  (when-let ((buf (get-buffer "*ctxls question*")))
    (with-current-buffer buf
      (when ctxls-compose-mode
        (setq header-line-format (replace-regexp-in-string
                                  "%" "%%" (ctxls--compose-header ctxls--compose-files ctxls--compose-rewind)))
        (force-mode-line-update)))))

(defun ctxls--compose-header (files &optional rewind)
  "The header line of a question buffer whose question goes with FILES.
REWIND: the question replaces the last one, and its answer.  The hint
of M-p is left out when it would not fit in the buffer's window (the
frame, before it has one), rather than cut."
  (let* ((line (concat (if rewind " ctxls: your question again, in place of the last one and its answer"
                         " ctxls: your question")
                       (let ((with (ctxls--with-label files (and (not rewind) ctxls--images))))
                         (if with (format " (with %s)" with) ""))
                       "   RET new line   C-c C-c send   C-c C-k abort"))
         (win (get-buffer-window (current-buffer)))
         (width (1- (if win (window-width win) (frame-width))))
         (full (concat line "   M-p history")))
    (if (<= (string-width full) width) full line)))

;;;###autoload
(defun ctxls-compose (&optional leave-out)
  "Write a question over several lines in a buffer of its own, then send it.
RET starts a new line, \\<ctxls-compose-mode-map>\\[ctxls-compose-send] sends, \\[ctxls-compose-abort] aborts; the header line
says so, and what goes with the question: the file in front of you, or
the lines of the active region, as with `ctxls-ask'.  With a prefix
argument (LEAVE-OUT), no file goes.  M-p and M-n bring back earlier
questions; \"@\" and C-M-i (or TAB) name another file of the workspace."
  (interactive "P")
  (ctxls--compose leave-out))

(defun ctxls--compose (leave-out &optional rewind text edits)
  "Open the question buffer (see `ctxls-compose'; LEAVE-OUT as there).
REWIND: the id of the question it replaces, TEXT: what it starts with;
EDITS: the turns it takes back made file changes (see `ctxls--rewind')."
  (let ((files (let ((f (ctxls--turn-file leave-out))) (and f (list f))))
        (buf (get-buffer-create "*ctxls question*")))
    (deactivate-mark)
    (with-current-buffer buf
      (unless (derived-mode-p 'text-mode)
        (if (fboundp 'markdown-mode) (markdown-mode) (text-mode)))
      (ctxls-compose-mode 1)
      (add-hook 'completion-at-point-functions #'ctxls-mention-completion-at-point nil t)
      (ctxls--fontify-mentions)
      (when text
        (erase-buffer)
        (insert text)
        (setq ctxls--history-index nil))
      (setq ctxls--compose-files files
            ctxls--compose-rewind rewind
            ctxls--compose-edits edits)
      (setq header-line-format (replace-regexp-in-string "%" "%%" (ctxls--compose-header files rewind))))
    (pop-to-buffer buf '((display-buffer-reuse-window display-buffer-below-selected)
                         (window-height . 8)))
    (ctxls--compose-refresh-header)     ; as wide as its window
    (ctxls--say "write your question: C-c C-c sends it, C-c C-k aborts")))

(defun ctxls-compose-send ()
  "Send the question of this buffer; the buffer goes away.
If a turn is running, the question stays here to be sent later."
  (interactive)
  (unless ctxls-compose-mode
    (user-error "ctxls: not a question buffer"))
  (let ((q (string-trim (buffer-substring-no-properties (point-min) (point-max))))
        (files ctxls--compose-files)
        (rewind ctxls--compose-rewind)
        (edits ctxls--compose-edits)
        (buf (current-buffer)))
    (when (string-empty-p q)
      (user-error "ctxls: nothing to ask; C-c C-k aborts"))
    (when ctxls--turn
      (user-error "ctxls: a turn is running; your question stays here (M-x ctxls-cancel stops the turn)"))
    (unless (ctxls--usable-p)
      (ctxls--program))                 ; a missing daemon: the question stays
    (ctxls--remember-question q)
    (ctxls--compose-close buf)
    (if rewind
        (ctxls--rewind rewind edits (lambda () (ctxls--ask q files rewind)))
      (ctxls--ask q files rewind))))

(defun ctxls--compose-close (buf)
  "Close the question buffer BUF and its window."
  (when-let ((win (get-buffer-window buf)))
    (quit-restore-window win 'kill))
  (when (buffer-live-p buf) (kill-buffer buf)))

(defun ctxls-compose-abort ()
  "Throw the question of this buffer away."
  (interactive)
  (unless ctxls-compose-mode
    (user-error "ctxls: not a question buffer"))
  (ctxls--compose-close (current-buffer))
  (ctxls--say "question aborted"))

;;;;; Asking the last question again

(defun ctxls--last-question ()
  "The current session's last question, a message plist, or signal a `user-error'.
Its :ctxls-edits is non-nil when the turns from it on made file changes
\(`ctxls--made-edits-p')."
  (ctxls--no-turn)
  (unless ctxls--session-id
    (user-error "ctxls: no current session"))
  (let* ((show (ctxls--call ctxls-protocol-command-session-show (list :sessionId ctxls--session-id)))
         (messages (append (plist-get show :messages) nil))
         (q (car (last (cl-remove-if-not (lambda (m) (equal (plist-get m :role) "user")) messages)))))
    (unless q (user-error "ctxls: the session has no question yet"))
    (plist-put q :ctxls-edits (ctxls--made-edits-p (member q messages) (ctxls--tool-results messages)))))

(defun ctxls--made-edits-p (messages results)
  "Non-nil when MESSAGES hold an applied call of the model's edit tools.
RESULTS maps tool call ids to their result messages."
  (cl-some (lambda (m)
             (cl-some (lambda (c) (and (member (plist-get c :name) '("edit_file" "create_file"))
                                       (equal (plist-get c :status) ctxls-protocol-tool-status-done)))
                      (ctxls--stored-calls m results)))
           messages))

(defun ctxls--rewind (id edits ask)
  "Call ASK to ask the question ID again, in its place.
EDITS non-nil: the turns taken back made file changes; whether to undo
them too is asked first, and a yes undoes them (`ctxls-undo' from ID on)
before ASK is called."
  (if (and edits (y-or-n-p "ctxls: also undo the file changes of the turns taken back? "))
      (ctxls--undo-redo ctxls-protocol-command-session-undo "undid" id ask)
    (funcall ask)))

;;;###autoload
(defun ctxls-regenerate (&optional leave-out)
  "Ask the session's last question again: a new answer replaces the last one.
Retries an answer that failed, or regenerates one.  The question and
its answer are removed from the session and the question is asked
again; the chat shows the new answer in place of the old.  The file in
front of you goes with it, as with `ctxls-ask'; with a prefix argument
\(LEAVE-OUT), none.  When the turns taken back changed files, you are
asked first whether to undo those changes too (see `ctxls-undo')."
  (interactive "P")
  (let ((q (ctxls--last-question))
        (file (ctxls--turn-file leave-out)))
    (ctxls--rewind (plist-get q :id) (plist-get q :ctxls-edits)
                   (lambda () (ctxls--ask (plist-get q :content) (and file (list file)) (plist-get q :id))))))

;;;###autoload
(defun ctxls-edit-question (&optional leave-out)
  "Edit the session's last question and send it again in its place.
The question opens in the question buffer (`ctxls-compose'): change
it, then \\<ctxls-compose-mode-map>\\[ctxls-compose-send] sends it; the question and its
answer are removed from the session and the chat, and the new one
takes their place.  \\[ctxls-compose-abort] leaves everything as it was.
As with `ctxls-regenerate', undoing the file changes of the turns taken
back is offered as it is sent.
With a prefix argument (LEAVE-OUT), no file goes with it."
  (interactive "P")
  (let ((q (ctxls--last-question)))
    (ctxls--compose leave-out (plist-get q :id) (plist-get q :content) (plist-get q :ctxls-edits))))

(defun ctxls--ask-request (turn message files &optional rewind images)
  "Send the chat request of TURN asking MESSAGE with FILES.
REWIND is the id of the question it replaces, or nil; IMAGES plists of
`ctxls--images'."
  (let ((token (plist-get turn :token)))
    (ctxls--request
     (intern ctxls-protocol-request-chat)
     (ctxls--plist :message message
                   :files (and files (vconcat (mapcar #'expand-file-name files)))
                   :workDoneToken token
                   :sessionId (and rewind ctxls--session-id)
                   :rewind rewind
                   :images (and images (vconcat (mapcar (lambda (i) (plist-get i :url)) images))))
     (lambda (result)
       (let ((id (plist-get result :sessionId)))
         (when (and id (not (equal id ctxls--session-id)))
           (setq ctxls--session-id id)
           (when-let ((title (gethash id ctxls--titles)))
             (setq ctxls--session-title title))
           (ctxls--update-header)
           (force-mode-line-update t)))
       ;; What the model was given: none, when none or turned off.
       (ctxls--show-instructions (plist-get result :instructions))
       (ctxls--finish-turn
        turn (pcase (plist-get result :finishReason)
               ("length" "the answer was cut at the output limit")
               ("error" "error: the turn failed (see *ctxls log*)")
               ("cancelled" "cancelled")
               (_ "done")))
       (ctxls--turn-stored (plist-get result :sessionId) (plist-get result :messageId)))
     (lambda (err)
       (let ((kind (ctxls--error-kind err))
             more)
         (ctxls--finish-turn
          turn (cond ((equal kind ctxls-protocol-error-cancelled) "cancelled")
                     ((equal kind ctxls-protocol-error-no-provider)
                      ;; The daemon's words name other editors' settings
                      ;; (they are in *ctxls log*): say Emacs's
                      ;; (ctxls-setup.el), once in the echo area.
                      (setq ctxls--key-recheck t)
                      (let ((words (ctxls--no-provider-words (or (plist-get err :message) ""))))
                        (ctxls--say "%s" (plist-get words :notice))
                        (setq more (plist-get words :more))
                        (plist-get words :chat)))
                     (t (format "error: %s" (plist-get err :message))))
          more))
       (ctxls--turn-stored ctxls--session-id nil))
     ;; A turn takes as long as it takes: no timeout.
     'never)))

(defun ctxls--error-kind (err)
  "The kind of ERR, an error the daemon answered with (its data's kind).
The package decides on it, never on the message, which is for people."
  (let ((data (plist-get err :data)))
    (and (listp data) (plist-get data :kind))))

;;;###autoload
(defun ctxls-cancel ()
  "Stop the running chat turn; the partial answer is kept."
  (interactive)
  (if (not (and ctxls--turn (ctxls--live-p)))
      (ctxls--say "no turn is running")
    (jsonrpc-notify ctxls--connection 'window/workDoneProgress/cancel
                    (list :token (plist-get ctxls--turn :token)))))

;;;; Sessions

(defun ctxls--no-turn ()
  "Signal a `user-error' if a turn is running."
  (when ctxls--turn
    (user-error "ctxls: a turn is running; M-x ctxls-cancel stops it first")))

;;;###autoload
(defun ctxls-new-session (&optional title)
  "Start a new session, optionally named TITLE."
  (interactive)
  (ctxls--no-turn)
  (ctxls--command ctxls-protocol-command-session-new (and title (list :title title))
                  (lambda (r)
                    (ctxls--set-session (plist-get r :session))
                    (ctxls--session-header ctxls--session-id ctxls--session-title)
                    (with-current-buffer (ctxls--chat-buffer)
                      (setq ctxls--chat-shown-id 0 ctxls--chat-shown-count 0))
                    (ctxls--show-chat)
                    (ctxls--say "new session"))))

(defun ctxls--open-session (id)
  "Resume session ID and render its history in the chat buffer."
  (ctxls--command ctxls-protocol-command-session-resume (list :sessionId id)
                  (lambda (r)
                    (ctxls--set-session (plist-get r :session))
                    (ctxls--command ctxls-protocol-command-session-show (list :sessionId id)
                                    (lambda (show)
                                      (ctxls--render-session show t)
                                      (ctxls--show-chat))))))

(defun ctxls--ago (at)
  "How long ago the RFC 3339 time AT was: \"just now\", \"5 min ago\"..."
  (let ((secs (condition-case nil
                  (float-time (time-subtract nil (parse-iso8601-time-string at)))
                (error nil))))
    (cond ((null secs) (or at "?"))
          ((< secs 60) "just now")
          ((< secs 3600) (format "%d min ago" (/ secs 60)))
          ((< secs 86400) (format "%d h ago" (/ secs 3600)))
          ((< secs (* 30 86400)) (format "%d days ago" (/ secs 86400)))
          (t (substring at 0 (min 10 (length at)))))))

(defun ctxls--session-label (s)
  "A completion label for the session summary S.
Its title, then its first question unless the title is that question
(what tells two sessions of one title apart), how long ago it was used
and how many questions it holds: \"Login bug — why does it redirect?  (5
min ago, 3 questions)\"."
  (let* ((n (or (plist-get s :questions) 0))
         (title (or (plist-get s :title) ""))
         (first (ctxls--one-line (plist-get s :firstQuestion) 60)))
    (format "%s%s  (%s, %d question%s)" title
            (if (or (string-empty-p first) (string-prefix-p (string-remove-suffix "…" first) title)
                    (string-prefix-p (string-remove-suffix "…" title) first))
                ""
              (concat " — " first))
            (ctxls--ago (plist-get s :updatedAt))
            n (if (= n 1) "" "s"))))

(defun ctxls--in-order (table)
  "A completion table of the alist TABLE that keeps its order when shown.
Completion UIs (the *Completions* buffer, icomplete, fido) sort
alphabetically unless the table says otherwise."
  (lambda (string pred action)
    (if (eq action 'metadata)
        '(metadata (display-sort-function . identity) (cycle-sort-function . identity))
      (complete-with-action action table string pred))))

(defun ctxls--pick-session (prompt)
  "Read a stored session with PROMPT (the most recent is the default).
The sessions are offered most recently updated first, each with how
long ago and its message count; two that would read the same get the
end of their ids.  Return its summary plist, or nil when there are none."
  (let* ((sessions (append (plist-get (ctxls--call ctxls-protocol-command-session-list
                                                   (list :limit 100))
                                      :sessions)
                           nil))
         (labels (mapcar #'ctxls--session-label sessions))
         (table (cl-mapcar (lambda (s label)
                             (cons (if (> (cl-count label labels :test #'equal) 1)
                                       (let ((id (plist-get s :id)))
                                         (format "%s [%s]" label (substring id (max 0 (- (length id) 6)))))
                                     label)
                                   s))
                           sessions labels)))
    (if (null sessions)
        (progn (ctxls--say "no sessions yet") nil)
      (cdr (assoc (completing-read prompt (ctxls--in-order table) nil t nil nil (caar table)) table)))))

;;;###autoload
(defun ctxls-resume (session-id)
  "Make the stored session SESSION-ID current and show its history.
Interactively, pick the session (RET takes the most recent)."
  (interactive (progn (ctxls--no-turn)
                      (list (plist-get (ctxls--pick-session "Resume session: ") :id))))
  (when session-id
    (ctxls--open-session session-id)))

;;;###autoload
(defun ctxls-search (query)
  "Search the sessions' titles and messages for QUERY; resume the hit picked."
  (interactive (list (read-string "Search sessions: ")))
  (ctxls--no-turn)
  (let* ((hits (append (plist-get (ctxls--call ctxls-protocol-command-session-search
                                               (list :query query :limit 30))
                                  :hits)
                       nil))
         (table (cl-loop for h in hits for i from 1
                         collect (cons (format "%d. %s: %s" i (plist-get h :title)
                                               (ctxls--one-line (plist-get h :snippet) 80))
                                       h))))
    (if (null hits)
        (ctxls--say "no session matches %S" query)
      (let ((choice (completing-read "Resume: " (ctxls--in-order table) nil t nil nil (caar table))))
        (ctxls--open-session (plist-get (cdr (assoc choice table)) :sessionId))))))

;;;###autoload
(defun ctxls-rename-session (title)
  "Rename the current session to TITLE.
Interactively, the prompt starts empty: what you type is the new
title; M-n brings the current one back to edit, and RET alone keeps it."
  (interactive (list (let ((title (read-string (format-prompt "New title" ctxls--session-title)
                                               nil nil ctxls--session-title)))
                       (if (string-blank-p title) (user-error "ctxls: a title cannot be empty") title))))
  (ctxls--command ctxls-protocol-command-session-rename (ctxls--plist :sessionId ctxls--session-id :title title)
                  (lambda (r) (ctxls--take-title (plist-get r :session)))))

;;;###autoload
(defun ctxls-export (&optional json)
  "Write the current session as Markdown into its folder; offer to open it.
With a prefix argument (JSON non-nil), as JSON."
  (interactive "P")
  (unless ctxls--session-id
    (user-error "ctxls: no current session"))
  ;; Answered at once (the daemon writes one file); the question that
  ;; follows belongs to this command (keyboard macros, C-g).
  (let ((path (plist-get (ctxls--call ctxls-protocol-command-session-export
                                      (list :sessionId ctxls--session-id :format (if json "json" "markdown")))
                         :path)))
    (if (y-or-n-p (format "Exported the session to %s; open it? " (abbreviate-file-name path)))
        (find-file path)
      (ctxls--say "exported the session to %s" path))))

(defun ctxls--session-model (session)
  "The model SESSION (a plist from a result) uses: its own, else the provider's."
  (or (plist-get (plist-get session :meta) :model)
      (plist-get ctxls-provider :model)))

;;;###autoload
(defun ctxls-set-model (model &optional default)
  "Make the current session's turns use MODEL (a new session if none).
Interactively, pick one of the provider's models (ctxls.models.list),
or type any name; the current model is the default.  An empty MODEL
goes back to the provider's `:model'.
With a prefix argument (\\[universal-argument] \\[ctxls-set-model]), DEFAULT:
MODEL is also the model of every session made from then on, in every
Emacs and editor on this data directory, after restarts too (the
daemon keeps it in its preferences); sessions made before keep theirs.
The prompt says which: \"Model for this session\" or \"Model for this
and new sessions\"."
  (interactive
   (let* ((r (ctxls--call ctxls-protocol-command-models-list
                          (ctxls--plist :sessionId ctxls--session-id)))
          (models (append (plist-get r :models) nil))
          (current (plist-get r :current))
          (default (and current-prefix-arg t)))
     (list (completing-read (format-prompt (if default "Model for this and new sessions"
                                             "Model for this session (C-u: new ones too)")
                                           current)
                            models nil nil nil nil current)
           default)))
  (ctxls--command ctxls-protocol-command-session-set-model
                  (ctxls--plist :sessionId ctxls--session-id :model model :default default)
                  (lambda (r)
                    (let ((session (plist-get r :session)))
                      (when (or (null ctxls--session-id) (equal (plist-get session :id) ctxls--session-id))
                        (unless ctxls--session-id
                          (ctxls--set-session session)
                          (ctxls--session-header ctxls--session-id ctxls--session-title)
                          (with-current-buffer (ctxls--chat-buffer)
                            (setq ctxls--chat-shown-id 0 ctxls--chat-shown-count 0))
                          (ctxls--show-chat))
                        (setq ctxls--model (ctxls--session-model session))
                        (force-mode-line-update t))
                      (ctxls--say (if default "this session's model is %s, and new sessions' too"
                                    "the session's model is %s")
                                  (ctxls--session-model session))))))

;;;###autoload
(defun ctxls-regenerate-title ()
  "Ask the model for a new title for the current session."
  (interactive)
  (ctxls--command ctxls-protocol-command-session-regenerate-title (ctxls--plist :sessionId ctxls--session-id)
                  (lambda (r) (ctxls--take-title (plist-get r :session)))))

(defun ctxls--take-title (session)
  "Take the title and folder of SESSION (a rename's result) if it is current.
Only those: the rest of the result may be older than what a command sent
after the rename already set (its answers can come in either order; the
model chosen just after a rename was put back to the old one)."
  (when (equal (plist-get session :id) ctxls--session-id)
    (setq ctxls--session-title (plist-get session :title)
          ctxls--session-folder (plist-get session :folder))
    (ctxls--update-header)
    (force-mode-line-update t)))

;;;###autoload
(defun ctxls-compact ()
  "Have the model summarise the current session's turns but the newest.
From the next turn on the model is given the summary instead of them;
every message stays stored and shown, and the chat buffer marks where
the model's view now starts."
  (interactive)
  (ctxls--no-turn)
  (unless ctxls--session-id
    (user-error "ctxls: no current session"))
  (let ((id ctxls--session-id))
    (ctxls--say "summarising the session's earlier turns for the model…")
    (ctxls--command ctxls-protocol-command-session-compact (list :sessionId id)
                    (lambda (r)
                      (let ((questions (or (plist-get (plist-get (plist-get r :summary) :summaryOf) :questions) 0)))
                        ;; Said once the chat shows the mark it speaks of.
                        (ctxls--command ctxls-protocol-command-session-show (list :sessionId id)
                                        (lambda (show)
                                          (ctxls--render-session show)
                                          (ctxls--show-chat)
                                          ;; One line of an 80-column echo area; the
                                          ;; mark in the chat says all are kept.
                                          (ctxls--say "summarised for the model: %s"
                                                      (ctxls--first-questions questions)))))))))

;;;###autoload
(defun ctxls-delete-session (session)
  "Delete SESSION (a summary plist), its messages and folder, after confirming.
Deleting the current session makes the most recent remaining one
current, its history shown in the chat."
  (interactive (progn (ctxls--no-turn) (list (ctxls--pick-session "Delete session: "))))
  (when (and session (yes-or-no-p (format "Delete session %S and its folder? " (plist-get session :title))))
    (ctxls--command ctxls-protocol-command-session-delete (list :sessionId (plist-get session :id))
                    (lambda (_)
                      (if (not (equal (plist-get session :id) ctxls--session-id))
                          (ctxls--say "deleted %s" (plist-get session :title))
                        (setq ctxls--session-id nil ctxls--session-title nil ctxls--session-folder nil
                              ctxls--session-usage nil ctxls--model nil)
                        (ctxls--command ctxls-protocol-command-session-list (list :limit 1)
                                        (lambda (r)
                                          (let ((next (car (append (plist-get r :sessions) nil))))
                                            (if (null next)
                                                (ctxls--say "deleted %s; no session is left" (plist-get session :title))
                                              (ctxls--open-session (plist-get next :id))
                                              (ctxls--say "deleted %s; now in %s" (plist-get session :title)
                                                          (plist-get next :title)))))))
                      (force-mode-line-update t)))))

;;;; Context

(defun ctxls--file-buffer ()
  "Return the current buffer if it visits a file, else the last such buffer."
  (if buffer-file-name
      (current-buffer)
    (or (cl-find-if (lambda (b) (buffer-local-value 'buffer-file-name b)) (buffer-list))
        (user-error "ctxls: no file buffer to use; visit a file first"))))

;;;###autoload
(defun ctxls-add-file (&optional file)
  "Add FILE to the session's relevant files.
Interactively, the current file; from the chat buffer (or any buffer
that visits no file), the file buffer used last."
  (interactive)
  (let ((path (expand-file-name (or file (buffer-local-value 'buffer-file-name (ctxls--file-buffer))))))
    (ctxls--command ctxls-protocol-command-context-set
                    (list :setName "files" :items (vector path) :mode "merge")
                    (lambda (r)
                      (ctxls--say "added %s to the context (%d files)"
                                  (file-name-nondirectory path) (length (plist-get r :items)))))))

;;;###autoload
(defun ctxls-remove-file (file)
  "Remove FILE from the session's relevant files.
Interactively, pick it from the set; the current file (or the file
buffer used last) is the default."
  (interactive
   (let* ((files (append (plist-get (plist-get (ctxls--call ctxls-protocol-command-context-get
                                                              (list :setName "files"))
                                               :context)
                                    :files)
                         nil))
          (here (let ((b (ignore-errors (ctxls--file-buffer))))
                  (and b (expand-file-name (buffer-local-value 'buffer-file-name b))))))
     (list (and files (completing-read "Remove from context: " files nil t nil nil
                                       (if (member here files) here (car files)))))))
  (if (null file)
      (ctxls--say "the context has no files")
    (let ((path (expand-file-name file)))
      (ctxls--command ctxls-protocol-command-context-get (list :setName "files")
                      (lambda (r)
                        (let ((files (append (plist-get (plist-get r :context) :files) nil)))
                          (if (not (member path files))
                              (ctxls--say "%s is not in the context" path)
                            (ctxls--command ctxls-protocol-command-context-set
                                            (list :setName "files" :items (vconcat (delete path files))
                                                  :mode "replace")
                                            (lambda (_)
                                              (ctxls--say "removed %s from the context (%d left)"
                                                          (file-name-nondirectory path)
                                                          (1- (length files))))))))))))

(defvar-local ctxls--context-sets nil
  "The context sets the *ctxls context* buffer shows (a plist).")

(defvar ctxls-context-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "d") #'ctxls-context-remove-at-point)
    (define-key map (kbd "g") #'ctxls-show-context)
    map)
  "Keys of the *ctxls context* buffer.")

(define-derived-mode ctxls-context-mode special-mode "ctxls-context"
  "The session's relevant context.  RET opens a file, d removes it.
The project's instructions files the model is given are named on the
line \"instructions:\" (`ctxls-project-instructions'); RET visits one.")

(defun ctxls-context-remove-at-point ()
  "Remove the file on this line from the context."
  (interactive)
  (let ((file (get-text-property (line-beginning-position) 'ctxls-file)))
    (if file (ctxls-remove-file file) (ctxls--say "no file on this line"))))

(defun ctxls--workspace-relative (path)
  "PATH relative to the workspace folder that holds it (the deepest), else
as `ctxls--file-short' names it."
  (let ((root (car (sort (cl-remove-if-not (lambda (r) (file-in-directory-p path r))
                                           (copy-sequence ctxls--folders))
                         (lambda (a b) (> (length a) (length b)))))))
    (if root (file-relative-name path root) (ctxls--file-short path))))

(defun ctxls--insert-instructions (instructions &optional label)
  "Insert a line naming the project's INSTRUCTIONS files, if any.
LABEL (default \"instructions: \") starts it; then each file (a plist
of the daemon's), relative to its workspace folder, is a button that
visits it, marked (unsaved) when the model was given the editor's
unsaved text and (cut) when not all of it."
  (when instructions
    (insert (or label "instructions: "))
    (cl-loop for file in (append instructions nil)
             for sep = "" then ", "
             do (let ((path (plist-get file :path))
                      ;; "cut: the first … bytes of its … shown; …" or "not shown: …"
                      (cut (plist-get file :cut)))
                  (insert sep)
                  (insert-text-button (ctxls--workspace-relative path)
                                      'action (lambda (_) (find-file-other-window path))
                                      'follow-link t
                                      'help-echo (concat "RET visits " (abbreviate-file-name path)
                                                         (if (stringp cut) (concat "\n" cut) "")))
                  (when (eq (plist-get file :unsaved) t)
                    (insert (propertize " (unsaved)" 'face 'ctxls-note)))
                  (when (and (stringp cut) (not (string-empty-p cut)))
                    (insert (propertize " (cut)" 'face 'ctxls-note 'help-echo cut)))))
    (insert "\n")))

(defun ctxls--show-instructions (instructions)
  "Show INSTRUCTIONS (the daemon's list) as the project's instructions files.
The *ctxls context* buffer names them, if shown."
  (setq ctxls--instructions (append instructions nil))
  (when-let ((buf (get-buffer "*ctxls context*")))
    (ctxls--render-context buf (buffer-local-value 'ctxls--context-sets buf))))

(defun ctxls--render-context (buf ctx)
  "Render the context sets CTX (a plist) into BUF.
The project's instructions files (`ctxls--instructions') follow the
session's title."
  (with-current-buffer buf
    (setq ctxls--context-sets ctx)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert "Session: " (or ctxls--session-title "none") "\n\n")
      (when ctxls--instructions
        (ctxls--insert-instructions ctxls--instructions)
        (insert "\n"))
      (if (null ctx)
          (insert "No context yet: M-x ctxls-add-file adds the current file.\n")
        (cl-loop for (key items) on ctx by #'cddr do
                 (insert (ctxls--set-label key) ":\n")
                 (mapc (lambda (item)
                         (let ((start (point)))
                           (insert "  ")
                           (if (eq key :files)
                               (insert-text-button item 'action (lambda (_) (find-file-other-window item))
                                                   'help-echo "RET opens, d removes")
                             (insert item))
                           (insert "\n")
                           (when (eq key :files)
                             (put-text-property start (point) 'ctxls-file item))))
                       items)
                 (insert "\n")))
      (goto-char (point-min)))))

;;;###autoload
(defun ctxls-show-context ()
  "Show the session's relevant context in a read-only buffer."
  (interactive)
  (ctxls--command ctxls-protocol-command-context-get nil
                  (lambda (r)
                    (let ((buf (get-buffer-create "*ctxls context*")))
                      (with-current-buffer buf
                        (unless (derived-mode-p 'ctxls-context-mode) (ctxls-context-mode)))
                      (setq ctxls--instructions (append (plist-get r :instructions) nil))
                      (ctxls--render-context buf (plist-get r :context))
                      (display-buffer buf)))))

;;;###autoload
(defun ctxls-preview (message)
  "Show the exact model input a turn asking MESSAGE would send."
  (interactive (list (ctxls--read-question "Preview the prompt for: ")))
  (ctxls--command ctxls-protocol-command-chat-preview (list :message message)
                  (lambda (r)
                    (let ((buf (get-buffer-create "*ctxls preview*"))
                          (tokens (plist-get r :tokens)))
                      (with-current-buffer buf
                        (let ((inhibit-read-only t))
                          (erase-buffer)
                          (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
                          (insert (format "# Prompt preview (%s)\n\n" (plist-get r :model))
                                  (format "Tokens: %d total (system %d, files %d, history %d); budget %d; %d earlier messages dropped.\n\n"
                                          (or (plist-get tokens :total) 0) (or (plist-get tokens :system) 0)
                                          (or (plist-get tokens :files) 0) (or (plist-get tokens :history) 0)
                                          (or (plist-get r :budget) 0) (or (plist-get r :dropped) 0)))
                          ;; Their text ends the system message below.
                          (when (plist-get r :instructions)
                            (ctxls--insert-instructions (plist-get r :instructions) "Project instructions: ")
                            (insert "\n"))
                          (mapc (lambda (m)
                                  (insert "## " (plist-get m :role) "\n\n" (or (plist-get m :content) "") "\n\n"))
                                (plist-get r :messages))
                          (insert "## Tools\n\n")
                          (mapc (lambda (tl) (insert "- " (plist-get tl :name) ": "
                                                     (ctxls--one-line (plist-get tl :description) 100) "\n"))
                                (plist-get r :tools))
                          (goto-char (point-min)))
                        (setq buffer-read-only t))
                      (display-buffer buf)))))

;;;; The mode

(defun ctxls--lighter ()
  "The mode line text of `ctxls-mode'."
  (concat " ctxls"
          (pcase ctxls--state
            ('starting "(starting)")
            ('failed "(!)")
            (_ (when (or ctxls--session-title ctxls--turn)
                 (format "[%s%s]"
                         (truncate-string-to-width (or ctxls--session-title "new") ctxls-lighter-title-width
                                                   nil nil "…")
                         (if ctxls--turn "|busy" "")))))))

;;;###autoload
(defvar ctxls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "a") #'ctxls-ask)
    (define-key map (kbd "w") #'ctxls-compose)
    (define-key map (kbd "G") #'ctxls-regenerate)
    (define-key map (kbd "E") #'ctxls-edit-question)
    (define-key map (kbd "k") #'ctxls-cancel)
    (define-key map (kbd "n") #'ctxls-new-session)
    (define-key map (kbd "r") #'ctxls-resume)
    (define-key map (kbd "s") #'ctxls-search)
    (define-key map (kbd "+") #'ctxls-add-file)
    (define-key map (kbd "-") #'ctxls-remove-file)
    (define-key map (kbd "c") #'ctxls-show-context)
    (define-key map (kbd "p") #'ctxls-preview)
    (define-key map (kbd "b") #'ctxls-chat)
    (define-key map (kbd "i") #'ctxls-apply-block)
    (define-key map (kbd "I") #'ctxls-attach-image)
    (define-key map (kbd "e") #'ctxls-set-review-mode)
    (define-key map (kbd "m") #'ctxls-set-model)
    (define-key map (kbd "x") #'ctxls-export)
    (define-key map (kbd "R") #'ctxls-rename-session)
    (define-key map (kbd "q") #'ctxls-answer)
    (define-key map (kbd "u") #'ctxls-undo)
    (define-key map (kbd "U") #'ctxls-redo)
    map)
  "Prefix keymap of the ctxls commands; bind it to a key of your choice.")
;;;###autoload
(fset 'ctxls-command-map ctxls-command-map)

;;;###autoload
(defun ctxls-chat ()
  "Show the chat buffer, and the turns made elsewhere since it was shown.
See `ctxls-chat-refresh'."
  (interactive)
  (pop-to-buffer (ctxls--chat-buffer))
  (ctxls--live-refresh))

;;;###autoload
(define-minor-mode ctxls-mode
  "Toggle syncing file buffers with the ctxls daemon, to chat about them.
The daemon runs beside any language server the buffers have (eglot and
lsp-mode keep theirs).  \\[ctxls-ask] asks a question."
  :global t
  :group 'ctxls
  :lighter (:eval (ctxls--lighter))
  (if ctxls-mode
      (progn
        (add-hook 'find-file-hook #'ctxls--track)
        (add-hook 'after-save-hook #'ctxls--after-save)
        (add-hook 'kill-emacs-hook #'ctxls--kill-emacs)
        (add-function :after after-focus-change-function #'ctxls--on-focus-change)
        (setq ctxls--view-timer (run-with-idle-timer ctxls-view-delay t #'ctxls--send-view))
        (dolist (buf (buffer-list))
          (ctxls--track buf))
        (unless (ctxls--usable-p)
          (let ((found (ctxls--find-program)))
            (if (not (car found))
                ;; Never an error: it would stop the init file that turns
                ;; the mode on.  The next ctxls command says it again.
                (progn
                  (setq ctxls-mode nil)
                  (ctxls--untrack-all)
                  (ctxls--remove-hooks)
                  (display-warning 'ctxls (format "%s; %s.  `ctxls-mode' stays off."
                                                  (cdr found) ctxls--install-hint)
                                   :warning))
              (condition-case err
                  (ctxls--start)
                (error
                 (setq ctxls-mode nil)
                 (ctxls--untrack-all)
                 (ctxls--remove-hooks)
                 (display-warning 'ctxls (format "cannot start the daemon: %s" (error-message-string err))
                                  :warning)))))))
    (ctxls--remove-hooks)
    (ctxls--untrack-all)
    (ctxls--stop)))

(defun ctxls--remove-hooks ()
  "Undo what turning `ctxls-mode' on hooked and timed."
  (remove-hook 'find-file-hook #'ctxls--track)
  (remove-hook 'after-save-hook #'ctxls--after-save)
  (remove-hook 'kill-emacs-hook #'ctxls--kill-emacs)
  (remove-function after-focus-change-function #'ctxls--on-focus-change)
  (when ctxls--view-timer (cancel-timer ctxls--view-timer))
  (setq ctxls--view-timer nil ctxls--last-view nil))

(defun ctxls--untrack-all ()
  "Stop syncing every buffer."
  (dolist (buf ctxls--buffers)
    (when (buffer-live-p buf) (ctxls--untrack buf)))
  (setq ctxls--buffers nil))

(provide 'ctxls)
;;; ctxls.el ends here
