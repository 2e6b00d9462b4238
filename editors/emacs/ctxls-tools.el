;;; ctxls-tools.el --- The model's tool calls in the chat: commands, plans, searches  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: each tool call of the model's as a
;; line of the chat buffer that changes as the call goes (ctxls/toolCall),
;; with what the model got back under it, hidden until asked for; a
;; command's output (run_command) as it comes; the plan; searches (grep,
;; find_files, list_directory) summed up, their results buttons; and the
;; calls of a session read from the store.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-chat)

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
  "The file and line of a search's result in the chat buffer."
  :group 'ctxls)

(defface ctxls-search-context '((t :inherit shadow))
  "A context line of a search's results (not a match)."
  :group 'ctxls)

(defface ctxls-search-unsaved '((t :inherit shadow :slant italic))
  "The mark of a search's match found only in a buffer's unsaved text."
  :group 'ctxls)

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

(provide 'ctxls-tools)
;;; ctxls-tools.el ends here
