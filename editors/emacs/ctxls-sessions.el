;;; ctxls-sessions.el --- Sessions: new, resume, search, rename, model, delete  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: the commands on sessions, the
;; pickers that offer them (most recent first, with their age), and a
;; session's title as the daemon announces it (ctxls/sessionUpdated).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'parse-time)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-chat)

(declare-function ctxls--call "ctxls" (id arg))
(declare-function ctxls--command "ctxls" (id arg on-success &optional on-error))

;;;; Sessions

(defun ctxls--no-turn ()
  "Signal a `user-error' if a turn is running."
  (when ctxls--turn
    (user-error "ctxls: a turn is running; M-x ctxls-cancel stops it first")))

;;;###autoload (autoload 'ctxls-new-session "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-resume "ctxls" nil t)
(defun ctxls-resume (session-id)
  "Make the stored session SESSION-ID current and show its history.
Interactively, pick the session (RET takes the most recent)."
  (interactive (progn (ctxls--no-turn)
                      (list (plist-get (ctxls--pick-session "Resume session: ") :id))))
  (when session-id
    (ctxls--open-session session-id)))

;;;###autoload (autoload 'ctxls-search "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-rename-session "ctxls" nil t)
(defun ctxls-rename-session (title)
  "Rename the current session to TITLE.
Interactively, the prompt starts empty: what you type is the new
title; M-n brings the current one back to edit, and RET alone keeps it."
  (interactive (list (let ((title (read-string (format-prompt "New title" ctxls--session-title)
                                               nil nil ctxls--session-title)))
                       (if (string-blank-p title) (user-error "ctxls: a title cannot be empty") title))))
  (ctxls--command ctxls-protocol-command-session-rename (ctxls--plist :sessionId ctxls--session-id :title title)
                  (lambda (r) (ctxls--take-title (plist-get r :session)))))

;;;###autoload (autoload 'ctxls-export "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-set-model "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-regenerate-title "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-compact "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-delete-session "ctxls" nil t)
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

;;;;; A session updated

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

(provide 'ctxls-sessions)
;;; ctxls-sessions.el ends here
