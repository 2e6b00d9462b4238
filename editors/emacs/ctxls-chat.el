;;; ctxls-chat.el --- The chat buffer: a session's turns, those made elsewhere  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: the *ctxls chat* buffer, its keys
;; and header line; a session rendered from the daemon's store (its
;; questions, answers, tool calls and what they cost); the turns another
;; editor or machine adds to the session, shown as they are made; and
;; the session's token usage.  A turn asked here streams into it from
;; ctxls-ask.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'text-property-search)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-input)

(declare-function ctxls--command "ctxls" (id arg on-success &optional on-error))
(declare-function ctxls--usable-p "ctxls" ())
(declare-function ctxls--buttonize-images "ctxls-ask" (start end session))
(declare-function ctxls--stored-file-label "ctxls-ask" (item))
(declare-function ctxls-ask "ctxls-ask" (message &optional files))
(declare-function ctxls-attach-image "ctxls-ask" (file &optional remove))
(declare-function ctxls-cancel "ctxls-ask" ())
(declare-function ctxls-compose "ctxls-ask" (&optional leave-out))
(declare-function ctxls-edit-question "ctxls-ask" (&optional leave-out))
(declare-function ctxls-regenerate "ctxls-ask" (&optional leave-out))
(declare-function ctxls-add-file "ctxls-context" (&optional file))
(declare-function ctxls-preview "ctxls-context" (message))
(declare-function ctxls-remove-file "ctxls-context" (file))
(declare-function ctxls-show-context "ctxls-context" ())
(declare-function ctxls-apply-block "ctxls-review" ())
(declare-function ctxls-redo "ctxls-review" ())
(declare-function ctxls-undo "ctxls-review" ())
(declare-function ctxls--session-model "ctxls-sessions" (session))
(declare-function ctxls-new-session "ctxls-sessions" (&optional title))
(declare-function ctxls-resume "ctxls-sessions" (session-id))
(declare-function ctxls-search "ctxls-sessions" (query))
(declare-function ctxls--stored-calls "ctxls-tools" (msg results))
(declare-function ctxls--tool-insert "ctxls-tools" (params))
(declare-function ctxls-chat-tab "ctxls-tools" ())

(defvar ctxls-mode)

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

;;;###autoload (autoload 'ctxls-chat-refresh "ctxls" nil t)
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

;;;; The thinking placeholder

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

(provide 'ctxls-chat)
;;; ctxls-chat.el ends here
