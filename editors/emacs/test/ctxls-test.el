;;; ctxls-test.el --- ctxls.el driven as a user would, in batch Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by editors/emacs/emacs_test.go, one test per Emacs process:
;;   emacs -Q --batch -L editors/emacs -l editors/emacs/test/ctxls-test.el \
;;     --eval "(ert-run-tests-batch-and-exit '(member ctxls-test-sync))"
;; Environment: CTXLS_BIN (the built daemon), CTXLS_DATA_DIR, CTXLS_WORK (a
;; project folder with main.go, sync.txt and tool.py), OPENAI_BASE_URL (the
;; fake provider), CTXLS_FAKE_LSP_BIN (a fake language server for eglot),
;; CTXLS_MCP_SERVERS (the test MCP server, as mcpServers JSON) and
;; CTXLS_TOOL_LINES (a file: the tool calls' lines, from one test to the next)
;; and CTXLS_ELPA (the folder of elpa packages this Emacs loads: Debian's,
;; or for a newer Emacs the same compiled by it).
;; Commands are typed as keys (M-x ..., the minibuffer answers) with
;; `execute-kbd-macro'; the test waits with `accept-process-output', during
;; which timers and process filters run as in the command loop.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'ctxls)
;; Autoloads as package.el makes them: loaddefs-gen from Emacs 29 on
;; (autoload.el is deprecated there), autoload before.
(eval-and-compile ; generated-autoload-file is bound below, also compiled
  (unless (require 'loaddefs-gen nil t)
    (require 'autoload)))

;; An Emacs built with native compilation (Debian's 28 and 30 both are)
;; compiles a trampoline for each primitive advised below (`message',
;; `read-string'), most of a second of CPU for the two, into the eln-cache
;; of ~/.emacs.d; every test has a fresh HOME, so emacs_test.go gives the
;; tests of one Emacs a folder to share ($CTXLS_ELN_CACHE), filled before
;; they run.
(when (and (getenv "CTXLS_ELN_CACHE") (boundp 'native-comp-eln-load-path))
  (push (file-name-as-directory (getenv "CTXLS_ELN_CACHE")) native-comp-eln-load-path))

(defvar ctxls-test--messages nil "Every echo-area message, newest first.")

(defun ctxls-test--record (fmt &rest args)
  "Record the message FMT with ARGS."
  (when fmt
    (push (apply #'format-message fmt args) ctxls-test--messages)))
(advice-add 'message :before #'ctxls-test--record)

(defvar ctxls-test--prompt-log nil "Every prompt of `read-string', newest first.")

(defun ctxls-test--record-prompt (prompt &rest _)
  "Record the PROMPT of `read-string'."
  (push prompt ctxls-test--prompt-log))
(advice-add 'read-string :before #'ctxls-test--record-prompt)

(defun ctxls-test--pending (conn)
  "CONN's requests waiting for an answer: a list of (ID TIMER).
jsonrpc.el 1.0.14 (Emacs 28) keeps them in a hash table of ID to
\(SUCCESS ERROR TIMER), later ones (Emacs 30's 1.0.25) in an alist of
\(ID METHOD SUCCESS ERROR TIMER)."
  (if (fboundp 'jsonrpc--continuations)
      (mapcar (lambda (c) (list (nth 0 c) (nth 4 c))) (jsonrpc--continuations conn))
    (let (out)
      (maphash (lambda (id c) (push (list id (nth 2 c)) out)) (jsonrpc--request-continuations conn))
      out)))

(defun ctxls-test--expect-answer (conn id fn)
  "Make CONN wait for the answer to a request ID it never sent; FN gets its result."
  (if (fboundp 'jsonrpc--schedule)
      (jsonrpc--schedule conn id 'ctxls-test fn #'ignore nil)
    (puthash id (list fn #'ignore nil) (jsonrpc--request-continuations conn))))

(defun ctxls-test--setup ()
  "Point ctxls.el at the test daemon, data directory and provider."
  (setq ctxls-command (list (getenv "CTXLS_BIN") "serve")
        ctxls-data-dir (getenv "CTXLS_DATA_DIR")
        ctxls-provider (list :baseURL (getenv "OPENAI_BASE_URL") :model "test-model")
        ctxls-view-idle-ms 100
        default-directory (file-name-as-directory (getenv "CTXLS_WORK")))
  (transient-mark-mode 1))

(defun ctxls-test--file (name)
  "The absolute name of NAME in the test workspace."
  (expand-file-name name (getenv "CTXLS_WORK")))

(defun ctxls-test--wait (what pred &optional seconds)
  "Run timers and process output until PRED holds; fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 10))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (unless (funcall pred)
      ;; A request left unanswered: the daemon's goroutines, for the
      ;; failure's output (SIGQUIT: Go prints them to stderr, the log).
      (when (and ctxls--connection (jsonrpc-running-p ctxls--connection)
                 (ctxls-test--pending ctxls--connection))
        (signal-process (jsonrpc--process ctxls--connection) 'QUIT)
        (accept-process-output nil 2)
        (when-let ((b (get-buffer "*ctxls log*")))
          (message "ctxls-test: the daemon's goroutines:\n%s"
                   (with-current-buffer b
                     (buffer-substring-no-properties (max (point-min) (- (point-max) 60000)) (point-max))))))
      ;; ERT prints a failure's data cut at its tenth element, five deep
      ;; (Emacs 28): what the test saw goes out whole first, and the
      ;; condition is short, the daemon's log last.
      (let ((print-length nil) (print-level nil) (print-escape-newlines t))
        (message "ctxls-test: timed out waiting for %s; what the test saw:\n%S" what
                 (list :messages (reverse ctxls-test--messages)
                       :buffers (mapcar (lambda (b) (list (buffer-name b) (buffer-file-name b)
                                                          (and (buffer-file-name b) (file-exists-p (buffer-file-name b)))
                                                          (buffer-size b)))
                                        (buffer-list))
                       :chat (ctxls-test--chat-text))))
      (ert-fail (list 'timed-out-waiting-for what
                      :state (list :title ctxls--session-title :turn ctxls--turn :live ctxls--live-state
                                   :settling ctxls--live-settling :pending ctxls--live-pending
                                   :requests (and ctxls--connection
                                                  (length (ctxls-test--pending ctxls--connection))))
                      :log (if-let ((b (get-buffer "*ctxls log*")))
                               (with-current-buffer b
                                 (buffer-substring-no-properties (max (point-min) (- (point-max) 3000)) (point-max)))
                             ""))))))

(defun ctxls-test--ready ()
  "Wait for the daemon to answer initialize."
  (ctxls-test--wait "the daemon" (lambda () (eq ctxls--state 'ready))))

(defun ctxls-test--call (id arg)
  "Run the daemon's command ID with ARG synchronously, for checks.
As ctxls.el does (`ctxls--request-wait'): with `jsonrpc-request', Emacs
28 left the messages read with the answer unread (a title announced
then never showed)."
  (ctxls--request-wait ctxls--connection 'workspace/executeCommand
                       (list :command id :arguments (vector (or arg (make-hash-table))))
                       30))

(defun ctxls-test--mx (command &rest answers)
  "Type M-x COMMAND RET, then each of ANSWERS followed by RET."
  (execute-kbd-macro
   (apply #'vconcat (kbd "M-x") command (kbd "RET")
          (mapcan (lambda (a) (list a (kbd "RET"))) answers))))

(defun ctxls-test--chat-text ()
  "The chat buffer's text (\"\" before it exists)."
  (if-let ((b (and (buffer-live-p ctxls--chat) ctxls--chat)))
      (with-current-buffer b (buffer-substring-no-properties (point-min) (point-max)))
    ""))

(defun ctxls-test--said (regexp)
  "Non-nil when a message matching REGEXP was shown."
  (cl-some (lambda (m) (string-match-p regexp m)) ctxls-test--messages))

(defun ctxls-test--document ()
  "The text the daemon holds for the current buffer."
  (plist-get (ctxls-test--call ctxls-protocol-command-document-get (list :uri ctxls--uri)) :text))

(defun ctxls-test--same (what)
  "Fail unless the daemon's text equals the buffer's byte for byte (WHAT is the step)."
  (let ((want (encode-coding-string (ctxls--buffer-text) 'utf-8-unix t))
        (got (encode-coding-string (ctxls-test--document) 'utf-8-unix t)))
    (unless (string= want got)
      (ert-fail (list 'daemon-text-differs-after what :encoding ctxls--encoding
                      :buffer (decode-coding-string want 'utf-8) :daemon (decode-coding-string got 'utf-8))))))

(defun ctxls-test--candidate (path)
  "The daemon's candidate entry for PATH, or nil."
  (cl-find path (plist-get (ctxls-test--call ctxls-protocol-command-context-candidates nil) :files)
           :key (lambda (c) (plist-get c :path)) :test #'equal))

(defun ctxls-test--model-input ()
  "The text of what the model would be given for a question now."
  (mapconcat (lambda (m) (or (plist-get m :content) ""))
             (plist-get (ctxls-test--call ctxls-protocol-command-chat-preview (list :message "preview")) :messages)
             "\n"))

(defun ctxls-test--stop ()
  "Turn `ctxls-mode' off and wait for the daemon to exit."
  (let ((conn ctxls--connection))
    (ctxls-mode -1)
    (ctxls-test--wait "the daemon to exit" (lambda () (not (jsonrpc-running-p conn))) 5)
    ;; It exited by itself after shutdown and exit, not killed.
    (let ((proc (jsonrpc--process conn)))
      (should (equal (list (process-status proc) (process-exit-status proc)) '(exit 0))))))

;;;; The package

;; A peer that writes an answer and a notification at once, as the daemon
;; does when a title is announced while a picker's list is answered.
(ert-deftest ctxls-test-request-wait ()
  "A synchronous request leaves nothing that came with its answer unread."
  (let* ((answer "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"files\":[]}}")
         (note "{\"jsonrpc\":\"2.0\",\"method\":\"ctxls/sessionUpdated\",\"params\":{\"title\":\"T\"}}")
         (frame (lambda (json) (format "Content-Length: %d\r\n\r\n%s" (string-bytes json) json)))
         (script (format "head -c 1 >/dev/null; printf '%%s' '%s'; sleep 30"
                         (concat (funcall frame answer) (funcall frame note))))
         (proc (make-process :name "ctxls-test-peer" :command (list "sh" "-c" script)
                             :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t))
         (notes nil)
         (conn (make-instance 'jsonrpc-process-connection :name "peer" :process proc
                              :notification-dispatcher (lambda (_c method _p) (push method notes)))))
    (unwind-protect
        (progn
          (should (equal (ctxls--request-wait conn 'workspace/executeCommand (list :command "x") 10)
                         '(:files [])))
          ;; Read with the answer, nothing more to come: handled already.
          (should (equal notes '(ctxls/sessionUpdated))))
      (jsonrpc-shutdown conn t))))

(ert-deftest ctxls-test-package ()
  "ctxls.el byte-compiles without a warning; its autoloads load and work."
  (let* ((dir (file-name-directory (locate-library "ctxls.el")))
         (tmp (make-temp-file "ctxls-el" t))
         (files '("ctxls-protocol.el" "ctxls-core.el" "ctxls-input.el" "ctxls-setup.el" "ctxls-sync.el"
                  "ctxls-chat.el" "ctxls-tools.el" "ctxls-questions.el" "ctxls-review.el"
                  "ctxls-diagnostics.el" "ctxls-sessions.el" "ctxls-context.el" "ctxls-ask.el" "ctxls.el"))
         (byte-compile-error-on-warn t))
    (dolist (f files)
      (copy-file (expand-file-name f dir) (expand-file-name f tmp)))
    (let ((load-path (cons tmp load-path)))
      (dolist (f files)
        (should (byte-compile-file (expand-file-name f tmp)))))
    ;; Autoloads, generated as package.el would.
    (let ((generated-autoload-file (expand-file-name "ctxls-autoloads.el" tmp)))
      (if (fboundp 'loaddefs-generate)
          (loaddefs-generate tmp generated-autoload-file)
        (update-directory-autoloads tmp))
      (with-temp-buffer
        (insert-file-contents generated-autoload-file)
        (dolist (fn '(ctxls-mode ctxls-ask ctxls-cancel ctxls-new-session ctxls-resume ctxls-search
                                 ctxls-add-file ctxls-remove-file ctxls-show-context ctxls-preview
                                 ctxls-set-review-mode ctxls-apply-block ctxls-export ctxls-set-model
                                 ctxls-compose ctxls-chat-refresh ctxls-regenerate ctxls-edit-question
                                 ctxls-attach-image ctxls-answer ctxls-undo ctxls-redo ctxls-setup))
          (should (string-match-p (format "(autoload '%s " fn) (buffer-string))))))
    (should (equal (car (ctxls--plist :a nil :b 1)) :b))
    ;; A tool call whose turn was cancelled before it ended reads so, in
    ;; the face of a declined one, its output shown with RET like theirs.
    (let* ((params (list :id "1:0" :name "mcp__t__echo" :server "t" :tool "echo"
                         :arguments "{\"text\":\"hi\"}" :status "cancelled"
                         :output "The turn was cancelled; the call did not run."))
           (line (ctxls--tool-line params "▸")))
      (should (equal (substring-no-properties line) "▸ t · echo `{\"text\":\"hi\"}` — cancelled"))
      (should (memq 'ctxls-tool-declined (ensure-list (get-text-property (1- (length line)) 'face line))))
      (should (equal (ctxls--tool-output params) "```\nThe turn was cancelled; the call did not run.\n```\n")))
    ;; The model's edit of a read-only buffer is refused, saying so (on
    ;; Emacs 28 jsonrpc's process filter bound `inhibit-read-only' around
    ;; the request: it went through); a new file's buffer, in a folder not
    ;; made yet, is writable.
    (let* ((dir (make-temp-file "ctxls-ro" t))
           (default-directory (file-name-as-directory dir))
           (file (expand-file-name "ro.txt" dir)))
      (write-region "x\n" nil file)
      (with-current-buffer (find-file-noselect file)
        (read-only-mode 1))
      (should (equal (ctxls--edit-refusal (list (list :textDocument (list :uri (ctxls--path-uri file)) :edits [])))
                     "ro.txt is read-only"))
      (with-current-buffer (ctxls--created-buffer (expand-file-name "pkg/new.go" dir))
        (should-not buffer-read-only)
        (insert "package pkg\n")
        (set-buffer-modified-p nil)))
    ;; A missing daemon: (ctxls-mode 1) in an init file warns, saying
    ;; where it looked, and the init file goes on; the mode stays off.  A
    ;; command says it again.
    (let ((process-environment (copy-sequence process-environment))
          (gobin (make-temp-file "gobin" t))
          (gopath (make-temp-file "gopath" t)))
      (setenv "GOBIN" gobin)
      (setenv "GOPATH" gopath)
      (dolist (cmd '(("/nonexistent/ctxls" "serve") ("ctxls-not-on-path" "serve")))
        (let ((ctxls-command cmd))
          (when (get-buffer "*Warnings*") (kill-buffer "*Warnings*"))
          (should (eq 'went-on (progn (ctxls-mode 1) 'went-on)))
          (let ((warning (with-current-buffer "*Warnings*" (buffer-string))))
            (should (string-search "ctxls is not installed" warning))
            (should (string-search "ctxls-command" warning))
            (unless (file-name-absolute-p (car cmd))
              (should (string-search (format "%S is neither on exec-path nor in Go's install folder" (car cmd))
                                     warning))
              (dolist (dir (list gobin (expand-file-name "bin" gopath) "~/go/bin"))
                (should (string-search (abbreviate-file-name dir) warning)))))
          (should-not ctxls-mode)
          (should-not ctxls--connection)
          (should-not (memq #'ctxls--track find-file-hook))
          (let ((err (should-error (ctxls-ask "hello") :type 'user-error)))
            (should (string-match-p "not installed" (cadr err)))
            (should (string-match-p "ctxls-command" (cadr err))))
          ;; Typed: said before the question is read, not after.
          (let* ((prompts (ctxls-test--prompts))
                 (err (should-error (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-ask" (kbd "RET")))
                                    :type 'user-error)))
            (should (string-match-p "not installed" (cadr err)))
            (should-not (funcall prompts)))
          (should-not ctxls--turn)))
      ;; Installed by go install (in $GOBIN, else $GOPATH/bin, else
      ;; ~/go/bin) but not on exec-path: found there.
      (let ((ctxls-command '("ctxls" "serve"))
            (exec-path (list "/nonexistent")))
        (should-not (car (ctxls--find-program)))
        (dolist (dir (list (expand-file-name "bin" gopath) gobin))
          (make-directory dir t)
          (make-symbolic-link (getenv "CTXLS_BIN") (expand-file-name "ctxls" dir))
          (should (equal (ctxls--program) (expand-file-name "ctxls" dir)))))))
  ;; A daemon that fails initialize (a viewIdleMs out of range) ends the
  ;; question waiting for it, with the reason, and the next ask is not refused.
  (let ((ctxls-command (list (getenv "CTXLS_BIN") "serve"))
        (ctxls-data-dir (make-temp-file "ctxls-data" t))
        (ctxls-view-idle-ms 0))
    (ctxls-ask "hello")
    (should ctxls--turn)
    (ctxls-test--wait "the failure" (lambda () (eq ctxls--state 'failed)))
    (should-not ctxls--turn)
    (should (string-match-p "_error: initialize failed: .*viewIdleMs.*_" (ctxls-test--chat-text)))
    (should (string-match-p "(!)" (ctxls--lighter)))))

;;;; Text synchronisation

(defun ctxls-test--edits ()
  "Edit the current buffer in many ways, checking the daemon after each."
  (goto-char (point-min))
  (end-of-line)
  (insert " // añadido 🎉")
  (ctxls-test--same "insert at the end of line 1")
  (goto-char (point-min))
  (search-forward "😀")
  (insert "𝄞ä")
  (ctxls-test--same "insert after an emoji (a surrogate pair in UTF-16)")
  (goto-char (point-min))
  (search-forward "wörld")
  (let ((p (point)))
    (forward-line 1)
    (forward-char 5)
    (delete-region p (point)))
  (ctxls-test--same "delete across a line end")
  (goto-char (point-min))
  (search-forward "héllo")
  (upcase-region (- (point) 5) (point))
  (ctxls-test--same "upcase-region on multi-byte text")
  (goto-char (point-min))
  (insert "Already upper, then lower ß\n")
  (upcase-region (point-min) (1- (point)))
  (ctxls-test--same "upcase-region starting on an upper-case letter (the after-change region starts later)")
  (goto-char (point-min))
  (capitalize-word 3)
  (ctxls-test--same "capitalize-word (the before-change region is wider)")
  (goto-char (point-max))
  (insert "\n" (make-string 3 ?\n) "tab\there\n")
  (ctxls-test--same "newlines at the end")
  (goto-char (point-min))
  (forward-line 1)
  (transpose-lines 1)
  (ctxls-test--same "transpose-lines")
  (goto-char (point-min))
  (kill-line 2)
  (goto-char (point-max))
  (yank)
  (ctxls-test--same "kill-line and yank")
  (goto-char (point-min))
  (forward-line 2)
  (delete-indentation)
  (ctxls-test--same "delete-indentation (join lines)")
  (goto-char (point-max))
  (insert "\n" (mapconcat #'identity (make-list 30 "wörd 😀 text") " ") "\n")
  (forward-line -1)
  (fill-paragraph)
  (ctxls-test--same "fill-paragraph")
  (undo-boundary)
  (goto-char (point-min))
  (insert "to be undone ✓\n")
  (undo-boundary)
  (primitive-undo 1 buffer-undo-list)
  (ctxls-test--same "undo")
  (save-restriction
    (goto-char (point-min))
    (forward-line 3)
    (narrow-to-region (point) (line-end-position))
    (goto-char (point-min))
    (insert "narrowed ñ ")
    (goto-char (point-max))
    (insert " ende"))
  (ctxls-test--same "edits while narrowed")
  (goto-char (point-min))
  (while (search-forward "ö" nil t)
    (replace-match "oe" t t))
  (ctxls-test--same "replace-match")
  (let ((pieces ["a" "é" "😀" "\n" "𝄞x" "日本語" "  " "\t" "ß\n" "z"]))
    (random "ctxls")
    (dotimes (_ 300)
      (let* ((n (buffer-size))
             (p (1+ (random (1+ n)))))
        (if (and (> n 0) (zerop (random 3)))
            (delete-region p (min (point-max) (+ p (random 8))))
          (goto-char p)
          (insert (aref pieces (random (length pieces))))))))
  (ctxls-test--same "300 random edits")
  (let ((inhibit-modification-hooks t))
    (goto-char (point-min))
    (insert "silent change\n"))
  (ctxls--flush)
  (ctxls-test--same "a change no hook saw, resent before the next request"))

(ert-deftest ctxls-test-sync ()
  "Unsaved edits reach the daemon byte for byte; save and kill are seen."
  (ctxls-test--setup)
  (setq ctxls-position-encodings (split-string (getenv "CTXLS_TEST_ENCODINGS") ","))
  (let ((file (ctxls-test--file "sync.txt"))
        (full 0))
    (find-file file)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (should (eq ctxls--encoding (intern (getenv "CTXLS_TEST_EXPECT"))))
    (should (equal ctxls--uri (concat "file://" (url-hexify-string file ctxls--uri-allowed))))
    (should (string-match-p "/w%C3%B6rt%20space/sync.txt\\'" ctxls--uri))
    (ctxls-test--same "didOpen")
    ;; The daemon decoded the URI back to the buffer's file name.
    (should (ctxls-test--candidate file))
    (let ((count (lambda (&rest _) (cl-incf full))))
      (advice-add 'ctxls--send-full :before count)
      (unwind-protect (ctxls-test--edits)
        (advice-remove 'ctxls--send-full count)))
    ;; Incremental: only the silent change was sent whole.
    (should (= full 1))
    ;; A carriage return: Emacs and the daemon count lines differently, so
    ;; the buffer goes whole while it has one, then ranges again.
    (goto-char (point-min))
    (insert "cr\rhere")
    (ctxls-test--same "insert a lone CR")
    (goto-char (point-max))
    (insert "after the CR ü")
    (ctxls-test--same "edit while a CR is in the buffer")
    (goto-char (point-min))
    (search-forward "\r")
    (delete-char -1)
    (should-not ctxls--has-cr)
    (goto-char (point-min))
    (insert "ranges again ✓")
    (should-not ctxls--has-cr)
    (ctxls-test--same "after the CR is gone")
    (should (plist-get (ctxls-test--candidate file) :dirty))
    (should (eq (plist-get (ctxls-test--candidate file) :open) t))
    (let ((version ctxls--version))
      (should (= version (plist-get (ctxls-test--call ctxls-protocol-command-document-get
                                                      (list :uri ctxls--uri))
                                    :version))))
    (save-buffer)
    (ctxls-test--wait "didSave" (lambda () (eq (plist-get (ctxls-test--candidate file) :dirty) :json-false)))
    ;; The file changes on disk and the buffer is reverted.
    (with-temp-file file (insert "changed on disk ✓\nsecond line\n"))
    (revert-buffer t t)
    (should (equal (ctxls--buffer-text) "changed on disk ✓\nsecond line\n"))
    (ctxls-test--same "revert-buffer")
    (kill-buffer)
    (ctxls-test--wait "didClose" (lambda () (eq (plist-get (ctxls-test--candidate file) :open) :json-false)))
    (ctxls-test--stop)))

;;;; Chat

(defun ctxls-test--prompts ()
  "A function giving the prompts of `read-string' from now on, newest first."
  (let ((before (length ctxls-test--prompt-log)))
    (lambda () (butlast ctxls-test--prompt-log before))))

(defun ctxls-test--lighter ()
  "The mode line text of `ctxls-mode' (`format-mode-line' gives \"\" in batch)."
  (should (equal (cadr (assq 'ctxls-mode minor-mode-alist)) '(:eval (ctxls--lighter))))
  (ctxls--lighter))

(ert-deftest ctxls-test-ask ()
  "A question asked at the prompt streams while Emacs keeps running."
  (ctxls-test--setup)
  (let ((file (ctxls-test--file "main.go")))
    (find-file file)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (goto-char (point-min))
    (forward-line 2)
    (insert "// UNSAVED LINE FROM EMACS: naïve café 😀\n")
    (goto-char (point-min))
    (forward-line 2)
    (let* ((ticks 0)
           (prompts (ctxls-test--prompts))
           (timer (run-with-timer 0.05 0.05 (lambda () (cl-incf ticks))))
           (t0 (float-time))
           took partial ticks-at-first)
      (unwind-protect
          (progn
            ;; Select lines 3-4 and ask, as a user types it.
            (execute-kbd-macro (vconcat (kbd "C-SPC C-n C-n M-x") "ctxls-ask" (kbd "RET")
                                        "what does this do?" (kbd "RET")))
            (setq took (- (float-time) t0))
            ;; The command returned at once; the answer (5 chunks, 300 ms
            ;; apart) is still to come.
            (should (< took 0.5))
            (should ctxls--turn)
            ;; The turn's request has no timeout (jsonrpc's default gives up
            ;; after 10 s): it is the only one pending, with no timer.
            (let ((pending (ctxls-test--pending ctxls--connection)))
              (should (= 1 (length pending)))
              (should-not (nth 1 (car pending))))
            (should (string-match-p "|busy\\]" (ctxls-test--lighter)))
            (should (string-search "thinking…" (ctxls-test--chat-text)))
            ;; The region's lines go with the question: the prompt and the
            ;; chat say so.
            (should (equal (car (funcall prompts)) "Ask ctxls (with main.go:3-4): "))
            (should (string-search "## You\n\n_with main.go:3-4_\n\nwhat does this do?\n" (ctxls-test--chat-text)))
            ;; Partial text shows while the turn runs.
            (ctxls-test--wait "the first words" (lambda () (string-search "Streaming " (ctxls-test--chat-text))))
            (setq partial (ctxls-test--chat-text) ticks-at-first ticks)
            (should ctxls--turn)
            (should-not (string-search "final words." partial))
            (should-not (string-search "thinking…" partial))
            (ctxls-test--wait "the end of the turn" (lambda () (null ctxls--turn)) 20)
            ;; The timer ticked all along: nothing blocked.
            (should (>= ticks-at-first 4))
            (should (>= (- ticks ticks-at-first) 15)))
        (cancel-timer timer))
      (let ((chat (ctxls-test--chat-text)))
        (should (string-search "## You\n\n_with main.go:3-4_\n\nwhat does this do?" chat))
        (should (string-search "## ctxls\n\nStreaming answer: it prints a greeting, final words.\n" chat))
        (should-not (string-search "_cancelled_" chat))
        (should (string-prefix-p "# " chat)))
      ;; clientInfo and the workspace folder from project.el reach the session.
      (let ((env (plist-get (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-session-show
                                                                    (list :sessionId ctxls--session-id))
                                                  :session)
                                       :meta)
                            :envHint)))
        (should (equal env (format "emacs ctxls.el %s (Emacs %s); workspace %s; git branch main"
                                   ctxls-version emacs-version (getenv "CTXLS_WORK")))))
      ;; The model's title replaces the first-line title, in the header too.
      (ctxls-test--wait "the model's title" (lambda () (equal ctxls--session-title "Emacs Test Title")) 30)
      ;; The title's update reads the session again: the turn, which
      ;; ended before its result came, is not taken for one made elsewhere.
      (ctxls-test--wait "the session read again" (lambda () (not (or ctxls--live-state ctxls--live-settling))) 20)
      (should (= 1 (ctxls-test--count "what does this do?")))
      (should (string-prefix-p "# Emacs Test Title\n" (ctxls-test--chat-text)))
      (should (string-match-p "\\[Emacs Test Title\\]" (ctxls-test--lighter)))
      (with-current-buffer ctxls--chat
        (should buffer-read-only)
        (should (derived-mode-p (if (fboundp 'markdown-mode) 'markdown-mode 'text-mode)))
        (should-error (insert "x") :type 'buffer-read-only))
      ;; The view is sent from an idle timer (idle timers do not run in
      ;; batch Emacs, so the test calls its function).
      (should (memq ctxls--view-timer timer-idle-list))
      (should (eq (timer--function ctxls--view-timer) #'ctxls--send-view))
      ;; The view: a region on lines 1-2 is recorded as the session's
      ;; editor view (the applet set).
      (switch-to-buffer (get-file-buffer file))
      (goto-char (point-min))
      (push-mark (point) t t)
      (forward-line 2)
      (ctxls--send-view)
      (ctxls-test--wait "the view's capture"
                        (lambda ()
                          (let ((applet (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-context-get nil)
                                                              :context)
                                                   :applet)))
                            (and (member (concat "file=" file) (append applet nil))
                                 (member "selection=1-2" (append applet nil))))))
      (ctxls-test--stop))))

(ert-deftest ctxls-test-activefile ()
  "The file in front of you goes with the question, unless left out."
  (ctxls-test--setup)
  (let ((file (ctxls-test--file "main.go"))
        (prompts (ctxls-test--prompts)))
    (find-file file)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (goto-char (point-min))
    (insert "// UNSAVED ACTIVE LINE\n")
    ;; The current buffer's file, its unsaved text (the Go test reads the
    ;; model's input).
    (ctxls-test--mx "ctxls-ask" "what is this?")
    (should (equal (car (funcall prompts)) "Ask ctxls (with main.go): "))
    (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\n_with main.go_\n\nwhat is this?\n" (ctxls-test--chat-text)))
    ;; From the chat buffer: the file buffer used last.
    (ctxls-chat)
    (should (eq (current-buffer) ctxls--chat))
    (ctxls-test--mx "ctxls-ask" "from the chat")
    (should (equal (car (funcall prompts)) "Ask ctxls (with main.go): "))
    (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\n_with main.go_\n\nfrom the chat\n" (ctxls-test--chat-text)))
    ;; C-u leaves it out once.
    (switch-to-buffer (get-file-buffer file))
    (execute-kbd-macro (vconcat (kbd "C-u M-x") "ctxls-ask" (kbd "RET") "without the file" (kbd "RET")))
    (should (equal (car (funcall prompts)) "Ask ctxls: "))
    (ctxls-test--wait "the third answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\nwithout the file\n" (ctxls-test--chat-text)))
    ;; The option off: no file unless a region is active.
    (setq ctxls-send-active-file nil)
    (ctxls-test--mx "ctxls-ask" "no file by default")
    (should (equal (car (funcall prompts)) "Ask ctxls: "))
    (ctxls-test--wait "the fourth answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\nno file by default\n" (ctxls-test--chat-text)))
    (should-not (string-search "_with" (cadr (split-string (ctxls-test--chat-text) "without the file"))))
    (ctxls-test--wait "the model's title" (lambda () (equal ctxls--session-title "Emacs Test Title")) 30)
    (ctxls-test--stop)))

(ert-deftest ctxls-test-cancel ()
  "Cancel keeps the partial answer, marked cancelled; the next ask works."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "count slowly")
  (ctxls-test--wait "the first word" (lambda () (string-search "one " (ctxls-test--chat-text))))
  (should ctxls--turn)
  (ctxls-test--mx "ctxls-cancel")
  (ctxls-test--wait "the turn to end" (lambda () (null ctxls--turn)))
  (should (string-search "## ctxls\n\none \n\n_cancelled_\n" (ctxls-test--chat-text)))
  (should-not (ctxls-test--said "error"))
  (should-not (string-match-p "busy" (ctxls-test--lighter)))
  ;; The next question is not refused.
  (ctxls-test--mx "ctxls-ask" "again please")
  (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
  ;; main.go, the current buffer's file, went with each question.
  (should (string-search "## You\n\n_with main.go_\n\nagain please\n\n## ctxls\n\nafter cancel ok\n" (ctxls-test--chat-text)))
  (should-not (ctxls-test--said "a turn is running"))
  ;; A provider failure is shown in the chat, not only in the echo area.
  (ctxls-test--wait "the model's title" (lambda () (equal ctxls--session-title "Emacs Test Title")) 30)
  (ctxls-test--mx "ctxls-ask" "fail now")
  (ctxls-test--wait "the failed turn" (lambda () (null ctxls--turn)))
  (should (string-match-p "## You\n\n_with main.go_\n\nfail now\n\n## ctxls\n\n_error: .*no such model.*_\n" (ctxls-test--chat-text)))
  ;; The daemon dies: the next question restarts it in the same session,
  ;; with the buffers open again.
  (let ((proc (jsonrpc--process ctxls--connection))
        (session ctxls--session-id))
    (signal-process proc 'KILL)
    (ctxls-test--wait "the exit to be noticed" (lambda () (null ctxls--connection)))
    (should (ctxls-test--said "the daemon exited"))
    (ctxls-test--mx "ctxls-ask" "after the restart")
    (ctxls-test--wait "the answer after the restart"
                      (lambda () (and (null ctxls--turn)
                                      (string-search "restarted fine" (ctxls-test--chat-text)))))
    (should (equal ctxls--session-id session))
    (with-current-buffer (get-file-buffer (ctxls-test--file "main.go"))
      (should ctxls--uri)
      (ctxls-test--same "after the restart")))
  ;; A single header: all the turns are in the same session.
  (should (= 1 (cl-count-if (lambda (l) (string-prefix-p "# " l))
                            (split-string (ctxls-test--chat-text) "\n"))))
  (ctxls-test--stop))

(ert-deftest ctxls-test-resume ()
  "Resume and search show the stored history, a header per session."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  ;; RET takes the most recent session: the cancel test's.
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the resumed history" (lambda () (string-search "after cancel ok" (ctxls-test--chat-text))))
  (let ((chat (ctxls-test--chat-text)))
    (should (string-prefix-p "# Emacs Test Title\n" chat))
    (should (string-search "## You\n\n_with main.go_\n\ncount slowly\n\n## ctxls\n\none \n\n_cancelled_" chat))
    (should (string-search "## You\n\n_with main.go_\n\nagain please\n\n## ctxls\n\nafter cancel ok" chat))
    (should (string-search "## You\n\n_with main.go_\n\nafter the restart\n\n## ctxls\n\nrestarted fine" chat)))
  (ctxls-test--wait "the resumed context" (lambda () (ctxls-test--said "resumed context")))
  ;; Search the messages for a word of the first session's answer.
  (ctxls-test--mx "ctxls-search" "greeting" "")
  (ctxls-test--wait "the found session" (lambda () (string-search "final words." (ctxls-test--chat-text))))
  (let ((chat (ctxls-test--chat-text)))
    (should (string-search "\n\n# Emacs Test Title\n\n## You\n\n_with main.go:3-4_\n\nwhat does this do?" chat))
    (should (equal ctxls--session-title "Emacs Test Title")))
  (ctxls-test--stop))

(ert-deftest ctxls-test-context ()
  "Add the last file from the chat buffer; show, preview, remove; new session."
  (ctxls-test--setup)
  (let ((file (ctxls-test--file "main.go")))
    (find-file file)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (ctxls-chat)
    (should (eq (current-buffer) ctxls--chat))
    (should (equal (buffer-name) "*ctxls chat*"))
    (should-not buffer-file-name)
    (ctxls-test--mx "ctxls-add-file")
    (ctxls-test--wait "added" (lambda () (ctxls-test--said "ctxls: added main.go to the context (1 files)")))
    (should (equal (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-context-get nil) :context) :files)
                   (vector file)))
    (ctxls-test--mx "ctxls-show-context")
    (ctxls-test--wait "the context buffer"
                      (lambda () (and (get-buffer "*ctxls context*")
                                      (with-current-buffer "*ctxls context*"
                                        (string-search (concat "files:\n  " file) (buffer-string))))))
    (with-current-buffer "*ctxls context*" (should buffer-read-only))
    (ctxls-test--mx "ctxls-preview" "why is it fast?")
    (ctxls-test--wait "the preview"
                      (lambda () (and (get-buffer "*ctxls preview*")
                                      (with-current-buffer "*ctxls preview*"
                                        (string-search "</ctxls-context>\n\nwhy is it fast?" (buffer-string))))))
    (with-current-buffer "*ctxls preview*"
      (should buffer-read-only)
      (should (string-search "# Prompt preview (test-model)" (buffer-string)))
      ;; The file in the context is in the turn's context, before the question.
      (should (string-search "fmt.Println(\"héllo\")" (buffer-string))))
    ;; Remove it with d on its line in the context buffer, which follows.
    (pop-to-buffer "*ctxls context*")
    (goto-char (point-min))
    (search-forward file)
    (execute-kbd-macro "d")
    (ctxls-test--wait "removed" (lambda () (ctxls-test--said "ctxls: removed main.go from the context (0 left)")))
    (should-not (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-context-get nil) :context) :files))
    (ctxls-test--wait "the context buffer to follow"
                      (lambda () (with-current-buffer "*ctxls context*"
                                   (string-search "No context yet" (buffer-string)))))
    ;; Add it again and remove it at the prompt (RET: the last file buffer).
    (ctxls-add-file file)
    (ctxls-test--wait "added again" (lambda () (with-current-buffer "*ctxls context*"
                                                 (string-search file (buffer-string)))))
    (setq ctxls-test--messages nil)
    (ctxls-test--mx "ctxls-remove-file" "")
    (ctxls-test--wait "removed" (lambda () (ctxls-test--said "ctxls: removed main.go from the context (0 left)")))
    (ctxls-test--mx "ctxls-remove-file")
    (ctxls-test--wait "nothing to remove" (lambda () (ctxls-test--said "ctxls: the context has no files")))
    ;; A new session starts a new block in the chat buffer.
    (let ((before ctxls--session-id))
      (ctxls-test--mx "ctxls-new-session")
      (ctxls-test--wait "the new session" (lambda () (and ctxls--session-id (not (equal before ctxls--session-id)))))
      (should (string-suffix-p "# New session\n\n" (ctxls-test--chat-text)))
      (should (string-match-p "\\[New session\\]" (ctxls-test--lighter))))
    ;; Delete it: RET picks the most recent session, then "yes" confirms.
    ;; (A session nothing was asked in is listed once it holds something:
    ;; here the title given to it.)
    (let ((id ctxls--session-id))
      (ctxls-test--mx "ctxls-rename-session" "Throwaway")
      (ctxls-test--wait "the title" (lambda () (equal ctxls--session-title "Throwaway")))
      (ctxls-test--mx "ctxls-delete-session" "" "yes")
      ;; The current session deleted, the most recent remaining one is
      ;; current, its history shown.
      (ctxls-test--wait "the deletion" (lambda () (ctxls-test--said "ctxls: deleted Throwaway; now in Emacs Test Title")))
      (ctxls-test--wait "the next session's history"
                        (lambda () (string-search "\n# Emacs Test Title\n\n## You\n"
                                                  (cadr (split-string (ctxls-test--chat-text) "# Throwaway\n")))))
      (should ctxls--session-id)
      (should-not (equal ctxls--session-id id))
      (should (equal ctxls--session-title "Emacs Test Title"))
      (should-not (cl-find id (plist-get (ctxls-test--call ctxls-protocol-command-session-list nil) :sessions)
                           :key (lambda (s) (plist-get s :id)) :test #'equal)))
    (ctxls-test--stop)))

(ert-deftest ctxls-test-files ()
  "A file the model writes shows as a button that opens it."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "write the notes")
  (ctxls-test--wait "the end of the turn" (lambda () (null ctxls--turn)))
  (should (ctxls-test--said "ctxls: wrote results/notes.md (20 bytes)"))
  (let ((chat (ctxls-test--chat-text)))
    (should (string-search "[wrote results/notes.md]" chat))
    (should (string-search "Wrote the notes." chat)))
  (with-current-buffer ctxls--chat
    (goto-char (point-min))
    (search-forward "[wrote results/notes.md]")
    (push-button (match-beginning 0)))
  (ctxls-test--wait "the written file"
                    (lambda () (let ((b (get-buffer "notes.md")))
                                 (and b (equal (with-current-buffer b (buffer-string)) "hello from the model"))))
                    30)
  (should (string-match-p "/results/notes.md\\'" (buffer-file-name (get-buffer "notes.md"))))
  ;; Opened in Emacs, the file the model wrote is not one of the user's
  ;; files to the model.
  (with-current-buffer "notes.md" (should ctxls--uri))
  (let ((input (ctxls-test--model-input)))
    (should (string-search (ctxls-test--file "main.go") input))
    (should-not (string-search (buffer-file-name (get-buffer "notes.md")) input)))
  ;; The folder moves with the title, also between the daemon's answer and
  ;; the opening: a file not there yet is asked for again, not opened empty.
  (let* ((folder (file-name-directory (directory-file-name (file-name-directory (buffer-file-name (get-buffer "notes.md"))))))
         (later (expand-file-name "results/later.md" folder)))
    (ctxls--open-session-file ctxls--session-id "results/later.md")
    (run-at-time 0.1 nil (lambda () (with-temp-file later (insert "there now"))))
    (ctxls-test--wait "the file written after the click"
                      (lambda () (let ((b (get-buffer "later.md")))
                                   (and b (equal (with-current-buffer b (buffer-string)) "there now")))))
    (ctxls--open-session-file ctxls--session-id "results/never.md")
    (ctxls-test--wait "the missing file said" (lambda () (ctxls-test--said "results/never.md is no longer in the session's folder")))
    (should-not (get-buffer "never.md")))
  (ctxls-test--stop))

(ert-deftest ctxls-test-compact ()
  "Compact summarises all but the newest turn and marks where the model's view starts."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  ;; The cancel test's session: four turns, the newest "after the restart".
  (ctxls-test--mx "ctxls-search" "restarted" "")
  (ctxls-test--wait "the session" (lambda () (string-search "restarted fine" (ctxls-test--chat-text))))
  (ctxls-test--mx "ctxls-compact")
  (ctxls-test--wait "the compaction" (lambda () (ctxls-test--said "summarised for the model: the first 3 questions and their answers$")))
  (ctxls-test--wait "the mark" (lambda () (string-search "_summarised for the model: the first " (ctxls-test--chat-text))))
  (let* ((chat (ctxls-test--chat-text))
         ;; The block rendered after the compaction: the last header's.
         (start (let ((i 0) last)
                  (while (setq i (string-search "# Emacs Test Title\n" chat i))
                    (setq last i i (1+ i)))
                  last))
         (block (substring chat start))
         (mark (string-search "_summarised for the model: the first " block)))
    (should mark)
    (should (string-match-p "_summarised for the model: the first \\(?:question and its answer\\|[0-9]+ questions and their answers\\); all are kept here_" block))
    ;; Every message is still shown; the mark follows the last turn summarised.
    (should (< (string-search "## You\n\n_with main.go_\n\ncount slowly" block) (string-search "## You\n\n_with main.go_\n\nfail now" block) mark
               (string-search "## You\n\n_with main.go_\n\nafter the restart\n\n## ctxls\n\nrestarted fine" block)))
    ;; The summary itself is not shown as a message; the mark's button
    ;; shows it.
    (should-not (string-search "Goal: explain main.go" block))
    (should (string-search "all are kept here_ [show the summary]\n" block)))
  (select-window (display-buffer ctxls--chat))
  (goto-char (point-max))
  (search-backward "[show the summary]")
  (execute-kbd-macro (kbd "RET"))
  (let ((buf (get-buffer "*ctxls summary*")))
    (should (get-buffer-window buf))
    (should (equal (with-current-buffer buf (buffer-string)) "## Goal\n\nGoal: explain main.go.")))
  (ctxls-test--stop))

;;;; Tool calls

(defun ctxls-test--mcp-servers ()
  "$CTXLS_MCP_SERVERS (mcpServers JSON) as `ctxls-mcp-servers' documents it."
  (mapcar (lambda (e)
            (let ((spec (cdr e)))
              (list (symbol-name (car e))
                    :command (alist-get 'command spec)
                    :args (append (alist-get 'args spec) nil)
                    :env (mapcar (lambda (kv) (cons (symbol-name (car kv)) (cdr kv)))
                                 (alist-get 'env spec)))))
          (json-parse-string (getenv "CTXLS_MCP_SERVERS") :object-type 'alist)))

(defvar ctxls-test--answer-keys nil
  "The keys that answer the next questions, in order (nil: none, the
question is left to time out).")

(defvar ctxls-test--asked nil
  "(QUESTION CHAT-TEXT) of each question seen, newest first.")

(defvar ctxls-test--asked-seen 0
  "How many questions `ctxls-test--answer-questions' has seen.")

(defun ctxls-test--answer-questions ()
  "Answer a question newly open as a person at the keyboard would.
Once the chat shows it and its call waiting, go to the chat's window
and type the next of `ctxls-test--answer-keys' there, then go back.
Called while waiting, from the test's own flow."
  (when (and ctxls--open-questions (/= ctxls--questions-asked ctxls-test--asked-seen)
             (string-search "waiting for your permission" (ctxls-test--chat-text))
             (string-search "\n> ctxls asks: " (ctxls-test--chat-text)))
    (setq ctxls-test--asked-seen ctxls--questions-asked)
    (push (list (plist-get (plist-get (car ctxls--open-questions) :params) :message) (ctxls-test--chat-text))
          ctxls-test--asked)
    (when-let ((keys (pop ctxls-test--answer-keys))
               (back (selected-window)))
      (select-window (get-buffer-window ctxls--chat))
      (execute-kbd-macro (kbd keys))
      (select-window back)))
  nil)

(defun ctxls-test--tool-lines ()
  "The chat buffer's tool call lines, in order."
  (cl-remove-if-not (lambda (l) (string-match-p "\\`[•▸▾] .* — " l))
                    (split-string (ctxls-test--chat-text) "\n")))

(defun ctxls-test--toggle-at (line key)
  "Type KEY on the chat buffer's tool call LINE (its text after the glyph).
Return whether the call's output is then shown."
  (pop-to-buffer ctxls--chat)
  (goto-char (point-max))
  (should (search-backward line nil t))
  (beginning-of-line)
  (execute-kbd-macro (kbd key))
  (let ((ov (get-text-property (line-beginning-position) 'ctxls-tool-overlay)))
    (should ov)
    (should (equal (char-after (line-beginning-position)) (if (overlay-get ov 'invisible) ?▸ ?▾)))
    (not (invisible-p (overlay-start ov)))))

(ert-deftest ctxls-test-tools ()
  "The model's tool calls are lines in the chat; the user answers each question."
  (ctxls-test--setup)
  (setq ctxls-mcp-servers (ctxls-test--mcp-servers)
        ctxls-tool-permission-timeout 2)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  ;; Allow once, deny, allow once, none (the question times out), always
  ;; in this session (A asks to confirm: y), allow once.
  (setq ctxls-test--answer-keys (list "y" "n" "y" nil "A y" "y"))
  (let ((echo "t · echo `{\"text\":\"hi\"}`"))
    (cl-flet ((turn (question last-words)
                (ctxls-test--mx "ctxls-ask" question)
                (ctxls-test--wait (concat "the answer to " question)
                                  (lambda () (ctxls-test--answer-questions)
                                    (and (null ctxls--turn)
                                         (string-search last-words (ctxls-test--chat-text)))))))
      ;; 1. ctxls's own write_file runs unasked; echo is asked, and allowed once.
      (turn "write the notes and echo hi" "Echoed.")
      (pcase-let ((`(,question ,chat) (car (last ctxls-test--asked))))
        (should (equal question "ctxls: the model wants to call t · echo (read-only) with {\"text\":\"hi\"}. Allow it?"))
        ;; The call's line waited while the question was in the chat,
        ;; under it, with its keys.
        (should (string-search (concat "• " echo " — waiting for your permission\n\n"
                                       "> ctxls asks: the model wants to call t · echo (read-only) with {\"text\":\"hi\"}. Allow it?\n"
                                       "> [y] allow once  [n] deny  [A] always in this session (asks to confirm)  (or M-x ctxls-answer)\n\n")
                               chat)))
      ;; The echo area said how to answer, then (cut to its width, 80
      ;; columns in batch) what is asked; nothing read a key.
      (should (ctxls-test--said (regexp-quote "ctxls: in the chat, y allow, n deny, A always (or M-x ctxls-answer): the model")))
      (let ((chat (ctxls-test--chat-text)))
        ;; One line per call, changed in place; the answer after a blank line.
        (should (= 1 (cl-count-if (lambda (l) (string-search echo l)) (split-string chat "\n"))))
        (should (string-search "## ctxls\n\n▸ write_file `{\"path\":\"results/notes.md\",\"content\":\"hello\"}` — done\n```\ncreated results/notes.md (5 bytes)\n```\n" chat))
        ;; The question's lines became one that says the answer.
        (should (string-search (concat "▸ " echo " — done\n```\necho: hi\n```\n\n"
                                       "> ctxls asked: the model wants to call t · echo (read-only) with {\"text\":\"hi\"}. Allow it? → allowed once\n\n"
                                       "Echoed.\n")
                               chat))
        (should-not (string-search "[y] allow once" chat)))
      ;; The output is hidden until RET on the line; TAB hides it again.
      (with-current-buffer ctxls--chat
        (goto-char (point-min))
        (search-forward "echo: hi")
        (should (invisible-p (match-beginning 0))))
      (should (ctxls-test--toggle-at echo "RET"))
      (should-not (ctxls-test--toggle-at echo "TAB"))
      (ctxls-test--wait "the model's title" (lambda () (equal ctxls--session-title "Tool session")))

      ;; 2. add is denied, fail is allowed and fails.
      (turn "add and fail" "One was refused.")
      (should (equal (car (nth 1 (reverse ctxls-test--asked)))
                     "ctxls: the model wants to call t · add (may change or delete things) with {\"a\":1,\"b\":2}. Allow it?"))
      (let ((chat (ctxls-test--chat-text)))
        (should (string-search "▸ t · add `{\"a\":1,\"b\":2}` — declined\n```\nThe user declined this call of t · add" chat))
        (should (string-search "▸ t · fail — failed\n```\nerror: " chat))
        (should (string-search "Allow it? → denied\n" chat)))
      (should (ctxls-test--toggle-at "t · add `{\"a\":1,\"b\":2}` — declined" "RET"))

      ;; 3. No answer: the question goes away when the daemon stops
      ;; waiting (2 s), and the call does not run (the model is told it
      ;; was not answered, TestEmacsTools checks).
      (let ((t0 (float-time)))
        (turn "echo late" "No answer came.")
        (should (>= (- (float-time) t0) 1.9)))
      (should (= 4 (length ctxls-test--asked)))
      (should-not ctxls--open-questions)
      (should (string-search "with {\"text\":\"late\"}. Allow it? → no answer in time\n" (ctxls-test--chat-text)))
      (should (ctxls-test--said "ctxls: no answer within 2 s: the call did not run"))
      (should (string-search "▸ t · echo `{\"text\":\"late\"}` — declined\n" (ctxls-test--chat-text)))

      ;; 4. Always in this session: the second call is not asked.  A slow
      ;; call shows its server's progress while it runs.
      ;; (Looked at as each update is drawn: a timer's look could fall
      ;; after two updates drawn at once on a busy machine.)
      (let* ((progress nil)
             (watch (lambda (&rest _)
                      (when (string-search "• t · slow `{\"steps\":3,\"ms\":150}` — running: step 2 (2/3)\n"
                                           (ctxls-test--chat-text))
                        (setq progress t)))))
        (advice-add 'ctxls--tool-update :after watch)
        (unwind-protect (turn "echo twice" "Twice.")
          (advice-remove 'ctxls--tool-update watch))
        (should progress))
      (should (= 6 (length ctxls-test--asked)))
      (should (string-search "t · slow" (car (car ctxls-test--asked))))
      (should (string-search "with {\"text\":\"a\"}. Allow it? → always allowed in this session\n" (ctxls-test--chat-text)))
      (should (string-search "▸ t · echo `{\"text\":\"b\"}` — done\n" (ctxls-test--chat-text)))
      (should (string-search "▸ t · slow `{\"steps\":3,\"ms\":150}` — done\n" (ctxls-test--chat-text))))
    (with-temp-file (getenv "CTXLS_TOOL_LINES")
      (insert (string-join (ctxls-test--tool-lines) "\n")))
    (ctxls-test--stop)))

(ert-deftest ctxls-test-tools-resume ()
  "A resumed session's history shows its tool calls as the live chat did."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the history" (lambda () (string-search "Twice." (ctxls-test--chat-text))))
  ;; The MCP calls' lines as they were, shown or hidden aside (write_file's
  ;; stored arguments leave its content out).
  (let ((mcp (lambda (lines)
               (mapcar (lambda (l) (substring l 1))
                       (cl-remove-if-not (lambda (l) (string-search " · " l)) lines))))
        (want (with-temp-buffer
                (insert-file-contents (getenv "CTXLS_TOOL_LINES"))
                (split-string (buffer-string) "\n"))))
    (should (= 7 (length (funcall mcp want))))
    (should (equal (funcall mcp (ctxls-test--tool-lines)) (funcall mcp want))))
  (let ((chat (ctxls-test--chat-text)))
    ;; One answer heading per turn.
    (should (string-search "## You\n\n_with main.go_\n\nwrite the notes and echo hi\n\n## ctxls\n\n▸ write_file " chat))
    ;; Each turn ends with what its answers cost (the fake provider says
    ;; 10 prompt tokens and a completion token a chunk for each request).
    (should (string-search "▸ t · echo `{\"text\":\"hi\"}` — done\n```\necho: hi\n```\n\nEchoed.\n\n_tokens: 20 in · 1 out_\n\n## You" chat)))
  (should (ctxls-test--toggle-at "t · echo `{\"text\":\"hi\"}` — done" "RET"))
  (ctxls-test--stop))

;;;; Questions: trust, M-x ctxls-answer, cancelled

(ert-deftest ctxls-test-questions ()
  "A workspace's .mcp.json is trusted with M-x ctxls-answer; a question
open as its turn is cancelled closes, saying so."
  (ctxls-test--setup)
  (setq ctxls-tool-permission-timeout 30)
  (find-file (ctxls-test--file "main.go"))
  (delete-other-windows)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let ((main (current-buffer))
        (before (buffer-string)))
    (ctxls-test--mx "ctxls-ask" "use the workspace's tools")
    (ctxls-test--wait "the trust question"
                      (lambda () (and ctxls--open-questions (string-search "> ctxls asks: " (ctxls-test--chat-text)))))
    (let ((chat (ctxls-test--chat-text))
          (q (plist-get (car ctxls--open-questions) :params)))
      (should (equal (plist-get q :kind) "trust"))
      ;; Under the answer's heading, where "thinking…" was.
      (should (string-search "## ctxls\n\n> ctxls asks: " chat))
      (should (string-search "configures MCP servers, which run on this machine: w: " chat))
      (should (string-search "> [T] trust (asks to confirm)  [n] don't trust  (or M-x ctxls-answer)\n" chat))
      (should (buffer-local-value 'ctxls-question-keys ctxls--chat)))
    ;; Typed in the file, T and n are letters of the file: nothing answers.
    (should (eq (window-buffer (selected-window)) main))
    (execute-kbd-macro "Tn")
    (accept-process-output nil 0.3)
    (should (equal (buffer-string) (concat "Tn" before)))
    (should (= 1 (length ctxls--open-questions)))
    ;; M-x ctxls-answer, from the file: the answer picked with completion.
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-answer" (kbd "RET") "Trust" (kbd "TAB RET")))
    (ctxls-test--wait "the trust question closed"
                      (lambda () (string-search "Trust what it configures and let the model use these servers? → trusted\n" (ctxls-test--chat-text))))
    (should-not (string-search "[T] trust" (ctxls-test--chat-text)))
    (should (equal (buffer-string) (concat "Tn" before)))
    ;; The model calls the trusted file's server: asked, then the turn is
    ;; cancelled while the question is open.
    (ctxls-test--wait "the permission question"
                      (lambda () (and ctxls--open-questions
                                      (string-search "waiting for your permission" (ctxls-test--chat-text))
                                      (string-search "> [y] allow once" (ctxls-test--chat-text)))))
    (should (eq (window-buffer (selected-window)) main))
    (ctxls-test--mx "ctxls-cancel")
    (ctxls-test--wait "the permission question closed"
                      (lambda () (string-search "with {\"text\":\"x\"}. Allow it? → cancelled with its turn\n"
                                                (ctxls-test--chat-text))))
    (ctxls-test--wait "the turn's end" (lambda () (null ctxls--turn)))
    (should-not ctxls--open-questions)
    (should-not (buffer-local-value 'ctxls-question-keys ctxls--chat))
    (should-not (string-search "[y] allow once" (ctxls-test--chat-text)))
    (should (= 2 ctxls--questions-asked))
    (should (equal (mapcar #'cdr ctxls--questions-closed) '("cancelled" "trust")))
    ;; Nothing is open: M-x ctxls-answer says so.
    (let ((err (should-error (ctxls-answer nil nil) :type 'user-error)))
      (ignore err))
    (should-error (call-interactively #'ctxls-answer) :type 'user-error))
  ;; The daemon exits with a question open (one made up here): it can no
  ;; longer be answered, and its line says so.
  (ctxls--on-question (list :id "made-up" :kind "permission" :message "ctxls: may it? Allow it?"
                            :actions (vector (list :id "allow" :title "Allow once" :deliberate :json-false))))
  (should (string-search "\n> ctxls asks: may it? Allow it?\n> [y] allow once  (or M-x ctxls-answer)\n" (ctxls-test--chat-text)))
  (ctxls-test--stop)
  ;; (Closed by the connection's end, which jsonrpc runs after the process
  ;; is seen gone: waited for.)
  (ctxls-test--wait "the question closed by the daemon's exit" (lambda () (null ctxls--open-questions)) 5)
  (should (string-search "\n> ctxls asked: may it? Allow it? → not answered: the daemon exited\n" (ctxls-test--chat-text))))

;;;; The model's searches

(defconst ctxls-test--search-lines
  '("grep `loginRedirect` — 2 matches in 2 files"
    "find_files `**/*.go` — 3 files"
    "list_directory `auth` — 2 entries")
  "The search calls' lines (after the glyph) in the chat.")

(defun ctxls-test--push-result (text)
  "Push the search result button on the chat's line TEXT with RET.
Return the buffer and line it visits, as (FILE LINE LINE-TEXT), FILE
relative to the workspace."
  (pop-to-buffer ctxls--chat)
  (goto-char (point-min))
  (should (search-forward (concat "\n" text "\n") nil t))
  (forward-line -1)
  (should (button-at (point)))
  (should (eq (button-type (button-at (point))) 'ctxls-search-result))
  (execute-kbd-macro (kbd "RET"))
  (should-not (eq (current-buffer) ctxls--chat))
  ;; The chat stays on screen beside it.
  (should (get-buffer-window ctxls--chat))
  (list (file-relative-name buffer-file-name (getenv "CTXLS_WORK"))
        (line-number-at-pos)
        (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(ert-deftest ctxls-test-search ()
  "The model's searches are lines in the chat; their results visit the files."
  (ctxls-test--setup)
  ;; No .#handler.go lock link beside the edited file: list_directory would
  ;; count it.
  (setq create-lockfiles nil)
  (find-file (ctxls-test--file "auth/handler.go"))
  (delete-other-windows)
  (ctxls-mode 1)
  (ctxls-test--ready)
  ;; Typed, not saved: only the buffer calls loginRedirect.
  (goto-char (point-min))
  (forward-line 2)
  (delete-region (point) (line-end-position))
  (insert "func handle() { loginRedirect() }")
  (ctxls-test--mx "ctxls-ask" "where is loginRedirect called?")
  (ctxls-test--turn-end "It is called from handle.")
  (let ((chat (ctxls-test--chat-text)))
    (should (equal (mapcar (lambda (l) (substring l 2)) (ctxls-test--tool-lines)) ctxls-test--search-lines))
    (should (string-search (concat "▸ grep `loginRedirect` — 2 matches in 2 files\n```\n"
                                   "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)\n\n"
                                   "auth/login.go:3: func loginRedirect() {}\n```\n")
                           chat)))
  ;; Hidden until RET on the line.
  (should (ctxls-test--toggle-at "grep `loginRedirect` — 2 matches in 2 files" "RET"))
  ;; RET on a match visits its file at its line: the unsaved one as typed.
  (should (equal (ctxls-test--push-result "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)")
                 '("auth/handler.go" 3 "func handle() { loginRedirect() }")))
  (should (buffer-modified-p))
  (should (equal (ctxls-test--push-result "auth/login.go:3: func loginRedirect() {}")
                 '("auth/login.go" 3 "func loginRedirect() {}")))
  ;; find_files' paths visit their files.
  (should (ctxls-test--toggle-at "find_files `**/*.go` — 3 files" "RET"))
  (should (equal (car (ctxls-test--push-result "main.go")) "main.go"))
  (with-temp-file (getenv "CTXLS_TOOL_LINES")
    (insert (string-join (ctxls-test--tool-lines) "\n")))
  (ctxls-test--stop))

(ert-deftest ctxls-test-search-resume ()
  "A resumed session shows its searches as the live chat did."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the history" (lambda () (string-search "It is called from handle." (ctxls-test--chat-text))))
  ;; The lines as they were (shown or hidden aside), the summaries read
  ;; from the stored results.
  (should (equal (mapcar (lambda (l) (substring l 2)) (ctxls-test--tool-lines))
                 (mapcar (lambda (l) (substring l 2))
                         (with-temp-buffer
                           (insert-file-contents (getenv "CTXLS_TOOL_LINES"))
                           (split-string (buffer-string) "\n")))))
  (should (equal (mapcar (lambda (l) (substring l 2)) (ctxls-test--tool-lines)) ctxls-test--search-lines))
  (should (ctxls-test--toggle-at "grep `loginRedirect` — 2 matches in 2 files" "RET"))
  (should (equal (ctxls-test--push-result "auth/login.go:3: func loginRedirect() {}")
                 '("auth/login.go" 3 "func loginRedirect() {}")))
  (ctxls-test--stop))

;;;; An edit accepted in part

(ert-deftest ctxls-test-review-part ()
  "An edit of two changes is accepted with one left out (k on its hunk)."
  (ctxls-test--setup)
  (let* ((file (ctxls-test--file "letters.txt"))
         (letters (find-file file)))
    (delete-other-windows)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (ctxls-test--mx "ctxls-ask" "capitalise the first and the last")
    (ctxls-test--review 0 "h1")
    ;; Not on a hunk: k says where to go, and leaves nothing out.
    (goto-char (point-min))
    (should-error (execute-kbd-macro (kbd "k")) :type 'user-error)
    (should (= ctxls--review-left-out 0))
    ;; The first change (a → A) left out, the other (l → L) accepted.
    (re-search-forward "^\\+A$")
    (execute-kbd-macro (kbd "k"))
    (should (= ctxls--review-left-out 1))
    (should-not (save-excursion (goto-char (point-min)) (re-search-forward "^\\+A$" nil t)))
    (should (ctxls-test--said "left out: 1 change"))
    (execute-kbd-macro (kbd "C-c C-c"))
    (ctxls-test--turn-end "Done.")
    (should (equal (ctxls-test--text letters) "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\n"))
    (should (buffer-modified-p letters))
    (ctxls-test--stop)))

;;;; The model's plan

(defconst ctxls-test--plan
  (concat "• plan — 1 of 3 done\n"
          "- [x] Read main.go\n"
          "- [~] Fix the handler  (high priority)\n"
          "- [ ] Run the tests\n")
  "The plan as the chat shows it: its call's line, then the items.")

(defun ctxls-test--plan-shown ()
  "Check that the chat shows the plan, its items visible."
  (let ((chat (ctxls-test--chat-text)))
    (should (string-search ctxls-test--plan chat))
    (with-current-buffer ctxls--chat
      (goto-char (point-min))
      (should (search-forward "- [~] Fix the handler" nil t))
      (should-not (invisible-p (1- (point)))))))

(ert-deftest ctxls-test-plan ()
  "The model's plan is a task list under its call's line, shown."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "make a plan")
  (ctxls-test--turn-end "Planned.")
  (ctxls-test--plan-shown)
  (ctxls-test--stop))

(ert-deftest ctxls-test-plan-resume ()
  "A resumed session shows the plan as the live chat did."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the history" (lambda () (string-search "Planned." (ctxls-test--chat-text))))
  (ctxls-test--plan-shown)
  (ctxls-test--stop))

;;;; The model's commands

(defconst ctxls-test--command-line
  "run_command `printf 'line one\\nline two\\n'; sleep 1; echo done; exit 2`"
  "The first command's call line, after its glyph.")

(defun ctxls-test--commands-shown ()
  "Check the two finished commands' lines and output blocks in the chat."
  (let ((chat (ctxls-test--chat-text)))
    ;; The whole output with the exit status, shown under the line.
    (should (string-search (concat "• " ctxls-test--command-line " — failed: exit status 2\n"
                                   "```\nline one\nline two\ndone\n[exit status 2]\n```\n")
                           chat))
    ;; 41 lines: the last 12 shown, under a note that says how many are above.
    (should (string-search (concat "▸ run_command `seq 1 40` — exit status 0\n```\n"
                                   (mapconcat (lambda (n) (format "%d\n" n)) (number-sequence 1 29) "")
                                   "… 29 lines above (RET on the line shows them)\n"
                                   (mapconcat (lambda (n) (format "%d\n" n)) (number-sequence 30 40) "")
                                   "[exit status 0]\n```\n")
                           chat)))
  (with-current-buffer ctxls--chat
    (goto-char (point-min))
    (search-forward ctxls-test--command-line)
    ;; Failed, in the failed face; its output not hidden.
    (search-forward "failed: exit status 2")
    (should (memq 'ctxls-tool-failed (ensure-list (get-text-property (match-beginning 0) 'face))))
    (search-forward "line one")
    (should-not (invisible-p (match-beginning 0)))
    ;; The exit status too (an overlay's face: markdown-mode's for the code
    ;; block would hide a text property's).
    (search-forward "[exit status 2]")
    (should (memq 'ctxls-tool-failed (ensure-list (get-char-property (match-beginning 0) 'face))))
    ;; The second: lines 1 to 29 hidden, the note and the tail shown.
    (search-forward "\n1\n")
    (should (invisible-p (1- (point))))
    (search-forward "… 29 lines above")
    (should-not (invisible-p (match-beginning 0)))
    (search-forward "\n40\n")
    (should-not (invisible-p (1- (point)))))
  ;; RET shows the lines above (and drops the note), TAB hides them again.
  (should (ctxls-test--toggle-at "run_command `seq 1 40`" "RET"))
  (with-current-buffer ctxls--chat
    (goto-char (point-min))
    (search-forward "… 29 lines above")
    (should (invisible-p (match-beginning 0))))
  (should-not (ctxls-test--toggle-at "run_command `seq 1 40`" "TAB")))

(ert-deftest ctxls-test-command ()
  "The model's commands: asked, their output shown as it comes, then with the exit status."
  (ctxls-test--setup)
  (let* ((main (find-file (ctxls-test--file "main.go")))
         (window (selected-window))
         (running nil) (moved nil))
    (ctxls-mode 1)
    (ctxls-test--ready)
    (goto-char (point-min))
    (forward-line 4)
    (let* ((at (point))
          ;; Looked at as each update is drawn: the output so far while
          ;; the command sleeps, before "done".
          (watch (lambda (&rest _)
                   (let ((chat (ctxls-test--chat-text)))
                     (when (and (string-search (concat "• " ctxls-test--command-line " — running\n"
                                                       "```\nline one\nline two\n```\n")
                                               chat)
                                (not (string-search "\ndone\n" chat)))
                       (setq running t)))
                   (unless (and (eq (selected-window) window)
                                (= (with-current-buffer main (point)) at)
                                (= (window-point window) at))
                     (setq moved (list (selected-window) (with-current-buffer main (point))))))))
      ;; Allow once (y in the chat), then always this command (A, then y
      ;; to confirm).
      (setq ctxls-test--answer-keys (list "y" "A y"))
      (advice-add 'ctxls--tool-update :after watch)
      (unwind-protect
          (progn
            (ctxls-test--mx "ctxls-ask" "run the commands")
            (ctxls-test--wait "the turn's end"
                              (lambda () (ctxls-test--answer-questions)
                                (and (null ctxls--turn) (string-search "Ran them." (ctxls-test--chat-text))))
                              20))
        (advice-remove 'ctxls--tool-update watch))
      (should running)
      (should-not moved)
      (should (= 2 (length ctxls-test--asked)))
      (should (string-search "the model wants to run the command printf 'line one\\nline two\\n'; sleep 1; echo done; exit 2 in "
                             (car (car (last ctxls-test--asked)))))
      (should (string-search "→ allowed once\n" (ctxls-test--chat-text)))
      (ctxls-test--commands-shown)))
  (ctxls-test--stop))

(ert-deftest ctxls-test-command-resume ()
  "A resumed session shows the commands as the live chat did."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the history" (lambda () (string-search "Ran them." (ctxls-test--chat-text))))
  (ctxls-test--commands-shown)
  (ctxls-test--stop))

;;;; The model's edits

(defun ctxls-test--text (buffer)
  "BUFFER's text, without properties."
  (with-current-buffer buffer
    (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))

(defun ctxls-test--disk (file)
  "FILE's text on disk, or nil."
  (when (file-exists-p file)
    (with-temp-buffer
      (insert-file-contents file)
      (buffer-string))))

(defvar ctxls-test--reviews-seen nil
  "The ids of the reviews shown so far.")

(defun ctxls-test--review (n label)
  "Wait until the model's edit LABEL (e1, e2, ... in the fake provider's
script) is shown for review, N reviews decided before, then go to its
window as a person would (it is shown, never selected: typing goes on
where it went).  A review carries ctxls's own id for the call
\(ANSWER:INDEX, unique in the session), never the provider's LABEL; each
review's id is new."
  (ctxls-test--wait (format "the review of %s" label)
                    (lambda ()
                      (and ctxls--review (= ctxls--reviewed n)
                           (not (member (plist-get (plist-get ctxls--review :params) :id) ctxls-test--reviews-seen))
                           (get-buffer-window "*ctxls review*"))))
  (let ((id (plist-get (plist-get ctxls--review :params) :id)))
    (unless (and (stringp id) (string-match-p "\\`[0-9]+:[0-9]+\\'" id) (not (equal id label)))
      (error "The review of %s has the id %S, not ctxls's own" label id))
    (push id ctxls-test--reviews-seen))
  (should-not (eq (window-buffer (selected-window)) (get-buffer "*ctxls review*")))
  (select-window (get-buffer-window "*ctxls review*")))

(defun ctxls-test--turn-end (last-words)
  "Wait until the turn has ended with LAST-WORDS in the chat."
  (ctxls-test--wait (concat "the turn ending with " last-words)
                    (lambda () (and (null ctxls--turn) (string-search last-words (ctxls-test--chat-text))))))

(ert-deftest ctxls-test-edits ()
  "The model's edits are shown as diffs and applied to the buffers, unsaved."
  (ctxls-test--setup)
  (let* ((file (ctxls-test--file "main.go"))
         (tool (ctxls-test--file "tool.py"))
         (new-file (ctxls-test--file "pkg/new.go"))
         (on-disk (ctxls-test--disk file))
         (tool-on-disk (ctxls-test--disk tool))
         (main (find-file file))
         before after-e1 typed before-auto)
    (delete-other-windows)
    (ctxls-mode 1)
    (ctxls-test--ready)
    ;; 1. An unsaved line, then a turn whose three edits are shown as diffs:
    ;; the first accepted with C-c C-c, the others rejected with q and C-c C-k.
    (goto-char (point-min))
    (insert "// UNSAVED LINE\n")
    (setq before (ctxls-test--text main)
          after-e1 (replace-regexp-in-string "héllo\")" "héllo, wörld 😀\")" before t t))
    (ctxls-test--mx "ctxls-ask" "edit main")
    (ctxls-test--review 0 "e1")
    (should (eq (window-buffer (selected-window)) (get-buffer "*ctxls review*")))
    (with-current-buffer "*ctxls review*"
      (should (derived-mode-p 'diff-mode))
      (should ctxls-review-mode)
      (should buffer-read-only)
      (should (string-search "-\tfmt.Println(\"héllo\")\n+\tfmt.Println(\"héllo, wörld 😀\")\n" (buffer-string)))
      ;; Against the unsaved text: its line numbers count the unsaved line.
      (should (string-search "\n@@ -4,5 +4,5 @@\n" (buffer-string)))
      (should (string-prefix-p "The model's edit of main.go, against its text now (unsaved edits included):\n\n--- a/"
                               (buffer-string)))
      (should (equal header-line-format
                     " ctxls: edit main.go (+1 −1 lines)   C-c C-c accept   C-c C-a accept all in this turn   C-c C-k reject   k leave a change out")))
    (should (ctxls-test--said (regexp-quote "ctxls: the model wants to edit main.go (+1 −1 lines): C-c C-c accept")))
    (should (string-search "• edit_file `{\"path\":\"main.go\",\"old_string\":\"fmt.Println(\\\"héllo\\\")\"," (ctxls-test--chat-text)))
    (should (string-search "— waiting for your permission" (ctxls-test--chat-text)))
    (execute-kbd-macro (kbd "C-c C-c"))
    (ctxls-test--review 1 "e2")
    (should (equal (ctxls-test--text main) after-e1))
    (should (buffer-modified-p main))
    (should (equal (ctxls-test--disk file) on-disk))
    ;; The second edit was made against the first's result.
    (with-current-buffer "*ctxls review*"
      (should (string-search " \tfmt.Println(\"héllo, wörld 😀\")\n" (buffer-string))))
    (execute-kbd-macro (kbd "q"))       ; quitting the diff rejects
    (ctxls-test--review 2 "e2b")
    (execute-kbd-macro (kbd "C-c C-k"))
    (ctxls-test--turn-end "Done A.")
    (should (equal (ctxls-test--text main) after-e1))
    (should-not (get-buffer "*ctxls review*"))
    (let ((chat (ctxls-test--chat-text)))
      (should (string-search "▸ edit_file `{\"path\":\"main.go\",\"old_string\":\"fmt.Println(\\\"héllo\\\")\"," chat))
      (should (string-search "— declined\n" chat)))
    (with-current-buffer main (ctxls-test--same "the accepted edit"))

    ;; 2. Undo takes the edit back, alone; redo makes it again.
    (select-window (get-buffer-window main))
    (execute-kbd-macro (kbd "C-/"))
    (should (equal (ctxls-test--text main) before))
    (ctxls-test--same "undo")
    (execute-kbd-macro (kbd "C-?"))
    (should (equal (ctxls-test--text main) after-e1))
    (ctxls-test--same "redo")

    ;; 3. ctxls-apply-block: the answer's code block goes in at the file
    ;; window's point, or replaces its active region.
    (let ((chat-win (get-buffer-window ctxls--chat))
          (main-win (get-buffer-window main))
          (block "// from the chat\nvar fromChat = 1\n"))
      (should chat-win)
      (with-selected-window main-win
        (goto-char (point-min))
        (forward-line 2))
      (select-window chat-win)
      (goto-char (point-max))
      (should (search-backward "var fromChat = 1" nil t))
      (ctxls-test--mx "ctxls-apply-block")
      (should (eq (selected-window) main-win))
      (should (equal (ctxls-test--text main)
                     (with-temp-buffer
                       (insert after-e1)
                       (goto-char (point-min))
                       (forward-line 2)
                       (insert block)
                       (buffer-string))))
      (should (ctxls-test--said (regexp-quote "inserted the block (2 lines) into main.go")))
      (ctxls-test--same "the inserted block")
      (execute-kbd-macro (kbd "C-/"))
      (should (equal (ctxls-test--text main) after-e1))
      ;; Lines 1-2 selected, then the chat: the block replaces them.
      (execute-kbd-macro (kbd "M-< C-SPC C-n C-n"))
      (select-window chat-win)
      (should (search-backward "```go" nil t))
      (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-apply-block" (kbd "RET")))
      (should (equal (ctxls-test--text main)
                     (concat block (mapconcat #'identity (nthcdr 2 (split-string after-e1 "\n")) "\n"))))
      (execute-kbd-macro (kbd "C-/"))
      (should (equal (ctxls-test--text main) after-e1))
      ;; Outside a block it says so.
      (select-window chat-win)
      (goto-char (point-min))
      (should-error (ctxls-apply-block) :type 'user-error))
    (ctxls-test--wait "the model's title" (lambda () (equal ctxls--session-title "Edit session")))

    ;; 4. A line typed above the edit during its review: accepted, the
    ;; edit lands beside it (its old text still occurs once; the model is
    ;; told it was edited).  Killing the diff rejects.  C-c C-a accepts
    ;; this and the rest of the turn's edits unasked, a new file among them.
    (ctxls-test--mx "ctxls-ask" "more edits")
    (ctxls-test--review 3 "e3")
    (with-current-buffer main
      (save-excursion
        (goto-char (point-min))
        (insert "// TYPED DURING THE REVIEW\n")))
    (setq typed (replace-regexp-in-string "^package main$" "package main // typed over" (ctxls-test--text main) t t))
    (should (string-prefix-p "// TYPED DURING THE REVIEW\n// UNSAVED LINE\npackage main // typed over\n" typed))
    (execute-kbd-macro (kbd "C-c C-c"))
    (ctxls-test--review 4 "e4")
    (should (equal (ctxls-test--text main) typed))
    (should-not (ctxls-test--said (regexp-quote "refused the model's edit")))
    (kill-buffer "*ctxls review*")
    (ctxls-test--review 5 "e5")
    (execute-kbd-macro (kbd "C-c C-a"))
    (ctxls-test--turn-end "Done B.")
    (should (= ctxls--reviewed 6))
    (should-not ctxls--reviews)
    (should (equal (ctxls-test--text main)
                   (replace-regexp-in-string
                    "func main() {" "func main() { // all"
                    (replace-regexp-in-string "héllo, wörld" "héllo, all" typed t t) t t)))
    (let ((new (find-buffer-visiting new-file)))
      (should new)
      (should (equal (ctxls-test--text new) "package pkg\n"))
      (should (buffer-modified-p new))
      (with-current-buffer new (ctxls-test--same "the new file")))
    (should-not (file-exists-p (file-name-directory new-file)))
    (should (equal (ctxls-test--disk file) on-disk))
    (with-current-buffer main (ctxls-test--same "the second turn"))

    ;; 5. Auto: applied at once, a file not open visited for it; an edit is
    ;; an undo step of its own even right after a change.
    (ctxls-test--mx "ctxls-set-review-mode" "auto")
    (ctxls-test--wait "the review mode" (lambda () (ctxls-test--said "review mode auto")))
    (with-current-buffer main
      (save-excursion
        (goto-char (point-max))
        (insert "// LAST LINE\n")))
    (setq before-auto (ctxls-test--text main))
    ;; Asked from Lisp, not as a command: the command loop would close the
    ;; undo group of the change above by itself.
    (ctxls-ask "auto edits")
    (ctxls-test--turn-end "Done C.")
    (should (= ctxls--reviewed 6))
    (let ((buf (find-buffer-visiting tool)))
      (should buf)
      (should (equal (ctxls-test--text buf) "def hello(name):\n    return 'hello ' + name\n"))
      (should (buffer-modified-p buf))
      (with-current-buffer buf (ctxls-test--same "the file not open")))
    (should (equal (ctxls-test--disk tool) tool-on-disk))
    (should (equal (ctxls-test--text main) (replace-regexp-in-string "héllo, all" "héllo, auto" before-auto t t)))
    (select-window (get-buffer-window main))
    (execute-kbd-macro (kbd "C-/"))
    (should (equal (ctxls-test--text main) before-auto))
    (ctxls-test--same "undo in auto mode")
    (ctxls-test--stop)))

;;;; Undo and redo of a turn's changes

(ert-deftest ctxls-test-undo ()
  "ctxls-undo takes a turn's edits back in the buffers, unsaved text
kept, and removes the file it created; the buffer's undo takes the undo
back; ctxls-redo makes them again; a file typed in since is left."
  (ctxls-test--setup)
  (global-set-key (kbd "C-c x") 'ctxls-command-map)
  (let* ((file (ctxls-test--file "main.go"))
         (new-file (ctxls-test--file "pkg/new.go"))
         (on-disk (ctxls-test--disk file))
         (sync (find-file-noselect (ctxls-test--file "sync.txt")))
         (main (find-file file))
         (win (selected-window))
         unsaved edited sync-typed)
    (delete-other-windows)
    (goto-char (point-min))
    (insert "// UNSAVED 😀 LINE\n")
    (setq unsaved (ctxls-test--text main)
          edited (replace-regexp-in-string "héllo\")" "héllo, undo\")" unsaved t t))
    (ctxls-mode 1)
    (ctxls-test--ready)
    (ctxls-new-session)
    (ctxls-test--wait "the session" (lambda () ctxls--session-id))
    (ctxls-set-review-mode "auto")
    (ctxls-test--wait "the review mode" (lambda () (ctxls-test--said "review mode auto")))
    (ctxls-ask "change things")
    (ctxls-test--turn-end "Done.")
    (should (equal (ctxls-test--text main) edited))
    (should (equal (ctxls-test--text sync) (concat "FIRST line" (substring (ctxls-test--disk (ctxls-test--file "sync.txt")) 10))))
    (should (equal (ctxls-test--text (find-buffer-visiting new-file)) "package pkg\n"))
    ;; The user types in sync.txt: its change is theirs now.
    (with-current-buffer sync
      (goto-char (point-max))
      (insert "// mine\n")
      (setq sync-typed (ctxls-test--text sync)))
    (setq ctxls-test--messages nil)
    (execute-kbd-macro (kbd "C-c x u"))
    (ctxls-test--wait "the undo" (lambda () (ctxls-test--said "undid")))
    (should (equal (ctxls-test--text main) unsaved))
    (should (buffer-modified-p main))
    (should (equal (ctxls-test--disk file) on-disk))
    (with-current-buffer main (ctxls-test--same "the undo"))
    (should-not (find-buffer-visiting new-file))
    (should-not (file-exists-p new-file))
    (should (equal (ctxls-test--text sync) sync-typed))
    (should (eq (selected-window) win))
    (should (eq (window-buffer win) main))
    (let ((note "undid the model's changes to 2 files: ")
          (chat (ctxls-test--chat-text)))
      (should (ctxls-test--said (regexp-quote (concat "ctxls: " note))))
      (should (string-search note chat))
      (dolist (name '("main.go" "pkg/new.go"))
        (should (string-match-p (concat (regexp-quote note) ".*" (regexp-quote name)) chat)))
      (should (string-match-p "; left: sync\\.txt (.*changed since the turn.*)_\n\n\\'" chat)))
    ;; The buffer's own undo takes the undo back, its redo makes it again.
    (execute-kbd-macro (kbd "C-/"))
    (should (equal (ctxls-test--text main) edited))
    (ctxls-test--same "undo of the undo")
    (execute-kbd-macro (kbd "C-?"))
    (should (equal (ctxls-test--text main) unsaved))
    (ctxls-test--same "redo of the undo")
    ;; ctxls-redo: the turn's changes again, the new file's buffer too.
    (setq ctxls-test--messages nil)
    (ctxls-test--mx "ctxls-redo")
    (ctxls-test--wait "the redo" (lambda () (ctxls-test--said "redid")))
    (should (ctxls-test--said (regexp-quote "ctxls: redid the model's changes to 2 files: ")))
    (should (equal (ctxls-test--text main) edited))
    (should (equal (ctxls-test--text (find-buffer-visiting new-file)) "package pkg\n"))
    (should (equal (ctxls-test--text sync) sync-typed))
    (should (eq (window-buffer win) main))
    ;; Nothing more to redo: said.
    (setq ctxls-test--messages nil)
    (execute-kbd-macro (kbd "C-c x U"))
    (ctxls-test--wait "nothing to redo" (lambda () (ctxls-test--said "nothing to redo")))
    (should (equal (ctxls-test--text main) edited))
    ;; The question asked again (C-c x G): undoing the file changes of the
    ;; turn it takes back is offered; y undoes them before it is asked.
    (setq ctxls-test--messages nil)
    (let* ((asked nil)
           (record (lambda (prompt &rest _) (push prompt asked))))
      (advice-add 'y-or-n-p :before record)
      (unwind-protect
          (progn
            (execute-kbd-macro (vconcat (kbd "C-c x G") "y"))
            (ctxls-test--turn-end "Again."))
        (advice-remove 'y-or-n-p record))
      (should (equal asked '("ctxls: also undo the file changes of the turns taken back? "))))
    (should (ctxls-test--said (regexp-quote "ctxls: undid the model's changes to 2 files: ")))
    (should (equal (ctxls-test--text main) unsaved))
    (should-not (find-buffer-visiting new-file))
    (should (equal (ctxls-test--text sync) sync-typed))
    (should (eq (window-buffer win) main))
    (should (= 1 (ctxls-test--count "## You")))
    ;; That turn made no change: asked again, nothing is offered.
    (setq ctxls-test--messages nil)
    (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) (error "Asked"))))
      (execute-kbd-macro (kbd "C-c x G")))
    (ctxls-test--turn-end "Once more.")
    (should-not (ctxls-test--said "undid"))
    (ctxls-test--stop)))

;;;; Sessions: the picker, rename, export, the model; context messages

(ert-deftest ctxls-test-sessions ()
  "Sessions are offered most recent first and told apart; rename, export
and the model; the editor view's capture is not announced."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  ;; Aaaa comes first alphabetically and by length; the two Same
  ;; sessions are newer (the store keeps milliseconds).
  (dolist (title '("Aaaa" "Same" "Same"))
    (ctxls-test--call ctxls-protocol-command-session-new (list :title title))
    (sleep-for 0.05))
  (let (offered)
    (let ((grab (lambda () (when (string-prefix-p "Resume" (minibuffer-prompt))
                             ;; A list whose last cdr is the base size.
                             (let ((all (completion-all-sorted-completions)))
                               (while (consp all)
                                 (push (car all) offered)
                                 (setq all (cdr all)))
                               (setq offered (nreverse offered)))))))
      (add-hook 'minibuffer-setup-hook grab)
      (unwind-protect (ctxls-test--mx "ctxls-resume" "")
        (remove-hook 'minibuffer-setup-hook grab)))
    (should (string-prefix-p "Same  (just now, 0 questions)" (nth 0 offered)))
    (should (string-prefix-p "Same  (just now, 0 questions)" (nth 1 offered)))
    (should-not (equal (nth 0 offered) (nth 1 offered)))
    (should (string-prefix-p "Aaaa  (" (nth 2 offered)))
    ;; The earlier tests' sessions, all titled by the model alike, are told
    ;; apart by their first questions, and counted in questions.
    (should (cl-find-if (lambda (o) (string-match-p "\\`Emacs Test Title — count slowly  (.*, 4 questions)" o)) offered))
    (should (cl-find-if (lambda (o) (string-prefix-p "Emacs Test Title — what is this?  (" o)) offered)))
  (ctxls-test--wait "the resumed session" (lambda () (equal ctxls--session-title "Same")))
  ;; Rename: what is typed is the new title, not added to the old one.
  (ctxls-test--mx "ctxls-rename-session" "Login redirect")
  (ctxls-test--wait "the new title" (lambda () (equal ctxls--session-title "Login redirect")))
  (should (equal (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-session-show
                                                         (list :sessionId ctxls--session-id))
                                       :session)
                            :title)
                 "Login redirect"))
  ;; RET alone keeps it.
  (ctxls-test--mx "ctxls-rename-session" "")
  (ctxls-test--wait "the kept title" (lambda () (equal ctxls--session-title "Login redirect")))
  ;; The model: the provider's list, or typed; shown in the chat's header.
  (let (offered)
    (let ((grab (lambda () (when (string-prefix-p "Model" (minibuffer-prompt))
                             (setq offered (all-completions "" minibuffer-completion-table))))))
      (add-hook 'minibuffer-setup-hook grab)
      (unwind-protect (ctxls-test--mx "ctxls-set-model" "other-model")
        (remove-hook 'minibuffer-setup-hook grab)))
    (should (member "test-model" offered)))
  (ctxls-test--wait "the model" (lambda () (equal ctxls--model "other-model")))
  (should (equal (plist-get (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-session-show
                                                                    (list :sessionId ctxls--session-id))
                                                  :session)
                                       :meta)
                            :model)
                 "other-model"))
  (ctxls-test--mx "ctxls-ask" "which model?")
  (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
  (with-current-buffer ctxls--chat
    (should (string-match-p "ctxls · Login redirect · other-model\\( \\|\\'\\)" (ctxls--header-line))))
  ;; Export: where it went, and it opens.
  (ctxls-test--mx "ctxls-export" "y")
  (let ((buf (cl-find-if (lambda (b) (string-suffix-p "/export.md" (or (buffer-file-name b) ""))) (buffer-list))))
    (should buf)
    (should (string-prefix-p (file-name-as-directory (expand-file-name (getenv "CTXLS_DATA_DIR")))
                             (buffer-file-name buf)))
    (should (string-search "which model?" (with-current-buffer buf (buffer-string))))
    ;; Opened in Emacs (synced as every file buffer is), the export is
    ;; not one of the user's files to the model.
    (with-current-buffer buf (should ctxls--uri))
    (let ((input (ctxls-test--model-input)))
      (should (string-search (ctxls-test--file "main.go") input))
      (should-not (string-search (buffer-file-name buf) input))))
  ;; The editor view's capture is not announced; a file added is.
  (switch-to-buffer (get-file-buffer (ctxls-test--file "main.go")))
  (setq ctxls-test--messages nil)
  (goto-char (point-min))
  (push-mark (point) t t)
  (forward-line 2)
  (ctxls--send-view)
  (ctxls-test--wait "the view's capture"
                    (lambda () (member "selection=1-2"
                                       (append (plist-get (plist-get (ctxls-test--call ctxls-protocol-command-context-get nil)
                                                                     :context)
                                                          :applet)
                                               nil))))
  (accept-process-output nil 0.5)
  (deactivate-mark)
  (should-not (ctxls-test--said "context"))
  (ctxls-add-file (ctxls-test--file "main.go"))
  (ctxls-test--wait "the change said" (lambda () (ctxls-test--said "ctxls: context: main.go")))
  (should-not (ctxls-test--said "applet"))
  (ctxls-show-context)
  (ctxls-test--wait "the context buffer"
                    (lambda () (and (get-buffer "*ctxls context*")
                                    (with-current-buffer "*ctxls context*"
                                      (string-search "editor view:\n" (buffer-string))))))
  (with-current-buffer "*ctxls context*"
    (should-not (string-search "applet" (buffer-string))))
  (ctxls-test--stop))

;;;; A handler's error

(ert-deftest ctxls-test-handler-error ()
  "An error handling one message does not leave the next one unread.
Two frames in one read of the daemon's output, as under load: a
notification whose handler fails, then the answer to a request.  The
answer is handled, the failure logged.  jsonrpc.el 1.0.14 (Emacs 28)
handles both in its process filter, one after the other; later ones
\(Emacs 30) each from a timer of its own, run by the next wait."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let* ((conn ctxls--connection)
         (proc (jsonrpc--process conn))
         (got nil)
         (frame (lambda (obj)
                  (let ((json (encode-coding-string (json-serialize obj) 'utf-8)))
                    (format "Content-Length: %d\r\n\r\n%s" (string-bytes json) json))))
         (fail (lambda (&rest _) (error "Handler broke"))))
    (ctxls-test--expect-answer conn 424242 (lambda (r) (setq got r)))
    (advice-add 'ctxls--on-session-updated :override fail '((name . ctxls-test-fail)))
    (unwind-protect
        (progn
          (funcall (process-filter proc) proc
                   (concat (funcall frame '(:jsonrpc "2.0" :method "ctxls/sessionUpdated"
                                                     :params (:sessionId "x" :title "t")))
                           (funcall frame '(:jsonrpc "2.0" :id 424242 :result (:ok t)))))
          (ctxls-test--wait "the answer" (lambda () got)))
      (advice-remove 'ctxls--on-session-updated 'ctxls-test-fail))
    (should (equal got '(:ok t)))
    (should-not (assq 424242 (ctxls-test--pending conn)))
    (should (string-search "ctxls/sessionUpdated failed: Handler broke"
                           (with-current-buffer "*ctxls log*" (buffer-string)))))
  (ctxls-test--stop))

;;;; The daemon's output read inside a handler

(ert-deftest ctxls-test-reentrant-output ()
  "Output read while a handler runs is handled after it, none lost.
A handler that sends (`process-send-string' reads the daemon's output
while a write waits on a full pipe) or waits runs the process filter
again, inside itself.  jsonrpc.el 1.0.14 (Emacs 28) then loses messages
\(bug#60088): the answer to a request never comes, as in a chat whose
session read never ended.  Here an answer's handler is given more output
as that read would give it; every answer is handled, in the order read."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let* ((conn ctxls--connection)
         (proc (jsonrpc--process conn))
         (got nil)
         (frame (lambda (id)
                  (let ((json (encode-coding-string
                               (json-serialize (list :jsonrpc "2.0" :id id :result (list :n id)))
                               'utf-8)))
                    (format "Content-Length: %d\r\n\r\n%s" (string-bytes json) json)))))
    (ctxls-test--expect-answer conn 424301
                               (lambda (r)
                                 (push r got)
                                 ;; Read while this handler runs: the rest of one
                                 ;; answer, a whole one, the start of another.
                                 (let ((third (funcall frame 424303))
                                       (fifth (funcall frame 424305)))
                                   (funcall (process-filter proc) proc
                                            (concat (substring third 10) (funcall frame 424304)
                                                    (substring fifth 0 30)))
                                   (funcall (process-filter proc) proc (substring fifth 30)))))
    (dolist (id '(424302 424303 424304 424305))
      (ctxls-test--expect-answer conn id (lambda (r) (push r got))))
    (funcall (process-filter proc) proc
             (concat (funcall frame 424301) (funcall frame 424302) (substring (funcall frame 424303) 0 10)))
    ;; (Waited for here, not with `ctxls-test--wait': a failure shows what came.)
    (let ((deadline (+ (float-time) 5)))
      (while (and (< (length got) 5) (< (float-time) deadline))
        (accept-process-output nil 0.05)))
    (should (equal (mapcar (lambda (r) (plist-get r :n)) (reverse got))
                   '(424301 424302 424303 424304 424305)))
    (dolist (id '(424301 424302 424303 424304 424305))
      (should-not (assq id (ctxls-test--pending conn))))
    ;; The connection still works.
    (should (plist-get (ctxls-test--call ctxls-protocol-command-session-list nil) :sessions)))
  (ctxls-test--stop))

;;;; The project's instructions

(defun ctxls-test--context-text ()
  "The *ctxls context* buffer's text (\"\" before it exists)."
  (if-let ((b (get-buffer "*ctxls context*")))
      (with-current-buffer b (buffer-substring-no-properties (point-min) (point-max)))
    ""))

(ert-deftest ctxls-test-instructions ()
  "The project's AGENTS.md files, named in the context buffer and the preview.
The workspace has AGENTS.md at its root and pkg/AGENTS.md, over 32 KiB,
beside pkg/util.go (emacs_test.go writes them).  RET on the root's name
visits it; its unsaved text goes to the model; pkg/util.go added to the
context brings pkg/AGENTS.md, marked cut.  `ctxls-project-instructions'
set to nil: the next turn has none and the line goes (the Go test reads
the model's input)."
  (ctxls-test--setup)
  (let ((agents (ctxls-test--file "AGENTS.md"))
        (main (ctxls-test--file "main.go")))
    (find-file main)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (ctxls-test--mx "ctxls-show-context")
    (ctxls-test--wait "the instructions line"
                      (lambda () (string-search "\n\ninstructions: AGENTS.md\n\n" (ctxls-test--context-text))))
    ;; RET on its name visits it.
    (pop-to-buffer "*ctxls context*")
    (goto-char (point-min))
    (search-forward "instructions: ")
    (execute-kbd-macro (kbd "RET"))
    (should (equal (buffer-file-name (window-buffer (selected-window))) agents))
    ;; Typed in, not saved: the model gets the text as you see it.
    (with-current-buffer (get-file-buffer agents)
      (goto-char (point-max))
      (insert "Unsaved rule: name the rules you followed.\n"))
    ;; A file in pkg/ brings pkg/AGENTS.md.
    (find-file (ctxls-test--file "pkg/util.go"))
    (ctxls-test--mx "ctxls-add-file")
    (ctxls-test--wait "pkg/AGENTS.md named"
                      (lambda () (string-search "\ninstructions: AGENTS.md (unsaved), pkg/AGENTS.md (cut)\n"
                                                (ctxls-test--context-text))))
    (switch-to-buffer (get-file-buffer main))
    (ctxls-test--mx "ctxls-ask" "which rules apply?")
    (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
    (should (string-search "\ninstructions: AGENTS.md (unsaved), pkg/AGENTS.md (cut)\n" (ctxls-test--context-text)))
    ;; The preview names them; their text ends its system message.
    (ctxls-test--mx "ctxls-preview" "and these?")
    (ctxls-test--wait "the preview"
                      (lambda () (and (get-buffer "*ctxls preview*")
                                      (with-current-buffer "*ctxls preview*"
                                        (string-search "\nProject instructions: AGENTS.md (unsaved), pkg/AGENTS.md (cut)\n"
                                                       (buffer-string))))))
    (with-current-buffer "*ctxls preview*"
      (should (string-search "Unsaved rule: name the rules you followed." (buffer-string)))
      (should (string-search "PKG RULE: keep pkg small." (buffer-string))))
    ;; Turned off as a user would: the next turn goes without them.
    (ctxls-test--mx "set-variable" "ctxls-project-instructions" "nil")
    (should-not ctxls-project-instructions)
    (ctxls-test--mx "ctxls-ask" "and without them?")
    (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
    (should-not (string-search "instructions:" (ctxls-test--context-text)))
    (should (string-search "files:\n  " (ctxls-test--context-text)))
    (should-not (plist-get (ctxls-test--call ctxls-protocol-command-context-get nil) :instructions))
    (ctxls-test--stop)))

;;;; The editor's diagnostics

(defun ctxls-test--flymake (buffer)
  "Turn Flymake on in BUFFER and check it now."
  (with-current-buffer buffer
    (when (boundp 'trusted-content)   ; Emacs 30 byte-compiles trusted files only
      (set (make-local-variable 'trusted-content) :all))
    (flymake-mode 1)
    (flymake-start)))

(defun ctxls-test--flymake-types (buffer)
  "The types of BUFFER's Flymake diagnostics."
  (with-current-buffer buffer (mapcar #'flymake-diagnostic-type (flymake-diagnostics))))

(ert-deftest ctxls-test-diagnostics ()
  "The model's diagnostics tool reads Flymake's diagnostics (the byte
compiler's error and warning, checkdoc's notes left out); waitMs waits
for the diagnostics of the file asked about to change."
  (ctxls-test--setup)
  (let* ((broken-file (ctxls-test--file "broken.el"))
         (broken (find-file-noselect broken-file))
         (warned (find-file-noselect (ctxls-test--file "warned.el"))))
    (ctxls-test--flymake broken)
    (ctxls-test--flymake warned)
    (ctxls-test--wait "Flymake's error and warning"
                      (lambda ()
                        (and (memq :error (ctxls-test--flymake-types broken))
                             (memq :warning (ctxls-test--flymake-types warned))))
                      30)
    (switch-to-buffer broken)
    (ctxls-mode 1)
    (ctxls-test--ready)
    (ctxls-test--mx "ctxls-ask" "what is broken?")
    (ctxls-test--turn-end "Found them.")
    ;; waitMs: no answer before broken.el's diagnostics change (warned.el's
    ;; rechecked meanwhile do not count), then at once.
    (let ((start (float-time))
          answer)
      (ctxls--diagnostics-when (list :uris (vector (ctxls--path-uri broken-file)) :waitMs 15000)
                               (lambda (a) (setq answer (cons (float-time) a))))
      (with-current-buffer warned (flymake-start))
      (accept-process-output nil 1)
      (should-not answer)
      (with-current-buffer broken
        (goto-char (point-max))
        (insert ")\n")
        (flymake-start))
      (ctxls-test--wait "the answer after broken.el changed" (lambda () answer) 14)
      (should (< (- (car answer) start) 14))
      (let ((files (cdr answer)))
        (should (= (length files) 1))
        (should (equal (plist-get (aref files 0) :uri) (ctxls--path-uri broken-file)))
        (should-not (cl-find 1 (plist-get (aref files 0) :diagnostics)
                             :key (lambda (d) (plist-get d :severity))))))
    ;; No change: the answer comes when waitMs has passed.
    (let ((start (float-time))
          answer)
      (ctxls--diagnostics-when (list :uris (vector (ctxls--path-uri (ctxls-test--file "warned.el"))) :waitMs 700)
                               (lambda (a) (setq answer (cons (float-time) a))))
      (ctxls-test--wait "the answer after waitMs" (lambda () answer) 5)
      (should (>= (- (car answer) start) 0.65))
      (should (cl-find 2 (plist-get (aref (cdr answer) 0) :diagnostics)
                       :key (lambda (d) (plist-get d :severity)))))
    ;; A file no buffer visits: an empty list, sent as [].
    (let (answer)
      (ctxls--diagnostics-when (list :uris (vector (ctxls--path-uri (ctxls-test--file "nowhere.el"))))
                               (lambda (a) (setq answer a)))
      (ctxls-test--wait "the answer for a file not visited" (lambda () answer) 5)
      (should (equal (json-serialize (aref answer 0))
                     (json-serialize (list :uri (ctxls--path-uri (ctxls-test--file "nowhere.el")) :diagnostics []))))))
  (ctxls-test--stop))

;;;; No provider yet

(ert-deftest ctxls-test-no-provider ()
  "Asked with no provider: the chat says what to set in Emacs, no
session is left behind; set, the next question is answered, no restart."
  (ctxls-test--setup)
  (setq ctxls-provider nil)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "hello?")
  (ctxls-test--wait "the refusal" (lambda () (and (null ctxls--turn) (string-search "_error" (ctxls-test--chat-text)))))
  (let ((chat (ctxls-test--chat-text)))
    ;; What to set, in Emacs's words: the key (auth-source as gptel reads
    ;; it, `ctxls-api-key', the environment), or another server's
    ;; address and model; then how to ask again.
    (should (string-search "## You\n\n_with main.go_\n\nhello?\n\n## ctxls\n\n_error: no model provider yet_\n\nTo use OpenAI, give ctxls your key: a line in ~/.authinfo.gpg, as gptel reads it,\n\n    machine api.openai.com login apikey password sk-…\n\nor `ctxls-api-key` (the key, or a function returning it), or `OPENAI_API_KEY` in Emacs's environment." chat))
    (should (string-search "For another server (Ollama, llama.cpp, vLLM), its address and a model:\n\n    (setq ctxls-provider '(:baseURL \"http://127.0.0.1:11434/v1\" :model \"llama3.1\"))" chat))
    (should (string-search "M-x ctxls-setup asks for them; M-p at the prompt brings the question back." chat))
    ;; Not the daemon's words, which name other editors' settings.
    (should-not (string-search "initializationOptions" chat)))
  ;; The echo area says it, once, in one line; the daemon's message of it
  ;; (other editors' words) is not said beside it...
  (should (equal "ctxls: no model provider yet: M-x ctxls-setup, or see the chat" (car ctxls-test--messages)))
  (should (equal (list (car ctxls-test--messages)) (cl-remove-if-not (lambda (m) (string-search "model provider" m)) ctxls-test--messages)))
  ;; ...but is in the log.
  (should (string-search "no model provider is configured" (with-current-buffer "*ctxls log*" (buffer-string))))
  (should (equal (plist-get (ctxls-test--call ctxls-protocol-command-session-list nil) :sessions) []))
  ;; Set now, as a user would after reading that: the running daemon
  ;; gets it with the next question.
  (let ((daemon (jsonrpc--process ctxls--connection)))
    (setq ctxls-provider (list :baseURL (getenv "CTXLS_TEST_PROVIDER_URL") :model "test-model"))
    (ctxls-test--mx "ctxls-ask" "hello again")
    (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
    (should (eq daemon (jsonrpc--process ctxls--connection))))
  (should (string-search "## You\n\n_with main.go_\n\nhello again\n\n## ctxls\n\nprovider set later\n" (ctxls-test--chat-text)))
  (ctxls-test--stop))

;;;; The provider's key, M-x ctxls-setup, the model of new sessions

(defun ctxls-test--key ()
  "The key of the test's provider (from a file: in the environment,
every process would have it)."
  (with-temp-buffer
    (insert-file-contents (getenv "CTXLS_TEST_KEY_FILE"))
    (string-trim (buffer-string))))

(defun ctxls-test--write-authinfo (line)
  "Write LINE to ~/.authinfo, as the user would."
  (with-temp-file (expand-file-name "~/.authinfo")
    (insert line "\n")))

(defun ctxls-test--daemon-environ ()
  "The running daemon's environment, as /proc shows it."
  (with-temp-buffer
    (insert-file-contents-literally
     (format "/proc/%d/environ" (process-id (jsonrpc--process ctxls--connection))))
    (split-string (buffer-string) "\0" t)))

(defun ctxls-test--key-nowhere (key)
  "KEY went to the daemon, in its environment, and nowhere else Emacs shows or passes on."
  (should (member (concat "OPENAI_API_KEY=" key) (ctxls-test--daemon-environ)))
  (should-not (ctxls--nonempty (getenv "OPENAI_API_KEY")))
  (should-not (cl-some (lambda (e) (string-search key e)) process-environment))
  ;; Another process Emacs starts.
  (should-not (string-search key (with-output-to-string
                                   (with-current-buffer standard-output
                                     (call-process "env" nil t)))))
  (dolist (b '("*ctxls log*" "*Messages*" "*ctxls events*"))
    (when (get-buffer b)
      (should-not (string-search key (with-current-buffer b (buffer-string))))))
  (should-not (cl-some (lambda (m) (string-search key m)) ctxls-test--messages))
  (should-not (string-search key (ctxls-test--chat-text)))
  (should-not (string-search key (json-encode (ctxls--init-options)))))

(defun ctxls-test--answered-with-key ()
  "Visit main.go with ctxls on and ask: the provider answers only with the key,
which is then nowhere but in the daemon."
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "hello with a key")
  (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
  (should (string-search "answered with the key" (ctxls-test--chat-text)))
  (ctxls-test--key-nowhere (ctxls-test--key))
  (ctxls-test--stop))

(ert-deftest ctxls-test-authinfo-key ()
  "The key in ~/.authinfo, for the provider's host and the user apikey
\(as gptel reads it), reaches the provider; the daemon alone has it."
  (ctxls-test--setup)
  (should-not ctxls-api-key)
  (ctxls-test--write-authinfo
   (format "machine 127.0.0.1 login apikey password %s" (ctxls-test--key)))
  (ctxls-test--answered-with-key))

(ert-deftest ctxls-test-api-key-function ()
  "`ctxls-api-key' a function: the key it returns reaches the provider."
  (ctxls-test--setup)
  (setq ctxls-api-key #'ctxls-test--key)
  (ctxls-test--answered-with-key))

(ert-deftest ctxls-test-key-later ()
  "Refused for want of a provider, the user puts the key in ~/.authinfo
and sets the server: the next question starts the daemon again with the
key, in the same Emacs, and is answered."
  (ctxls-test--setup)
  (setq ctxls-provider nil)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "hello?")
  (ctxls-test--wait "the refusal" (lambda () (and (null ctxls--turn) (string-search "_error: no model provider yet_" (ctxls-test--chat-text)))))
  (should-not (cl-some (lambda (e) (string-match-p "\\`OPENAI_API_KEY=." e)) (ctxls-test--daemon-environ)))
  (let ((daemon (jsonrpc--process ctxls--connection)))
    (ctxls-test--write-authinfo (format "machine 127.0.0.1 login apikey password %s" (ctxls-test--key)))
    (setq ctxls-provider (list :baseURL (getenv "CTXLS_TEST_PROVIDER_URL") :model "test-model"))
    (ctxls-test--mx "ctxls-ask" "hello once more")
    (ctxls-test--wait "the answer" (lambda () (and (null ctxls--turn) (string-search "answered with the key" (ctxls-test--chat-text)))))
    (should-not (eq daemon (jsonrpc--process ctxls--connection))))
  (ctxls-test--key-nowhere (ctxls-test--key))
  (ctxls-test--stop))

(ert-deftest ctxls-test-setup ()
  "M-x ctxls-setup: the server's base URL, the key (saved to ~/.authinfo
by auth-source, after asking), the model picked from the server's list
(which the daemon could list only with the key), saved with customize."
  (ctxls-test--setup)
  ;; As a user's Emacs: an init file (customize saves only then), and
  ;; auth-source's plain file, not ~/.authinfo.gpg.
  (setq ctxls-provider nil
        auth-sources '("~/.authinfo")
        user-init-file (expand-file-name "~/.emacs.d/init.el")
        custom-file (expand-file-name "~/custom.el"))
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let ((url (getenv "CTXLS_TEST_PROVIDER_URL"))
        (key (ctxls-test--key))
        prompts offered)
    (let ((grab (lambda ()
                  (push (minibuffer-prompt) prompts)
                  (when (string-prefix-p "Model (" (minibuffer-prompt))
                    (setq offered (all-completions "" minibuffer-completion-table))))))
      (add-hook 'minibuffer-setup-hook grab)
      (unwind-protect
          (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-setup" (kbd "RET")
                                      url (kbd "RET")
                                      key (kbd "RET")
                                      "y"
                                      "big-model" (kbd "RET")))
        (remove-hook 'minibuffer-setup-hook grab)))
    (setq prompts (reverse prompts))
    (should (equal "Base URL of the model server (default https://api.openai.com/v1): " (nth 1 prompts)))
    (should (string-prefix-p "Key for 127.0.0.1 (saved with auth-source; RET: none)" (nth 2 prompts)))
    (should (equal offered '("test-model" "big-model")))
    ;; The key, where auth-source keeps it.
    (let ((authinfo (with-temp-buffer (insert-file-contents "~/.authinfo") (buffer-string))))
      (should (string-match-p (format "^machine 127\\.0\\.0\\.1 login apikey port [0-9]+ password %s$" (regexp-quote key)) authinfo)))
    ;; The provider, saved for the next Emacs.
    (should (equal ctxls-provider (list :baseURL url :model "big-model")))
    (should (string-search (format "'(ctxls-provider '(:baseURL %S :model \"big-model\"))" url)
                           (with-temp-buffer (insert-file-contents custom-file) (buffer-string))))
    (should (ctxls-test--said "saved in `ctxls-provider'"))
    (should-not (string-search key (with-temp-buffer (insert-file-contents custom-file) (buffer-string))))
    (ctxls-test--mx "ctxls-ask" "after the set-up")
    (ctxls-test--wait "the answer" (lambda () (and (null ctxls--turn) (string-search "answered with the key" (ctxls-test--chat-text)))))
    (ctxls-test--key-nowhere key))
  (ctxls-test--stop))

(ert-deftest ctxls-test-model-for-new-sessions ()
  "C-c x m picks the model of this session; C-u C-c x m of this and new
sessions: a new session's questions go to it."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "first question")
  (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
  (let (prompts)
    (let ((grab (lambda () (push (minibuffer-prompt) prompts))))
      (add-hook 'minibuffer-setup-hook grab)
      (unwind-protect
          (progn
            (ctxls-test--mx "ctxls-set-model" "other-model")
            (ctxls-test--wait "this session's model" (lambda () (equal ctxls--model "other-model")))
            (ctxls-test--mx "ctxls-new-session")
            (ctxls-test--wait "a new session" (lambda () (ctxls-test--said "\\`ctxls: new session\\'")))
            ;; The new session has the provider's model.
            (should (equal ctxls--model "test-model"))
            (ctxls-test--mx "ctxls-ask" "in a new session")
            (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
            (execute-kbd-macro (vconcat (kbd "C-u M-x") "ctxls-set-model" (kbd "RET") "big-model" (kbd "RET")))
            (ctxls-test--wait "the model for new sessions too"
                              (lambda () (ctxls-test--said "this session's model is big-model, and new sessions' too"))))
        (remove-hook 'minibuffer-setup-hook grab)))
    (setq prompts (reverse prompts))
    (should (equal (nth 1 prompts) "Model for this session (C-u: new ones too) (default test-model): "))
    (should (equal (car (last prompts)) "Model for this and new sessions (default test-model): ")))
  (setq ctxls-test--messages nil)
  (ctxls-test--mx "ctxls-new-session")
  (ctxls-test--wait "a newer session" (lambda () (ctxls-test--said "\\`ctxls: new session\\'")))
  (should (equal ctxls--model "big-model"))
  (ctxls-test--mx "ctxls-ask" "in a newer session")
  (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
  (ctxls-test--stop))

;;;; The first question

(ert-deftest ctxls-test-first-view ()
  "The first question of a new session carries the editor's view (no session yet when it rested)."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (should-not ctxls--session-id)
  (goto-char (point-min))
  (forward-line 5)
  ;; Point rests on line 6 (idle timers do not run in batch Emacs: the
  ;; test calls the view timer's function, then waits out viewIdleMs).
  (ctxls--send-view)
  (sleep-for 0.6)
  (ctxls-test--mx "ctxls-ask" "what is on my line?")
  (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
  (should ctxls--session-id)
  (ctxls-test--stop))

;;;; Asked twice quickly

(ert-deftest ctxls-test-ask-twice ()
  "In a fresh Emacs, a second question typed before the daemon is up (or
the first answered) is refused, saying why; the first is answered whole."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (should (eq ctxls--state 'starting))
  (ctxls-test--mx "ctxls-ask" "first question")
  (should ctxls--turn)
  (let* ((prompts (ctxls-test--prompts))
         (err (should-error (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-ask" (kbd "RET")))
                            :type 'user-error)))
    (should (string-match-p "a turn is running; M-x ctxls-cancel stops it" (cadr err)))
    ;; Said before the question is typed.
    (should-not (funcall prompts)))
  (should-error (ctxls-ask "second question") :type 'user-error)
  (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
  (let ((chat (ctxls-test--chat-text)))
    (should (string-search "## You\n\n_with main.go_\n\nfirst question\n\n## ctxls\n\nthe whole first answer\n" chat))
    (should-not (string-search "second question" chat)))
  (ctxls-test--stop))

;;;; A longer question

(ert-deftest ctxls-test-compose ()
  "A question written over several lines: RET a new line, C-c C-c sends, C-c C-k aborts."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let ((source (current-buffer)))
    ;; Lines 3-4 selected: they go with the question, as the header says.
    (goto-char (point-min))
    (forward-line 2)
    (execute-kbd-macro (vconcat (kbd "C-SPC C-n C-n M-x") "ctxls-compose" (kbd "RET")))
    (should (equal (buffer-name) "*ctxls question*"))
    (should ctxls-compose-mode)
    (should (equal header-line-format
                   (if (< (window-width) 101) ; M-p's hint, when it fits
                       " ctxls: your question (with main.go:3-4)   RET new line   C-c C-c send   C-c C-k abort"
                     " ctxls: your question (with main.go:3-4)   RET new line   C-c C-c send   C-c C-k abort   M-p history")))
    (execute-kbd-macro (vconcat "first line" (kbd "RET") "second line"))
    (should (equal (buffer-string) "first line\nsecond line"))
    (should-not ctxls--turn)
    (execute-kbd-macro (kbd "C-c C-c"))
    (should ctxls--turn)
    (should-not (get-buffer "*ctxls question*"))
    (should (eq (current-buffer) source))
    (should (string-search "## You\n\n_with main.go:3-4_\n\nfirst line\nsecond line\n\n## ctxls\n\n" (ctxls-test--chat-text)))
    (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
    (should (string-search "second line\n\n## ctxls\n\nTwo lines read.\n" (ctxls-test--chat-text)))
    (should (equal (car ctxls-question-history) "first line\nsecond line"))
    ;; C-c C-k throws the question away.
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-compose" (kbd "RET") "never sent" (kbd "RET C-c C-k")))
    (should-not (get-buffer "*ctxls question*"))
    (should (eq (current-buffer) source))
    (should-not ctxls--turn)
    (should (ctxls-test--said "question aborted"))
    (should-not (string-search "never sent" (ctxls-test--chat-text)))
    ;; Sent while a turn runs: refused, and the question stays to be sent after.
    (ctxls-test--mx "ctxls-ask" "answer slowly")
    (should ctxls--turn)
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-compose" (kbd "RET") "kept" (kbd "RET") "for later"))
    (should-error (execute-kbd-macro (kbd "C-c C-c")) :type 'user-error)
    (should (equal (buffer-name) "*ctxls question*"))
    (should (equal (buffer-string) "kept\nfor later"))
    (ctxls-test--wait "the slow answer" (lambda () (null ctxls--turn)))
    (execute-kbd-macro (kbd "C-c C-c"))
    (ctxls-test--wait "the kept question's answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\n_with main.go_\n\nkept\nfor later\n\n## ctxls\n\nSent after all.\n" (ctxls-test--chat-text))))
  (ctxls-test--stop))

;;;; Asking again

(defun ctxls-test--in-chat (keys)
  "Type KEYS in the chat buffer's window, selected (as after C-x o)."
  (select-window (display-buffer ctxls--chat))
  (execute-kbd-macro (kbd keys)))

(defun ctxls-test--stored ()
  "The current session's stored messages as \"role: content\"."
  (mapcar (lambda (m) (format "%s: %s" (plist-get m :role) (plist-get m :content)))
          (append (plist-get (ctxls-test--call ctxls-protocol-command-session-show
                                               (list :sessionId ctxls--session-id))
                             :messages)
                  nil)))

(ert-deftest ctxls-test-rewind ()
  "A failed answer retried, an answer regenerated, the last question edited and sent again."
  (ctxls-test--setup)
  (global-set-key (kbd "C-c x") 'ctxls-command-map) ; as docs/editors.md suggests
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "first question")
  (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
  (ctxls-test--mx "ctxls-ask" "second question")
  (ctxls-test--wait "the failed answer" (lambda () (null ctxls--turn)))
  (should (string-match-p "second question\n\n## ctxls\n\n_error: .*overloaded.*_\n\n\\'" (ctxls-test--chat-text)))
  ;; Retry (C-c x G): the failed answer gives way to a new one.
  (execute-kbd-macro (kbd "C-c x G"))
  (should ctxls--turn)
  (ctxls-test--wait "the retried answer" (lambda () (null ctxls--turn)))
  (let ((chat (ctxls-test--chat-text)))
    (should (string-suffix-p "first answer\n\n_tokens: 10 in · 1 out_\n\n## You\n\n_with main.go_\n\nsecond question\n\n## ctxls\n\nretried answer\n\n_tokens: 10 in · 1 out_\n\n" chat))
    (should-not (string-search "overloaded" chat)))
  ;; Regenerate it from the chat buffer (G).
  (ctxls-test--in-chat "G")
  (ctxls-test--wait "the regenerated answer" (lambda () (null ctxls--turn)))
  (should (string-suffix-p "## You\n\n_with main.go_\n\nsecond question\n\n## ctxls\n\nregenerated answer\n\n_tokens: 10 in · 1 out_\n\n"
                           (ctxls-test--chat-text)))
  (should-not (string-search "retried answer" (ctxls-test--chat-text)))
  (should (equal (ctxls-test--stored) '("user: first question" "assistant: first answer"
                                        "user: second question" "assistant: regenerated answer")))
  ;; Edit the last question (C-c x E): the question buffer holds it.
  (execute-kbd-macro (kbd "C-c x E"))
  (should (equal (buffer-name) "*ctxls question*"))
  (should (equal (buffer-string) "second question"))
  (should (string-prefix-p " ctxls: your question again, in place of the last one and its answer (with main.go)" header-line-format))
  ;; C-c C-k leaves everything as it was.
  (execute-kbd-macro (kbd "C-c C-k"))
  (should (= 4 (length (ctxls-test--stored))))
  (execute-kbd-macro (kbd "C-c x E"))
  (execute-kbd-macro (vconcat (kbd "M->") ", put better" (kbd "RET") "on two lines" (kbd "C-c C-c")))
  (ctxls-test--wait "the edited question's answer" (lambda () (null ctxls--turn)))
  (let ((chat (ctxls-test--chat-text)))
    (should (string-suffix-p "first answer\n\n_tokens: 10 in · 1 out_\n\n## You\n\n_with main.go_\n\nsecond question, put better\non two lines\n\n## ctxls\n\nedited answer\n\n_tokens: 10 in · 1 out_\n\n" chat))
    (should-not (string-search "regenerated answer" chat))
    (should (= 2 (ctxls-test--count "## You"))))
  (should (equal (ctxls-test--stored) '("user: first question" "assistant: first answer"
                                        "user: second question, put better\non two lines" "assistant: edited answer")))
  ;; Nothing to ask again in a new session.
  (ctxls-test--mx "ctxls-new-session")
  (ctxls-test--wait "the new session" (lambda () (string-suffix-p "# New session\n\n" (ctxls-test--chat-text))))
  (should-error (ctxls-regenerate) :type 'user-error)
  (ctxls-test--stop))

;;;; Images with the question

(defconst ctxls-test--png
  (base64-decode-string "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
  "A 1×1 PNG image, its bytes.")

(defun ctxls-test--write-bytes (name bytes)
  "Write BYTES (unibyte) to NAME in the test workspace; return its file name."
  (let ((file (ctxls-test--file name))
        (coding-system-for-write 'binary))
    (write-region bytes nil file nil 'silent)
    file))

(defun ctxls-test--refused (keys)
  "Type KEYS, which must be refused with a `user-error'; return its message."
  (let ((err (should-error (execute-kbd-macro (kbd keys)) :type 'user-error)))
    (error-message-string err)))

(defun ctxls-test--opened ()
  "The file name the stand-in xdg-open of `ctxls-test-images' was given."
  (with-temp-buffer
    (insert-file-contents (expand-file-name "opened" (car exec-path)))
    (buffer-string)))

(ert-deftest ctxls-test-images ()
  "An image attached to the next question (C-c x I): refused when it is
not one or too big, said in the prompt and the question buffer's header
line, taken back with C-u, sent; the chat's image line opens it."
  (ctxls-test--setup)
  (global-set-key (kbd "C-c x") 'ctxls-command-map)
  (ctxls-test--write-bytes "dot.png" ctxls-test--png)
  (ctxls-test--write-bytes "notes.png" "just text, not an image\n")
  (ctxls-test--write-bytes "big.png" (concat ctxls-test--png (make-string (* 5 1024 1024) ?x)))
  (ctxls-test--write-bytes "notes.txt" "text")
  (let* ((prompts (ctxls-test--prompts))
         (bin (make-temp-file "ctxls-bin" t))
         (opened (expand-file-name "opened" bin))
         (exec-path (cons bin exec-path)))
    ;; The desktop's opener: writes down the file it was given.
    (with-temp-file (expand-file-name "xdg-open" bin)
      (insert (format "#!/bin/sh\nprintf '%%s' \"$1\" > %s.tmp && mv %s.tmp %s\n"
                      (shell-quote-argument opened) (shell-quote-argument opened) (shell-quote-argument opened))))
    (set-file-modes (expand-file-name "xdg-open" bin) #o755)
    (find-file (ctxls-test--file "main.go"))
    (ctxls-mode 1)
    (ctxls-test--ready)
    ;; Refused, each saying why; nothing is attached.
    (should (equal (ctxls-test--refused "C-c x I notes.png RET")
                   "ctxls: notes.png is not a PNG, JPEG, GIF or WebP image (its first bytes say otherwise)"))
    (should (equal (ctxls-test--refused "C-c x I notes.txt RET")
                   "ctxls: notes.txt is not an image that goes with a question: PNG, JPEG, GIF or WebP only"))
    (should (equal (ctxls-test--refused "C-c x I big.png RET")
                   (format "ctxls: big.png is %s bytes; an image may have 5 MiB (5,242,880 bytes)"
                           (ctxls--count (+ (length ctxls-test--png) (* 5 1024 1024))))))
    (should-not ctxls--images)
    ;; Attached: the prompt says so; C-u C-c x I takes it back.
    (execute-kbd-macro (kbd "C-c x I dot.png RET"))
    (should (ctxls-test--said "dot.png goes with the next question (C-u C-c x I takes it back)"))
    (execute-kbd-macro (kbd "C-u C-c x I"))
    (should-not ctxls--images)
    (should (ctxls-test--said "taken back: dot.png"))
    (execute-kbd-macro (kbd "C-c x I dot.png RET"))
    ;; The question buffer's header line says it goes, and not once it is
    ;; taken back and attached again from there.
    (execute-kbd-macro (kbd "C-c x w"))
    (should (string-prefix-p " ctxls: your question (with main.go; image: dot.png)   RET new line" header-line-format))
    (execute-kbd-macro (kbd "C-u C-c x I"))
    (with-current-buffer "*ctxls question*"
      (should (string-prefix-p " ctxls: your question (with main.go)   RET new line" header-line-format)))
    (execute-kbd-macro (kbd "C-c x I dot.png RET"))
    (with-current-buffer "*ctxls question*"
      (should (string-prefix-p " ctxls: your question (with main.go; image: dot.png)   RET" header-line-format)))
    (execute-kbd-macro (kbd "C-c C-k"))
    ;; Asked: the prompt says what goes; the image goes once.
    (switch-to-buffer (find-file-noselect (ctxls-test--file "main.go")))
    (ctxls-test--mx "ctxls-ask" "what is in the picture?")
    (should (equal (car (funcall prompts)) "Ask ctxls (with main.go; image: dot.png): "))
    (should-not ctxls--images)
    (ctxls-test--wait "the answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\n_with main.go_\n\nwhat is in the picture?\n\n[image: dot.png]\n\n## ctxls\n\na red dot\n\n"
                           (ctxls-test--chat-text)))
    ;; Its line opens the file attached: a terminal's Emacs (batch too)
    ;; cannot show images, so the desktop's opener (xdg-open, a stand-in
    ;; here that writes down what it was given) opens it.
    (with-current-buffer ctxls--chat
      (goto-char (point-min))
      (search-forward "[image: dot.png]")
      (push-button (match-beginning 0)))
    (ctxls-test--wait "the image opened" (lambda () (file-exists-p opened)))
    (should (equal (ctxls-test--opened) (ctxls-test--file "dot.png")))
    (should (ctxls-test--said "dot.png opened with xdg-open"))
    (delete-file opened)
    ;; The next question goes without it.
    (switch-to-buffer (find-file-noselect (ctxls-test--file "main.go")))
    (ctxls-test--mx "ctxls-ask" "and now?")
    (should (equal (car (funcall prompts)) "Ask ctxls (with main.go): "))
    (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
    ;; Shown again (a new Emacs would show the same): the stored image
    ;; line is a button that opens the image in the session folder.
    (ctxls-test--mx "ctxls-new-session")
    (ctxls-test--wait "the new session" (lambda () (string-suffix-p "# New session\n\n" (ctxls-test--chat-text))))
    (ctxls-test--mx "ctxls-resume" "")
    (ctxls-test--wait "the session shown again"
                      (lambda () (string-match-p "what is in the picture\\?\n\n\\[image: sources/image-[0-9]\\{8\\}-[0-9]\\{6\\}-1\\.png\\]\n"
                                                 (car (last (split-string (ctxls-test--chat-text) "# New session"))))))
    (with-current-buffer ctxls--chat
      (goto-char (point-max))
      (re-search-backward "\\[image: sources/")
      (should (button-at (point)))
      (push-button (point)))
    (ctxls-test--wait "the stored image opened" (lambda () (file-exists-p opened)))
    (let ((file (ctxls-test--opened)))
      (should (string-match-p "/sources/image-[^/]*\\.png\\'" file))
      (should (string-prefix-p (file-name-as-directory ctxls--session-folder) file))
      (should (equal (with-temp-buffer (set-buffer-multibyte nil)
                                       (insert-file-contents-literally file)
                                       (buffer-string))
                     ctxls-test--png)))
    ;; A question with an image asked again (C-c x G): its image line is
    ;; a button as the new answer comes.
    (switch-to-buffer (find-file-noselect (ctxls-test--file "main.go")))
    (execute-kbd-macro (kbd "C-c x I dot.png RET"))
    (ctxls-test--mx "ctxls-ask" "third")
    (ctxls-test--wait "the third answer" (lambda () (null ctxls--turn)))
    (execute-kbd-macro (kbd "C-c x G"))
    (ctxls-test--wait "the answer again" (lambda () (null ctxls--turn)))
    (should (string-match-p "## You\n\n_with main.go_\n\nthird\n\n\\[image: sources/image-[0-9-]+\\.png\\]\n\n## ctxls\n\nanswered again\n\n_tokens: [^_]*_\n\n\\'"
                            (ctxls-test--chat-text)))
    (with-current-buffer ctxls--chat
      (goto-char (point-max))
      (re-search-backward "\\[image: sources/")
      (should (button-at (point))))
    ;; A graphical Emacs shows a small thumbnail after each stored image's
    ;; button.  Batch Emacs is not one and has no image libraries: it is
    ;; told it is, and `create-image' gives the image spec it would.
    (ctxls-test--mx "ctxls-new-session")
    (ctxls-test--wait "another new session" (lambda () (string-suffix-p "# New session\n\n" (ctxls-test--chat-text))))
    (cl-letf (((symbol-function 'display-graphic-p) (lambda (&rest _) t))
              ((symbol-function 'display-images-p) (lambda (&rest _) t))
              ((symbol-function 'create-image)
               (lambda (file _type _data &rest props) (append (list 'image :type 'png :file file) props))))
      (ctxls-test--mx "ctxls-resume" "")
      (ctxls-test--wait "the session with thumbnails"
                        (lambda () (string-search "third\n\n[image: sources/" (car (last (split-string (ctxls-test--chat-text) "# New session"))))))
      (with-current-buffer ctxls--chat
        (goto-char (point-max))
        (re-search-backward "\\[image: sources/\\([^]]+\\)\\]")
        (let* ((rel (concat "sources/" (match-string 1)))
               (thumb (get-text-property (1+ (match-end 0)) 'display)))
          (should (eq (car-safe thumb) 'image))
          (should (equal (plist-get (cdr thumb) :file) (expand-file-name rel ctxls--session-folder)))
          (should (equal (plist-get (cdr thumb) :max-width) 240))))))
  (ctxls-test--stop))

;;;; Turns made elsewhere

(defun ctxls-test--elsewhere (&rest args)
  "Run the ctxls CLI with ARGS as another client of the current session's store.
It has a data directory of its own with PostgreSQL (another machine),
the same with SQLite; its process is returned, running."
  (let ((process-environment (append (list (concat "CTXLS_DATA_DIR=" (getenv "CTXLS_OTHER_DATA_DIR"))
                                           "CTXLS_MODEL=test-model")
                                     process-environment)))
    (make-process :name "ctxls elsewhere" :buffer (generate-new-buffer " *ctxls elsewhere*")
                  :command (cons (getenv "CTXLS_BIN") args)
                  :connection-type 'pipe :noquery t)))

(defun ctxls-test--finished (proc)
  "Wait for PROC to exit, and fail unless it did with status 0."
  (ctxls-test--wait "the other client" (lambda () (not (process-live-p proc))) 20)
  (unless (= 0 (process-exit-status proc))
    (ert-fail (list 'the-other-client-failed (process-exit-status proc)
                    (with-current-buffer (process-buffer proc) (buffer-string))))))

(defun ctxls-test--count (needle)
  "How many times NEEDLE is in the chat."
  (let ((chat (ctxls-test--chat-text)) (n 0) (start 0))
    (while (setq start (string-search needle chat start))
      (setq n (1+ n) start (1+ start)))
    n))

(defconst ctxls-test--elsewhere-turn
  "## You\n\nasked elsewhere\n\n## ctxls\n\nanswer from the other client\n\n_tokens: 10 in · 5 out_\n\n"
  "The turn the other client makes, as the chat shows it.")

(ert-deftest ctxls-test-elsewhere ()
  "A turn another client makes in the chat's session shows in the chat, live:
with PostgreSQL (CTXLS_TEST_STORE postgres) and with SQLite (the same data
directory), with no focus change and no g.  A turn of this Emacs's streams
as ever meanwhile."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "asked here")
  (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
  (ctxls-test--wait "the title" (lambda () (equal ctxls--session-title "Shared session")))
  ;; The Go test makes sure this daemon listens (PostgreSQL) before the
  ;; other client starts.
  (let ((shared (getenv "CTXLS_SHARED"))
        (comebacks 0))
    (with-temp-file shared (insert ctxls--session-id))
    (ctxls-test--wait "the go-ahead" (lambda () (file-exists-p (concat shared ".go"))) 30)
    ;; Nothing here reads the session again by itself: no window is
    ;; selected, no frame focused, no g.  Counted to be sure.
    (let ((count (lambda (&rest _) (setq comebacks (1+ comebacks)))))
      (advice-add 'ctxls--chat-selected :before count '((name . ctxls-test-comeback)))
      (advice-add 'ctxls--on-focus-change :before count '((name . ctxls-test-comeback)))
      (advice-add 'ctxls-chat-refresh :before count '((name . ctxls-test-comeback))))
    (unwind-protect
        (let ((other (ctxls-test--elsewhere "chat" "--session" ctxls--session-id "asked elsewhere")))
          ;; The question shows while the other client's answer streams
          ;; (5 chunks, 400 ms apart), marked as being answered.
          (ctxls-test--wait "the question asked elsewhere"
                            (lambda () (string-search "## You\n\nasked elsewhere\n\n## ctxls\n\n" (ctxls-test--chat-text))))
          (should (process-live-p other))
          (should (string-search "_answering elsewhere…_\n\n" (ctxls-test--chat-text)))
          (ctxls-test--finished other)
          (ctxls-test--wait "the answer given elsewhere"
                            (lambda () (string-suffix-p ctxls-test--elsewhere-turn (ctxls-test--chat-text)))))
      (advice-remove 'ctxls--chat-selected 'ctxls-test-comeback)
      (advice-remove 'ctxls--on-focus-change 'ctxls-test-comeback)
      (advice-remove 'ctxls-chat-refresh 'ctxls-test-comeback))
    (should (= 0 comebacks))
    (should-not (string-search "answering elsewhere" (ctxls-test--chat-text)))
    (should (= 1 (ctxls-test--count "asked elsewhere")))
    ;; The session's cost counts the turn made elsewhere.
    (ctxls-test--wait "the session's usage" (lambda () (equal ctxls--session-usage "20 in · 7 out")))
    ;; A turn here streams while the session changes elsewhere (renamed
    ;; there, and g pressed): nothing is put in its way, and the rename
    ;; shows once it has ended.
    (ctxls-test--mx "ctxls-ask" "asked here again")
    (ctxls-test--wait "the first words" (lambda () (string-search "second " (ctxls-test--chat-text))))
    (ctxls-test--finished (ctxls-test--elsewhere "sessions" "rename" ctxls--session-id "Renamed elsewhere"))
    (ctxls-test--in-chat "g")
    (should ctxls--turn)
    (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
    (ctxls-test--wait "the title given elsewhere" (lambda () (equal ctxls--session-title "Renamed elsewhere")))
    (ctxls-test--mx "ctxls-chat")
    (accept-process-output nil 0.5)
    (should (string-suffix-p (concat ctxls-test--elsewhere-turn
                                     "## You\n\n_with main.go_\n\nasked here again\n\n## ctxls\n\n"
                                     "second answer here, all of it\n\n_tokens: 10 in · 4 out_\n\n")
                             (ctxls-test--chat-text)))
    (should (= 3 (ctxls-test--count "## You")))
    ;; Another turn elsewhere shows by itself too.
    (ctxls-test--finished (ctxls-test--elsewhere "chat" "--session" ctxls--session-id "and once more"))
    (ctxls-test--wait "the third turn made elsewhere"
                      (lambda () (string-suffix-p "## You\n\nand once more\n\n## ctxls\n\nlast one\n\n_tokens: 10 in · 2 out_\n\n"
                                                  (ctxls-test--chat-text))))
    ;; One session block.
    (should (= 1 (cl-count-if (lambda (l) (string-prefix-p "# " l))
                              (split-string (ctxls-test--chat-text) "\n"))))
    ;; The last question asked again elsewhere, in place of its answer: the
    ;; chat says so and shows the session again, as it is now (g pressed
    ;; too, as the update comes: it is shown again once).
    (ctxls-test--finished (ctxls-test--elsewhere "chat" "--session" ctxls--session-id "--again" "asked again elsewhere"))
    (ctxls-test--in-chat "g")
    (ctxls-test--wait "the session shown again"
                      (lambda () (string-search "_the session was changed elsewhere (a question asked again): shown again below_\n\n# "
                                                (ctxls-test--chat-text))))
    ;; The session may be read while the other client still answers: the
    ;; answer follows as it is stored.
    (ctxls-test--wait "the answer given elsewhere, in the session shown again"
                      (lambda () (string-suffix-p "## You\n\nasked again elsewhere\n\n## ctxls\n\nanswered again\n\n_tokens: 10 in · 1 out_\n\n"
                                                  (or (cadr (split-string (ctxls-test--chat-text) "shown again below_\n")) ""))))
    (accept-process-output nil 1.5)
    (should (= 1 (ctxls-test--count "shown again below")))
    (let ((again (cadr (split-string (ctxls-test--chat-text) "shown again below_\n"))))
      (should (string-suffix-p "## You\n\nasked again elsewhere\n\n## ctxls\n\nanswered again\n\n_tokens: 10 in · 1 out_\n\n" again))
      (should-not (string-search "and once more" again))
      (should (string-search "asked here again" again)))
    ;; The session resumed while its last turn is being answered elsewhere
    ;; (its partial answer stored): the answer follows as it is stored, to
    ;; its end (it stayed "answering elsewhere…").
    (let ((id ctxls--session-id))
      (ctxls-test--mx "ctxls-new-session")
      (ctxls-test--wait "the new session" (lambda () (and ctxls--session-id (not (equal ctxls--session-id id)))))
      (let ((other (ctxls-test--elsewhere "chat" "--session" id "answer slowly")))
        (ctxls-test--wait "the partial answer stored elsewhere"
                          (lambda ()
                            (let ((last (car (last (append (plist-get (ctxls-test--call ctxls-protocol-command-session-show
                                                                                        (list :sessionId id))
                                                                      :messages)
                                                           nil)))))
                              (and (equal (plist-get last :role) "assistant")
                                   (string-search "slow " (or (plist-get last :content) "")))))
                          15)
        (ctxls-test--mx "ctxls-resume" "")
        (ctxls-test--wait "the session resumed mid-turn"
                          (lambda () (and (equal ctxls--session-id id)
                                          (string-search "answer slowly\n\n## ctxls\n\n" (ctxls-test--chat-text)))))
        (should (process-live-p other))
        (ctxls-test--finished other)
        (ctxls-test--wait "the answer finished elsewhere"
                          (lambda () (string-suffix-p "## You\n\nanswer slowly\n\n## ctxls\n\nslow answer from far away.\n\n_tokens: 10 in · 6 out_\n\n"
                                                      (ctxls-test--chat-text))))
        (should (= 1 (ctxls-test--count "answer slowly")))
        (should-not (string-search "answering elsewhere" (car (last (split-string (ctxls-test--chat-text) "answer slowly"))))))))
  (ctxls-test--stop))

;;;; What a turn cost, and how it ended

(defconst ctxls-test--costly "Costly answer.\n\n_tokens: 1,834 in (1,536 cached) · 211 out_\n\n"
  "The first answer of `ctxls-test-history' and what it cost.")

(defconst ctxls-test--cheap "and this?\n\n## ctxls\n\nCheap.\n\n_tokens: 10 in · 1 out_\n\n"
  "The second turn of `ctxls-test-history'.")

(defconst ctxls-test--session-usage "1,844 in (1,536 cached) · 212 out"
  "What the session of `ctxls-test-history' cost.")

(defun ctxls-test--stored-status (question)
  "The stored status of the answer to QUESTION in the current session."
  (let* ((messages (append (plist-get (ctxls-test--call ctxls-protocol-command-session-show
                                                        (list :sessionId ctxls--session-id))
                                      :messages)
                           nil))
         (tail (cdr (cl-member question messages :key (lambda (m) (plist-get m :content)) :test #'equal))))
    (plist-get (car tail) :status)))

(defun ctxls-test--history-checks ()
  "Check the history of `ctxls-test-history''s session as shown now."
  (let ((chat (ctxls-test--chat-text)))
    (should (string-search (concat "how much?\n\n## ctxls\n\n" ctxls-test--costly "## You") chat))
    (should (string-search ctxls-test--cheap chat))
    ;; A stopped answer is cancelled, one the daemon could not finish
    ;; (it was killed) interrupted.
    (should (string-search "count slowly\n\n## ctxls\n\none \n\n_cancelled_\n\n## You" chat))
    (should (string-search "crash now\n\n## ctxls\n\npartial \n\n_interrupted: the daemon stopped before the answer was complete_\n\n" chat)))
  (with-current-buffer ctxls--chat
    (should (string-search (concat " · " ctxls-test--session-usage) (ctxls--header-line)))))

(ert-deftest ctxls-test-history ()
  "Each answer says what it cost, and how it ended; the header line the session's cost."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-ask" "how much?")
  (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
  (should (string-search (concat "how much?\n\n## ctxls\n\n" ctxls-test--costly) (ctxls-test--chat-text)))
  (ctxls-test--wait "the model's title" (lambda () (equal ctxls--session-title "Emacs Test Title")) 30)
  (ctxls-test--mx "ctxls-ask" "and this?")
  (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
  (should (string-search ctxls-test--cheap (ctxls-test--chat-text)))
  ;; The session's cost, in the chat's header line.
  (ctxls-test--wait "the session's usage"
                    (lambda () (equal ctxls--session-usage ctxls-test--session-usage)))
  (with-current-buffer ctxls--chat
    ;; In 80 columns the key hints do not fit beside it: they are left
    ;; out whole, none cut in half (TestEmacsLiveElsewhere sees them in
    ;; 110).
    (should (equal (ctxls--header-line) " ctxls · Emacs Test Title · test-model · 1,844 in (1,536 cached) · 212 out"))
    (let ((ctxls--session-usage nil))
      (should (equal (ctxls--header-line) " ctxls · Emacs Test Title · test-model   a ask  w write  r resume  ? keys"))))
  ;; Stopped: "cancelled", live and stored.
  (ctxls-test--mx "ctxls-ask" "count slowly")
  (ctxls-test--wait "the first word" (lambda () (string-search "one " (ctxls-test--chat-text))))
  (ctxls-test--mx "ctxls-cancel")
  (ctxls-test--wait "the turn to end" (lambda () (null ctxls--turn)))
  (should (string-search "count slowly\n\n## ctxls\n\none \n\n_cancelled_\n\n" (ctxls-test--chat-text)))
  (should (equal (ctxls-test--stored-status "count slowly") "cancelled"))
  ;; The daemon killed while an answer streams: "interrupted".
  (ctxls-test--mx "ctxls-ask" "crash now")
  (ctxls-test--wait "the first words" (lambda () (string-search "partial " (ctxls-test--chat-text))))
  (sleep-for 1)                         ; the answer is checkpointed every 500 ms
  (signal-process (jsonrpc--process ctxls--connection) 'KILL)
  (ctxls-test--wait "the exit to be noticed" (lambda () (null ctxls--connection)))
  (should (string-search "partial \n\n_error: " (ctxls-test--chat-text)))
  ;; Shown again from the store (the daemon starts again).
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the resumed history"
                    (lambda () (string-search "crash now\n\n## ctxls\n\npartial \n\n_interrupted"
                                              (car (last (split-string (ctxls-test--chat-text) "# Emacs Test Title\n"))))))
  (ctxls-test--history-checks)
  (should (equal (ctxls-test--stored-status "crash now") "interrupted"))
  (ctxls-test--stop))

(ert-deftest ctxls-test-history-resume ()
  "A new Emacs shows the same history: costs and how each answer ended."
  (ctxls-test--setup)
  (ctxls-mode 1)
  (ctxls-test--ready)
  (ctxls-test--mx "ctxls-resume" "")
  (ctxls-test--wait "the history" (lambda () (string-search "crash now" (ctxls-test--chat-text))))
  (ctxls-test--wait "the session's usage"
                    (lambda () (equal ctxls--session-usage ctxls-test--session-usage)))
  (ctxls-test--history-checks)
  ;; ? in the chat lists all its keys, those the header line leaves out too.
  (ctxls-test--in-chat "?")
  (ctxls-test--wait "the chat's keys" (lambda () (get-buffer "*Help*")))
  (with-current-buffer "*Help*"
    (dolist (key '("ctxls-ask" "ctxls-compose" "ctxls-apply-block" "ctxls-chat-refresh" "ctxls-cancel"))
      (should (string-search key (buffer-string)))))
  (ctxls-test--stop))

;;;; The documented setup

(defun ctxls-test--system-packages (feature)
  "Activate the elpa packages in $CTXLS_ELPA and require FEATURE.
As `emacs' without -Q would: Debian's elpa packages, or for a newer
Emacs than Debian's the same byte-compiled by it (ci-install.sh); a
package built into Emacs (eglot and use-package from Emacs 29 on) wins
over an older one there.  Fail in CI when FEATURE is missing, else skip."
  (require 'package)
  (add-to-list 'package-directory-list (getenv "CTXLS_ELPA"))
  (package-initialize)
  (unless (require feature nil t)
    (if (getenv "CI")
        (ert-fail (format "%s is not installed: run editors/emacs/ci-install.sh" feature))
      ;; For emacs_test.go, which skips the Go test saying why.
      (message "ctxls-test: skipped: %s is not installed (editors/emacs/ci-install.sh)" feature)
      (ert-skip (format "no %s" feature)))))

(ert-deftest ctxls-test-docs-setup ()
  "The init code of docs/editors.md ($CTXLS_DOC_SETUP) works as written."
  (when (string-search "use-package" (getenv "CTXLS_DOC_SETUP"))
    (ctxls-test--system-packages 'use-package))
  ;; The user's init file, with the daemon found on PATH as "ctxls".
  (setq default-directory (file-name-as-directory (getenv "CTXLS_WORK")))
  (eval (car (read-from-string (concat "(progn " (getenv "CTXLS_DOC_SETUP") ")"))) t)
  (should ctxls-mode)
  (should (equal ctxls-command '("ctxls" "serve")))
  (should (equal ctxls-provider '(:model "gpt-4o-mini")))
  ;; Not C-c a: Org's manual suggests it for org-agenda.
  (should (eq (key-binding (kbd "C-c x a")) 'ctxls-ask))
  (should (eq (key-binding (kbd "C-c x k")) 'ctxls-cancel))
  (should-not (key-binding (kbd "C-c a")))
  (find-file (ctxls-test--file "main.go"))
  (ctxls-test--ready)
  (should ctxls--uri)
  (insert "// typed after the documented setup\n")
  (ctxls-test--same "an edit after the documented setup")
  ;; Off and at once on again: a new daemon, while the old one shuts down.
  (let ((old ctxls--connection))
    (ctxls-mode -1)
    (ctxls-mode 1)
    (should-not (eq old ctxls--connection))
    (ctxls-test--ready)
    (ctxls-test--wait "the old daemon to exit" (lambda () (not (jsonrpc-running-p old))) 5))
  (should ctxls--uri)
  (insert "// after the toggle\n")
  (ctxls-test--same "an edit after turning the mode off and on")
  (ctxls-test--stop))

;;;; Beside another language server

(ert-deftest ctxls-test-eglot ()
  "eglot keeps its server on the buffer while ctxls-mode syncs it too."
  ;; Debian's elpa-eglot on Emacs 28, the one built in from Emacs 29 on.
  (ctxls-test--system-packages 'eglot)
  (ctxls-test--setup)
  (let* ((programs `((python-mode . (,(getenv "CTXLS_FAKE_LSP_BIN") "-test.run=^$"))))
         (process-environment (cons "CTXLS_FAKE_LSP=1" process-environment))
         (file (ctxls-test--file "tool.py")))
    (setq eglot-server-programs programs)
    (ctxls-mode 1)
    (find-file file)
    (should (derived-mode-p 'python-mode))
    (apply #'eglot (eglot--guess-contact))
    (ctxls-test--wait "eglot" (lambda () (and (eglot-current-server) eglot--managed-mode)))
    (ctxls-test--ready)
    (should ctxls--uri)
    (goto-char (point-min))
    (end-of-line)
    (insert "  # typed with both servers ✓")
    (eglot--signal-textDocument/didChange)
    ;; eglot's own server got the edit and answers for the buffer.
    (let* ((server (eglot-current-server))
           (hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
      (should (equal (plist-get (eglot--server-info server) :name) "fake-lsp"))
      (should (equal (plist-get (plist-get hover :contents) :value)
                     "fake-lsp line: def greet(name):  # typed with both servers ✓")))
    ;; ctxls got it too, and eglot's setup is untouched.
    (ctxls-test--same "edit in an eglot-managed buffer")
    (should (equal eglot-server-programs programs))
    (should eglot--managed-mode)
    ;; Turning ctxls off leaves eglot running.
    (ctxls-test--stop)
    (should (jsonrpc-running-p (eglot-current-server)))
    (should eglot--managed-mode)
    (eglot-shutdown (eglot-current-server))))

;;;; lsp-mode's add-on server

(defvar lsp-session-file)
(defvar lsp-auto-guess-root)
(defvar lsp-restart)
(defvar lsp-keep-workspace-alive)
(defvar lsp-enable-file-watchers)
(defvar lsp-headerline-breadcrumb-enable)
(defvar lsp-modeline-code-actions-enable)
(defvar lsp-modeline-diagnostics-enable)
(defvar lsp-lens-enable)
(defvar lsp-enable-snippet)

(ert-deftest ctxls-test-lsp-mode ()
  "docs/editors.md's lsp-mode add-on recipe: ctxls next to the language's server."
  (ctxls-test--system-packages 'lsp-mode)
  (ctxls-test--setup)
  (setq lsp-session-file (make-temp-file "lsp-session")
        lsp-auto-guess-root nil lsp-restart 'ignore lsp-keep-workspace-alive nil
        lsp-enable-file-watchers nil lsp-headerline-breadcrumb-enable nil
        lsp-modeline-code-actions-enable nil lsp-modeline-diagnostics-enable nil
        lsp-lens-enable nil lsp-enable-snippet nil)
  (let ((process-environment (cons "CTXLS_FAKE_LSP=1" process-environment))
        (file (ctxls-test--file "tool.py")))
    ;; The language's own server.
    (lsp-register-client
     (make-lsp-client :new-connection (lsp-stdio-connection (list (getenv "CTXLS_FAKE_LSP_BIN") "-test.run=^$"))
                      :major-modes '(python-mode) :server-id 'fake-lsp :priority 10))
    ;; The documented registration, as written ("ctxls" is on PATH).
    (eval (car (read-from-string (concat "(progn " (getenv "CTXLS_DOC_LSP") ")"))) t)
    (find-file file)
    (lsp-workspace-folders-add (getenv "CTXLS_WORK"))
    (lsp)
    (ctxls-test--wait "both servers"
                      (lambda () (and (= 2 (length (lsp-workspaces)))
                                      (cl-every (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                                                (lsp-workspaces)))))
    (should-not (ctxls-test--said "Unknown notification"))
    (should (equal (sort (mapcar (lambda (w) (lsp--client-server-id (lsp--workspace-client w))) (lsp-workspaces))
                         #'string<)
                   '(ctxls fake-lsp)))
    (goto-char (point-min))
    (end-of-line)
    (insert "  # lsp-mode edit ✓")
    (goto-char (point-min))
    (forward-line 1)
    (insert "    # a second line ü\n")
    ;; The language's server answers for the buffer as edited...
    (goto-char (point-min))
    (should (equal (lsp-get (lsp-get (lsp-request "textDocument/hover" (lsp--text-document-position-params)) :contents)
                            :value)
                   "fake-lsp line: def greet(name):  # lsp-mode edit ✓"))
    ;; ... and ctxls holds the same text, and runs the documented command.
    (let ((want (buffer-substring-no-properties (point-min) (point-max)))
          (uri (lsp--buffer-uri)))
      (should (equal (lsp-get (lsp-request "workspace/executeCommand"
                                           (list :command ctxls-protocol-command-document-get
                                                 :arguments (vector (list :uri uri))))
                              :text)
                     want)))
    (let ((ctxls-test--messages nil))
      (eval (car (read-from-string (concat "(progn " (getenv "CTXLS_DOC_LSP_COMMAND") ")"))) t)
      (ctxls-test--wait "the command's answer" (lambda () (ctxls-test--said "ctxls: context updated")))
      (accept-process-output nil 0.2)
      ;; The registration handles ctxls's notifications (contextChanged here).
      (should-not (ctxls-test--said "Unknown notification")))
    (should (equal (append (lsp-get (lsp-get (lsp-request "workspace/executeCommand"
                                                          (list :command ctxls-protocol-command-context-get
                                                                :arguments (vector (list :setName "files"))))
                                             :context)
                                    :files)
                           nil)
                   (list file)))
    ;; With markdown-mode installed (lsp-mode brings it) the chat buffer uses it.
    (with-current-buffer (ctxls--chat-buffer)
      (should (derived-mode-p 'markdown-mode)))
    (lsp-workspace-shutdown (car (lsp-workspaces)))))

;;;; Typing a question

(defvar savehist-file)                  ; bound dynamically below, compiled too

(ert-deftest ctxls-test-input-history ()
  "M-p and M-n bring back the questions asked before, in the question
buffer (as in comint: past the newest, what was typed) and at the
prompt, one history for both; savehist-mode keeps it."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let ((source (current-buffer)))
    (ctxls-test--mx "ctxls-ask" "first question")
    (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
    ;; In the question buffer, over what is typed there.
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-compose" (kbd "RET") "a draft" (kbd "RET") "of two lines"))
    (should (equal (buffer-name) "*ctxls question*"))
    (execute-kbd-macro (kbd "M-p"))
    (should (equal (buffer-string) "first question"))
    (should (eobp))
    ;; Nothing before the first question: said, the text stays.
    (should-error (execute-kbd-macro (kbd "M-p")) :type 'user-error)
    (should (equal (buffer-string) "first question"))
    (execute-kbd-macro (kbd "M-n"))
    (should (equal (buffer-string) "a draft\nof two lines"))
    (should-error (execute-kbd-macro (kbd "M-n")) :type 'user-error)
    (should (equal (buffer-string) "a draft\nof two lines"))
    ;; Brought back, changed and sent.
    (execute-kbd-macro (vconcat (kbd "M-p") " again" (kbd "C-c C-c")))
    (should-not (get-buffer "*ctxls question*"))
    (should (eq (current-buffer) source))
    (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
    ;; At the prompt: the question sent from the buffer, then the one before
    ;; (point at the start, as Emacs's M-p leaves it in an empty prompt).
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-ask" (kbd "RET M-p M-p C-e") ", once more" (kbd "RET")))
    (ctxls-test--wait "the third answer" (lambda () (null ctxls--turn)))
    (should (string-search "_with main.go_\n\nfirst question again\n\n## ctxls\n\nsecond answer\n" (ctxls-test--chat-text)))
    (should (string-search "_with main.go_\n\nfirst question, once more\n\n## ctxls\n\nthird answer\n" (ctxls-test--chat-text)))
    ;; The buffer walks the prompt's questions too, newest first, and back.
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-compose" (kbd "RET M-p")))
    (should (equal (buffer-string) "first question, once more"))
    (execute-kbd-macro (kbd "M-p M-p"))
    (should (equal (buffer-string) "first question"))
    (execute-kbd-macro (kbd "M-n"))
    (should (equal (buffer-string) "first question again"))
    (execute-kbd-macro (kbd "M-n M-n"))
    (should (equal (buffer-string) ""))
    ;; M-r picks one with completion; M-p goes on from it.
    (execute-kbd-macro (vconcat (kbd "M-r") "first question a" (kbd "RET")))
    (should (equal (buffer-string) "first question again"))
    (execute-kbd-macro (kbd "M-p"))
    (should (equal (buffer-string) "first question"))
    (execute-kbd-macro (kbd "C-c C-k"))
    (should (eq (current-buffer) source)))
  ;; savehist-mode keeps the history, the question buffer's included.
  (require 'savehist)
  (let ((savehist-file (make-temp-file "ctxls-savehist")))
    (savehist-mode 1)
    (savehist-save)
    (savehist-mode -1)
    (setq ctxls-question-history nil)
    (load savehist-file nil t t)
    (should (equal ctxls-question-history '("first question, once more" "first question again" "first question"))))
  (ctxls-test--stop))

(defun ctxls-test--face-at (text face)
  "Non-nil when the first TEXT of the buffer has FACE at each character."
  (save-excursion
    (goto-char (point-min))
    (search-forward text)
    (cl-loop for pos from (match-beginning 0) below (match-end 0)
             always (let ((f (get-text-property pos 'face)))
                      (if (listp f) (memq face f) (eq f face))))))

(ert-deftest ctxls-test-mentions ()
  "\"@\" then C-M-i or TAB completes a workspace file's path from the
daemon (ctxls.workspace.files), in the question buffer and at the
prompt; the question goes as typed, and the chat names the file under it."
  (ctxls-test--setup)
  (find-file (ctxls-test--file "main.go"))
  (ctxls-mode 1)
  (ctxls-test--ready)
  (let ((source (current-buffer))
        completions)
    ;; The question buffer: "@log" completes to the one file it matches
    ;; (a subsequence: auth/login.go), and a space follows it.
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-compose" (kbd "RET") "what does @log"))
    (should (equal (buffer-name) "*ctxls question*"))
    ;; A mention shows as one once it names a file.
    (font-lock-ensure)
    (should-not (ctxls-test--face-at "@log" 'ctxls-mention))
    (execute-kbd-macro (vconcat (kbd "C-M-i") "do?"))
    (should (equal (buffer-string) "what does @auth/login.go do?"))
    (font-lock-ensure)
    (should (ctxls-test--face-at "@auth/login.go" 'ctxls-mention))
    (should-not (ctxls-test--face-at " do?" 'ctxls-mention))
    ;; TAB completes in a mention; elsewhere it does what it did.
    (save-excursion
      (search-backward "login")
      (should (eq (key-binding (kbd "TAB")) 'completion-at-point)))
    (execute-kbd-macro (kbd "M-<"))
    (should-not (eq (key-binding (kbd "TAB")) 'completion-at-point))
    (should (eq (key-binding (kbd "TAB"))
                (let ((ctxls-compose-mode nil)) (key-binding (kbd "TAB")))))
    (execute-kbd-macro (kbd "C-c C-c"))
    (should (eq (current-buffer) source))
    (ctxls-test--wait "the first answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\n_with main.go, auth/login.go_\n\nwhat does @auth/login.go do?\n\n## ctxls\n\nIt redirects.\n"
                           (ctxls-test--chat-text)))
    ;; In the chat, RET on the mention visits the file.
    (select-window (display-buffer ctxls--chat))
    (goto-char (point-min))
    ;; (The question, not the session's title: until the model's, that is
    ;; the question too.)
    (search-forward "\n\nwhat does @auth")
    (should (equal (mapcar (lambda (o) (list (overlay-start o) (button-label o)))
                           (cl-remove-if-not (lambda (o) (eq (button-type o) 'ctxls-mention))
                                             (overlays-in (point-min) (point-max))))
                   (list (list (+ (match-beginning 0) (length "\n\nwhat does ")) "@auth/login.go"))))
    (execute-kbd-macro (kbd "RET"))
    (should (equal buffer-file-name (ctxls-test--file "auth/login.go")))
    (switch-to-buffer source)
    ;; At the prompt, TAB after "@" alone lists the workspace's files, the
    ;; open ones first; "sy" and TAB again completes the one it matches.
    (define-key global-map (kbd "<f9>")
      (lambda () (interactive)
        (setq completions (with-current-buffer "*Completions*" (buffer-substring-no-properties (point-min) (point-max))))))
    (execute-kbd-macro (vconcat (kbd "M-x") "ctxls-ask" (kbd "RET") "compare @" (kbd "TAB <f9>")
                                "sy" (kbd "TAB") "to it" (kbd "RET")))
    (should completions)
    (dolist (f '("main.go" "auth/login.go" "sync.txt" "tool.py"))
      (should (string-search f completions)))
    ;; The open files (main.go, and auth/login.go visited from the chat)
    ;; first.
    (dolist (open '("main.go" "auth/login.go"))
      (dolist (other '("sync.txt" "tool.py"))
        (should (< (string-search open completions) (string-search other completions)))))
    (should-not (string-search ".git" completions))
    (ctxls-test--wait "the second answer" (lambda () (null ctxls--turn)))
    (should (string-search "## You\n\n_with main.go, sync.txt_\n\ncompare @sync.txt to it\n\n## ctxls\n\nThey differ.\n"
                           (ctxls-test--chat-text)))
    ;; The session shown again (resumed): its questions' mentions are
    ;; buttons there too, and each says what went with it, as the daemon
    ;; kept it.
    (ctxls-test--mx "ctxls-resume" "")
    (ctxls-test--wait "the resumed history"
                      (lambda () (= 2 (ctxls-test--count "compare @sync.txt to it\n\n## ctxls\n\nThey differ."))))
    (should (= 2 (ctxls-test--count "## You\n\n_with main.go, sync.txt_\n\ncompare @sync.txt to it")))
    (should (= 2 (ctxls-test--count "## You\n\n_with main.go, auth/login.go_\n\nwhat does @auth/login.go do?")))
    (with-current-buffer ctxls--chat
      (should (equal (mapcar #'button-label
                             (sort (cl-remove-if-not (lambda (o) (eq (button-type o) 'ctxls-mention))
                                                     (overlays-in (point-min) (point-max)))
                                   (lambda (a b) (< (overlay-start a) (overlay-start b)))))
                     '("@auth/login.go" "@sync.txt" "@auth/login.go" "@sync.txt")))))
  (ctxls-test--stop))

(provide 'ctxls-test)
;;; ctxls-test.el ends here
