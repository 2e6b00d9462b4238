;;; ctxls-core.el --- What ctxls's files share: options, faces, state, helpers  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it first: what the package's other files
;; all use.  The user options and faces, the state of the connection and
;; of the current session, small helpers (the echo area, the log, file
;; URIs), and LSP positions in the encoding the daemon chose.

;;; Code:

(require 'cl-lib)
(require 'project)
(require 'url-util)
(require 'subr-x)

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

(defvar ctxls--key-recheck nil
  "Non-nil when the next question looks the key up again: the last was
refused for want of a provider.")

(defvar ctxls--titles (make-hash-table :test #'equal)
  "Titles the daemon announced, by session id.
A first turn's title may be announced after the turn has ended but
before its result names the session: the result takes it from here.")

(defvar ctxls--titles-announced 0
  "How many titles sessionUpdated announced: a session read again that
started before the last one keeps the title it announced.")

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

(defun ctxls--uri-file (uri)
  "The file name of the file:// URI."
  (decode-coding-string (url-unhex-string (string-remove-prefix "file://" uri)) 'utf-8))

(defun ctxls--project-root (dir)
  "The root of the project holding DIR, or nil."
  (when-let ((pr (and dir (file-directory-p dir) (project-current nil dir))))
    (directory-file-name (expand-file-name (project-root pr)))))

(defun ctxls--file-short (path)
  "PATH as a note names it: relative to its project's root, else abbreviated."
  (let ((root (ctxls--project-root (locate-dominating-file path #'file-directory-p))))
    (if (and root (file-in-directory-p path root))
        (file-relative-name path root)
      (abbreviate-file-name path))))

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

(provide 'ctxls-core)
;;; ctxls-core.el ends here
