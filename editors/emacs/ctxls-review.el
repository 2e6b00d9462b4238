;;; ctxls-review.el --- The model's edits: reviewed as a diff, applied, undone  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: an edit of the model's shown as a
;; diff in *ctxls review* for you to accept or reject (ctxls/reviewEdit),
;; applied to the buffer when accepted (workspace/applyEdit), never
;; saved; the review mode; undoing and redoing a turn's changes; and a
;; code block of the chat put into a file.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-sync)
(require 'ctxls-chat)
(require 'ctxls-questions)

(declare-function diff-beginning-of-hunk "diff-mode" (&optional try-harder))
(declare-function diff-end-of-hunk "diff-mode" (&optional style donttrustheader))
(declare-function ctxls--command "ctxls" (id arg on-success &optional on-error))

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

;;;###autoload (autoload 'ctxls-set-review-mode "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-undo "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-redo "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-apply-block "ctxls" nil t)
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

(provide 'ctxls-review)
;;; ctxls-review.el ends here
