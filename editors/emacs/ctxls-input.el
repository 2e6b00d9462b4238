;;; ctxls-input.el --- Typing a question to ctxls: history, @file mentions  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: what helps you type a question, at
;; the `ctxls-ask' prompt and in the *ctxls question* buffer
;; (`ctxls-compose').
;;
;; History.  Every question sent goes into `ctxls-question-history', one
;; list for both places.  At the prompt M-p and M-n walk it as any
;; minibuffer history; in the question buffer they do the same, as in
;; comint: M-p replaces the text with the question asked before, M-n
;; goes forward again, and past the newest you get back what you had
;; typed; M-r picks one with completion.  With `savehist-mode' on, the list is kept from one Emacs to
;; the next.
;;
;; @file mentions.  "@PATH" in a question (at its start or after a space;
;; "@main.go:5-8" for lines) gives the model that workspace file with the
;; question: the daemon reads the mention, the message goes unchanged.
;; After "@", C-M-i (or TAB) completes the path from the workspace's files
;; (the command ctxls.workspace.files, matched as a subsequence: "@lgn"
;; finds auth/login.go), the open and recently edited ones first; any
;; completion UI built on `completion-at-point' (corfu, company's capf
;; backend) offers them as you type.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'ctxls-protocol)

(defvar ctxls--state)
(defvar ctxls--connection)
(defvar ctxls--folders)
(defvar ctxls-request-timeout)
(declare-function ctxls--flush "ctxls-sync" ())
(declare-function ctxls--request-wait "ctxls" (conn method params timeout))

;;;; History

(defvar ctxls-question-history nil
  "The questions sent to ctxls, newest first.
`ctxls-ask' reads its question with this history (M-p, M-n at the
prompt) and the question buffer's M-p and M-n walk it too
\(`ctxls-previous-question').  `savehist-mode' keeps it.")

;; Kept by savehist-mode even when only the question buffer used it (the
;; minibuffer's histories are kept once a prompt has used them).
(with-eval-after-load 'savehist
  (defvar savehist-additional-variables)
  (add-to-list 'savehist-additional-variables 'ctxls-question-history))

(defun ctxls--remember-question (question)
  "Put QUESTION, sent, at the head of `ctxls-question-history'."
  (add-to-history 'ctxls-question-history question))

(defvar-local ctxls--history-index nil
  "Which earlier question the question buffer shows: an index into
`ctxls-question-history', or nil for the text typed there.")

(defvar-local ctxls--history-draft nil
  "The text typed in the question buffer before M-p replaced it.")

(defun ctxls--history-show (index)
  "Show the question INDEX of `ctxls-question-history' (nil: the draft)."
  (unless ctxls--history-index
    (setq ctxls--history-draft (buffer-substring (point-min) (point-max))))
  (let ((text (if index (nth index ctxls-question-history) ctxls--history-draft)))
    (delete-region (point-min) (point-max))
    (insert (or text ""))
    (setq ctxls--history-index index)))

(defun ctxls-previous-question (&optional n)
  "Replace the question being written with the one asked before it.
With N, go back N questions.  \\[ctxls-next-question] goes forward
again, and past the newest brings back what you had typed.  The
questions are `ctxls-question-history': those sent from this buffer
and from the `ctxls-ask' prompt."
  (interactive "p")
  (let* ((n (or n 1))
         (index (+ (if ctxls--history-index (1+ ctxls--history-index) 0) (1- n))))
    (cond ((null ctxls-question-history)
           (user-error "ctxls: no question asked yet"))
          ((< index 0) (ctxls-next-question (- n)))
          ((>= index (length ctxls-question-history))
           (user-error "ctxls: no earlier question (the first of %d)" (length ctxls-question-history)))
          (t (ctxls--history-show index)))))

(defun ctxls-next-question (&optional n)
  "Replace the question being written with the one asked after it.
With N, go forward N questions; past the newest, what you had typed
comes back.  See `ctxls-previous-question'."
  (interactive "p")
  (let ((n (or n 1)))
    (cond ((< n 0) (ctxls-previous-question (- n)))
          ((null ctxls--history-index)
           (user-error "ctxls: no later question: this is what you typed"))
          (t (let ((index (- ctxls--history-index n)))
               (ctxls--history-show (and (>= index 0) index)))))))

(defun ctxls-search-questions (question)
  "Replace the question being written with QUESTION, one asked before.
Interactively it is read with completion from `ctxls-question-history'
\(as M-r in a shell buffer searches its input history); then
\\<ctxls-compose-mode-map>\\[ctxls-previous-question] and \\[ctxls-next-question] go on from it."
  (interactive
   (progn (unless ctxls-question-history
            (user-error "ctxls: no question asked yet"))
          ;; Not recorded: the history would gain the question picked.
          (list (completing-read "Earlier question: " ctxls-question-history nil t nil t))))
  (let ((index (cl-position question ctxls-question-history :test #'equal)))
    (unless index
      (user-error "ctxls: not a question asked before"))
    (ctxls--history-show index)))

;;;; @file mentions

(defun ctxls--mention-bounds ()
  "The bounds (START . END) of the path of the @mention at point, or nil.
A mention is \"@\" at the start of the text or after whitespace,
followed by non-space characters; START is after the \"@\".  A mention
that already names lines (\"@main.go:5-8\") is left alone."
  (save-excursion
    (let* ((limit (if (minibufferp) (minibuffer-prompt-end) (point-min)))
           (end (progn (skip-chars-forward "^ \t\n") (point)))
           (start (progn (skip-chars-backward "^ \t\n" limit) (point))))
      (when (and (eq (char-after start) ?@)
                 (not (string-match-p ":[0-9]+\\(?:-[0-9]+\\)?\\'"
                                      (buffer-substring-no-properties start end))))
        (cons (1+ start) end)))))

(defun ctxls--workspace-files (query)
  "The workspace's files matching QUERY, best first (paths, workspace-relative).
Nil while the daemon is not running: completion offers nothing then."
  (when (and (eq ctxls--state 'ready) ctxls--connection)
    (ctxls--flush)
    (let ((result (condition-case nil
                      (ctxls--request-wait ctxls--connection 'workspace/executeCommand
                                           (list :command ctxls-protocol-command-workspace-files
                                                 :arguments (vector (list :query query :limit 50)))
                                           (min 5 ctxls-request-timeout))
                    (error nil))))
      (mapcar (lambda (f) (plist-get f :path)) (plist-get result :files)))))

(defun ctxls--mention-table ()
  "A completion table of the workspace's files, asked of the daemon.
It asks with the text typed as the query (a subsequence, matched by the
daemon) and keeps each answer for the completion session: every file it
returns matches, whatever the completion styles would say."
  (let ((answers (make-hash-table :test #'equal)))
    (lambda (string pred action)
      (if (eq action 'metadata)
          '(metadata (category . ctxls-file)
                     (display-sort-function . identity)
                     (cycle-sort-function . identity))
        (let* ((query (if (> (length string) 256) (substring string 0 256) string))
               (files (or (gethash query answers)
                          (puthash query (ctxls--workspace-files query) answers)))
               (files (if pred (cl-remove-if-not pred files) files)))
          (pcase action
            ('nil (cond ((null files) nil)
                        ((and (null (cdr files)) (equal (car files) string)) t)
                        ((null (cdr files)) (car files))
                        (t string)))
            ('t files)
            ('lambda (and (member string files) t))
            (_ nil)))))))

;; The daemon has matched the files; the completion style takes them as
;; they come (as eglot's and lsp-mode's do for a server's candidates).
(defun ctxls--passthrough-try (string table pred point)
  "Complete STRING (point at POINT) from TABLE (with PRED): its answer as is."
  (let ((r (try-completion string table pred)))
    (if (stringp r) (cons r (if (equal r string) point (length r))) r)))

(defun ctxls--passthrough-all (string table pred _point)
  "All of TABLE's completions of STRING (with PRED), unfiltered."
  (let ((all (all-completions string table pred)))
    (and all (nconc all 0))))

(add-to-list 'completion-styles-alist
             '(ctxls-passthrough ctxls--passthrough-try ctxls--passthrough-all
                                 "The files the ctxls daemon matched, as it gave them."))
(add-to-list 'completion-category-defaults '(ctxls-file (styles ctxls-passthrough)))

(defun ctxls-mention-completion-at-point ()
  "Complete the path of an @file mention at point from the workspace's files.
For `completion-at-point-functions'.  Accepting one inserts its
workspace-relative path after the \"@\" and a space after it."
  (when-let ((bounds (ctxls--mention-bounds)))
    ;; Exclusive: after "@" only a file will do ("No match" rather than
    ;; a word of the dictionary).
    (list (car bounds) (cdr bounds) (ctxls--mention-table)
          :exit-function (lambda (_path status)
                           (when (and (eq status 'finished)
                                      (not (memq (char-after) '(?\s ?\t ?\n))))
                             (insert " "))))))

(defun ctxls--mention-complete-filter (command)
  "COMMAND when point is in an @file mention, else nil (TAB's own binding)."
  (and (ctxls--mention-bounds) command))

(defvar ctxls-question-input-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-M-i") #'completion-at-point)
    ;; TAB completes a mention; elsewhere it does what it did.
    (define-key map (kbd "TAB") '(menu-item "" completion-at-point :filter ctxls--mention-complete-filter))
    map)
  "Keys where a question is typed: completion of @file mentions.")

;; What the chat shows under a question: the files its mentions send.
;; The daemon reads the mentions (docs/protocol.md, ctxls.chat) and stores
;; the message as typed, not which files went; the chat's "with" line is
;; drawn as the question is sent, so it reads them by the same rules here:
;; a regular file inside a workspace folder, not in .git.  (A file whose
;; name looks secret, .env or a key, is named here but the daemon does not
;; send it; completion never offers one.)

(defconst ctxls--mention-re "\\(?:^\\|[[:space:]]\\)@\\([^[:space:]]+\\)"
  "A mention: \"@PATH\" at the start of the message or after white space.")

(defun ctxls--mention-paths (name)
  "The absolute files the mention NAME may mean, in the daemon's order."
  (let ((roots ctxls--folders))
    (cond ((string-empty-p name) nil)
          ((file-name-absolute-p name) (list (expand-file-name name)))
          (t (append (mapcar (lambda (r) (expand-file-name name r)) roots)
                     (when (and (cdr roots) (string-match "\\`\\([^/]+\\)/\\(.+\\)" name))
                       (let ((first (match-string 1 name)) (rest (match-string 2 name)))
                         (delq nil (mapcar (lambda (r) (and (equal (file-name-nondirectory (directory-file-name r)) first)
                                                            (expand-file-name rest r)))
                                           roots)))))))))

(defun ctxls--mentionable-p (file)
  "Non-nil when FILE is a regular file inside a workspace folder, not in .git."
  (and (file-regular-p file)
       (not (member ".git" (split-string file "/")))
       (cl-some (lambda (r) (file-in-directory-p (file-truename file) (file-truename r))) ctxls--folders)))

(defun ctxls--mentioned-file (raw)
  "The mention RAW (\"auth/login.go:3-4,\") read as the daemon does.
A cons (LABEL . FILE): LABEL what was typed, trailing punctuation and
all that is not part of the name left out, FILE the absolute file; or
nil when RAW names no file of the workspace."
  (cl-block nil
    (dolist (text (delete-dups (list raw (replace-regexp-in-string "[.,;:!?)]}'\"]+\\'" "" raw))))
      (let ((name text))
        (when (string-match "\\`\\(.+\\):[1-9][0-9]*\\(?:-[1-9][0-9]*\\)?\\'" text)
          (setq name (match-string 1 text)))
        (dolist (p (ctxls--mention-paths name))
          (when (ctxls--mentionable-p p) (cl-return (cons text p))))
        (unless (equal name text)
          (dolist (p (ctxls--mention-paths text)) ; a file named "x:3"
            (when (ctxls--mentionable-p p) (cl-return (cons text p)))))))))

(defun ctxls--mentions (message files)
  "The labels of the files MESSAGE mentions that are not among FILES.
FILES are the turn's own (\"/abs/main.go\", \"/abs/main.go:5-8\"); a
file both sent and mentioned goes once, as the daemon sends it."
  (let ((seen (mapcar (lambda (f) (expand-file-name (replace-regexp-in-string ":[0-9]+\\(?:-[0-9]+\\)?\\'" "" f)))
                      files))
        (start 0) out)
    (when (string-search "@" message)
      (while (and (string-match ctxls--mention-re message start) (< (length out) 20))
        (setq start (match-end 1))
        (when-let ((m (ctxls--mentioned-file (match-string 1 message))))
          (unless (member (cdr m) seen)
            (push (cdr m) seen)
            (push (car m) out)))))
    (nreverse out)))

;;;;; Mentions shown

(defface ctxls-mention '((t :inherit link))
  "A mention of a workspace file in a question, \"@auth/login.go\"."
  :group 'ctxls)

(defun ctxls--next-mention (limit)
  "Find the next mention of a workspace file before LIMIT.
Its match data is \"@\" and the file's name as typed (lines included);
the result is the `ctxls--mentioned-file' cons, or nil."
  (let (found)
    (while (and (not found) (re-search-forward ctxls--mention-re limit t))
      (let* ((at (1- (match-beginning 1)))
             (m (ctxls--mentioned-file (match-string-no-properties 1))))
        (when m
          (set-match-data (list at (+ at 1 (length (car m)))))
          (setq found m))))
    found))

(defun ctxls--mention-matcher (limit)
  "A font-lock matcher of the mentions of workspace files before LIMIT."
  (and (ctxls--next-mention limit) t))

(defun ctxls--fontify-mentions ()
  "Show the mentions of workspace files typed in this buffer as such."
  (font-lock-add-keywords nil '((ctxls--mention-matcher 0 'ctxls-mention prepend)) 'append)
  (font-lock-flush))

(define-button-type 'ctxls-mention
  'action #'ctxls--mention-visit
  'follow-link t
  'face 'ctxls-mention)

(defun ctxls--buttonize-mentions (beg end)
  "Make the mentions of workspace files between BEG and END buttons.
RET on one visits its file (at its first line, if it names lines).
Overlays: markdown-mode's faces stay below them."
  (save-excursion
    (goto-char beg)
    (let (m)
      (while (setq m (ctxls--next-mention end))
        (let ((b (make-button (match-beginning 0) (match-end 0) 'type 'ctxls-mention
                              'ctxls-file (cdr m)
                              'ctxls-line (and (string-match ":\\([0-9]+\\)\\(?:-[0-9]+\\)?\\'" (car m))
                                               (not (string-suffix-p (car m) (cdr m)))
                                               (string-to-number (match-string 1 (car m))))
                              'help-echo (format "RET or mouse-1: visit %s" (car m)))))
          (overlay-put b 'evaporate t))))))

(defun ctxls--mention-visit (button)
  "Visit the file the mention BUTTON names, in another window."
  (let ((file (button-get button 'ctxls-file))
        (line (button-get button 'ctxls-line)))
    (if (not (file-exists-p file))
        (message "ctxls: %s does not exist (any more)" file)
      (pop-to-buffer (find-file-noselect file)
                     '((display-buffer-reuse-window display-buffer-use-some-window)
                       (inhibit-same-window . t)))
      (when line
        (widen)
        (goto-char (point-min))
        (forward-line (1- line))))))

(defun ctxls--question-minibuffer-setup ()
  "Make the `ctxls-ask' prompt complete @file mentions."
  (add-hook 'completion-at-point-functions #'ctxls-mention-completion-at-point nil t)
  (use-local-map (make-composed-keymap ctxls-question-input-map (current-local-map))))

(defun ctxls--read-question (prompt)
  "Read a question at the minibuffer with PROMPT.
M-p and M-n walk `ctxls-question-history'; @file mentions complete."
  (minibuffer-with-setup-hook #'ctxls--question-minibuffer-setup
    (read-string prompt nil 'ctxls-question-history)))

(provide 'ctxls-input)
;;; ctxls-input.el ends here
