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
;;
;; The package's files, all loaded by this one, which starts the daemon,
;; holds the connection and `ctxls-mode': ctxls-core.el (the options,
;; faces and state the others share), ctxls-sync.el (your buffers' text
;; and the view, as the daemon keeps them), ctxls-chat.el (the chat
;; buffer), ctxls-ask.el (a turn from the question to its answer, images,
;; the question buffer), ctxls-tools.el (the model's tool calls in the
;; chat), ctxls-questions.el (the daemon's questions), ctxls-review.el
;; (the model's edits: review, apply, undo), ctxls-diagnostics.el
;; (Flymake's diagnostics for the model), ctxls-sessions.el,
;; ctxls-context.el, ctxls-input.el (typing a question), ctxls-setup.el
;; (the key, the first run) and ctxls-protocol.el (the protocol's names,
;; generated).

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-input)
(require 'ctxls-setup)
(require 'ctxls-sync)
(require 'ctxls-chat)
(require 'ctxls-tools)
(require 'ctxls-questions)
(require 'ctxls-review)
(require 'ctxls-diagnostics)
(require 'ctxls-sessions)
(require 'ctxls-context)
(require 'ctxls-ask)

(defvar ctxls-mode)

(defconst ctxls-version "0.1.0"
  "The version of ctxls.el, sent as clientInfo.version.")

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

;;;; Requests taken out of jsonrpc's hands

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
