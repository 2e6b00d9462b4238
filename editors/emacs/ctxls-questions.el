;;; ctxls-questions.el --- The daemon's questions, asked in the chat  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: the questions the daemon asks
;; (ctxls/question: may the model call an MCP tool or run a command,
;; trust a workspace's .mcp.json) shown in the chat with the keys that
;; answer them, and closed (ctxls/questionClosed) with their outcome.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-chat)

(declare-function ctxls--command "ctxls" (id arg on-success &optional on-error))

;;;; Questions in the chat

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
  "An open question's line in the chat buffer."
  :group 'ctxls)

(defface ctxls-question-keys '((t :inherit (bold font-lock-keyword-face)))
  "The line of an open question's keys in the chat buffer."
  :group 'ctxls)

(defface ctxls-question-closed '((t :inherit shadow))
  "A closed question's line in the chat buffer."
  :group 'ctxls)

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

;;;###autoload (autoload 'ctxls-answer "ctxls" nil t)
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

(provide 'ctxls-questions)
;;; ctxls-questions.el ends here
