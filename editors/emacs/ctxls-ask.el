;;; ctxls-ask.el --- Asking: a chat turn from the question to its answer  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: `ctxls-ask' and the turn it starts,
;; its answer streamed into the chat ($/progress) and its end; the images
;; attached to a question; the *ctxls question* buffer for a longer one
;; (`ctxls-compose'); asking the last question again or changed; and
;; cancelling a turn.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-input)
(require 'ctxls-setup)
(require 'ctxls-chat)
(require 'ctxls-tools)
(require 'ctxls-review)
(require 'ctxls-sessions)
(require 'ctxls-context)

(declare-function ctxls--call "ctxls" (id arg))
(declare-function ctxls--key-current "ctxls" (&optional force))
(declare-function ctxls--live-p "ctxls" ())
(declare-function ctxls--program "ctxls" ())
(declare-function ctxls--request "ctxls" (method params on-success &optional on-error timeout))
(declare-function ctxls--usable-p "ctxls" ())

;;;; Chat turns

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

;;;###autoload (autoload 'ctxls-ask "ctxls" nil t)
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
  :type 'boolean
  :group 'ctxls)

(defcustom ctxls-image-viewer nil
  "How an image of the chat opens (its button, \"[image: …]\").
nil: in Emacs (`image-mode') when it can show images, else (a terminal)
with the desktop's opener, xdg-open or open, else its file name is said
and copied.  A string names a program run with the file's name; a
function is called with it."
  :type '(choice (const :tag "Emacs, or the desktop's opener" nil)
                 (string :tag "Program")
                 (function :tag "Function"))
  :group 'ctxls)

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

;;;###autoload (autoload 'ctxls-attach-image "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-compose "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-regenerate "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-edit-question "ctxls" nil t)
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

;;;###autoload (autoload 'ctxls-cancel "ctxls" nil t)
(defun ctxls-cancel ()
  "Stop the running chat turn; the partial answer is kept."
  (interactive)
  (if (not (and ctxls--turn (ctxls--live-p)))
      (ctxls--say "no turn is running")
    (jsonrpc-notify ctxls--connection 'window/workDoneProgress/cancel
                    (list :token (plist-get ctxls--turn :token)))))

(provide 'ctxls-ask)
;;; ctxls-ask.el ends here
