;;; ctxls-context.el --- What goes with a question: the context, the session's files  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: the session's relevant context (the
;; files added and removed, what the daemon says of it as it changes),
;; the *ctxls context* buffer with the project's instructions files, the
;; prompt preview, and the files the model writes in the session's
;; folder.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'ctxls-protocol)
(require 'ctxls-core)
(require 'ctxls-chat)
(require 'ctxls-input)

(declare-function ctxls--call "ctxls" (id arg))
(declare-function ctxls--command "ctxls" (id arg on-success &optional on-error))

;;;; Context

(defun ctxls--file-buffer ()
  "Return the current buffer if it visits a file, else the last such buffer."
  (if buffer-file-name
      (current-buffer)
    (or (cl-find-if (lambda (b) (buffer-local-value 'buffer-file-name b)) (buffer-list))
        (user-error "ctxls: no file buffer to use; visit a file first"))))

;;;###autoload (autoload 'ctxls-add-file "ctxls" nil t)
(defun ctxls-add-file (&optional file)
  "Add FILE to the session's relevant files.
Interactively, the current file; from the chat buffer (or any buffer
that visits no file), the file buffer used last."
  (interactive)
  (let ((path (expand-file-name (or file (buffer-local-value 'buffer-file-name (ctxls--file-buffer))))))
    (ctxls--command ctxls-protocol-command-context-set
                    (list :setName "files" :items (vector path) :mode "merge")
                    (lambda (r)
                      (ctxls--say "added %s to the context (%d files)"
                                  (file-name-nondirectory path) (length (plist-get r :items)))))))

;;;###autoload (autoload 'ctxls-remove-file "ctxls" nil t)
(defun ctxls-remove-file (file)
  "Remove FILE from the session's relevant files.
Interactively, pick it from the set; the current file (or the file
buffer used last) is the default."
  (interactive
   (let* ((files (append (plist-get (plist-get (ctxls--call ctxls-protocol-command-context-get
                                                              (list :setName "files"))
                                               :context)
                                    :files)
                         nil))
          (here (let ((b (ignore-errors (ctxls--file-buffer))))
                  (and b (expand-file-name (buffer-local-value 'buffer-file-name b))))))
     (list (and files (completing-read "Remove from context: " files nil t nil nil
                                       (if (member here files) here (car files)))))))
  (if (null file)
      (ctxls--say "the context has no files")
    (let ((path (expand-file-name file)))
      (ctxls--command ctxls-protocol-command-context-get (list :setName "files")
                      (lambda (r)
                        (let ((files (append (plist-get (plist-get r :context) :files) nil)))
                          (if (not (member path files))
                              (ctxls--say "%s is not in the context" path)
                            (ctxls--command ctxls-protocol-command-context-set
                                            (list :setName "files" :items (vconcat (delete path files))
                                                  :mode "replace")
                                            (lambda (_)
                                              (ctxls--say "removed %s from the context (%d left)"
                                                          (file-name-nondirectory path)
                                                          (1- (length files))))))))))))

(defvar-local ctxls--context-sets nil
  "The context sets the *ctxls context* buffer shows (a plist).")

(defvar ctxls-context-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "d") #'ctxls-context-remove-at-point)
    (define-key map (kbd "g") #'ctxls-show-context)
    map)
  "Keys of the *ctxls context* buffer.")

(define-derived-mode ctxls-context-mode special-mode "ctxls-context"
  "The session's relevant context.  RET opens a file, d removes it.
The project's instructions files the model is given are named on the
line \"instructions:\" (`ctxls-project-instructions'); RET visits one.")

(defun ctxls-context-remove-at-point ()
  "Remove the file on this line from the context."
  (interactive)
  (let ((file (get-text-property (line-beginning-position) 'ctxls-file)))
    (if file (ctxls-remove-file file) (ctxls--say "no file on this line"))))

(defun ctxls--workspace-relative (path)
  "PATH relative to the workspace folder that holds it (the deepest), else
as `ctxls--file-short' names it."
  (let ((root (car (sort (cl-remove-if-not (lambda (r) (file-in-directory-p path r))
                                           (copy-sequence ctxls--folders))
                         (lambda (a b) (> (length a) (length b)))))))
    (if root (file-relative-name path root) (ctxls--file-short path))))

(defun ctxls--insert-instructions (instructions &optional label)
  "Insert a line naming the project's INSTRUCTIONS files, if any.
LABEL (default \"instructions: \") starts it; then each file (a plist
of the daemon's), relative to its workspace folder, is a button that
visits it, marked (unsaved) when the model was given the editor's
unsaved text and (cut) when not all of it."
  (when instructions
    (insert (or label "instructions: "))
    (cl-loop for file in (append instructions nil)
             for sep = "" then ", "
             do (let ((path (plist-get file :path))
                      ;; "cut: the first … bytes of its … shown; …" or "not shown: …"
                      (cut (plist-get file :cut)))
                  (insert sep)
                  (insert-text-button (ctxls--workspace-relative path)
                                      'action (lambda (_) (find-file-other-window path))
                                      'follow-link t
                                      'help-echo (concat "RET visits " (abbreviate-file-name path)
                                                         (if (stringp cut) (concat "\n" cut) "")))
                  (when (eq (plist-get file :unsaved) t)
                    (insert (propertize " (unsaved)" 'face 'ctxls-note)))
                  (when (and (stringp cut) (not (string-empty-p cut)))
                    (insert (propertize " (cut)" 'face 'ctxls-note 'help-echo cut)))))
    (insert "\n")))

(defun ctxls--show-instructions (instructions)
  "Show INSTRUCTIONS (the daemon's list) as the project's instructions files.
The *ctxls context* buffer names them, if shown."
  (setq ctxls--instructions (append instructions nil))
  (when-let ((buf (get-buffer "*ctxls context*")))
    (ctxls--render-context buf (buffer-local-value 'ctxls--context-sets buf))))

(defun ctxls--render-context (buf ctx)
  "Render the context sets CTX (a plist) into BUF.
The project's instructions files (`ctxls--instructions') follow the
session's title."
  (with-current-buffer buf
    (setq ctxls--context-sets ctx)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert "Session: " (or ctxls--session-title "none") "\n\n")
      (when ctxls--instructions
        (ctxls--insert-instructions ctxls--instructions)
        (insert "\n"))
      (if (null ctx)
          (insert "No context yet: M-x ctxls-add-file adds the current file.\n")
        (cl-loop for (key items) on ctx by #'cddr do
                 (insert (ctxls--set-label key) ":\n")
                 (mapc (lambda (item)
                         (let ((start (point)))
                           (insert "  ")
                           (if (eq key :files)
                               (insert-text-button item 'action (lambda (_) (find-file-other-window item))
                                                   'help-echo "RET opens, d removes")
                             (insert item))
                           (insert "\n")
                           (when (eq key :files)
                             (put-text-property start (point) 'ctxls-file item))))
                       items)
                 (insert "\n")))
      (goto-char (point-min)))))

;;;###autoload (autoload 'ctxls-show-context "ctxls" nil t)
(defun ctxls-show-context ()
  "Show the session's relevant context in a read-only buffer."
  (interactive)
  (ctxls--command ctxls-protocol-command-context-get nil
                  (lambda (r)
                    (let ((buf (get-buffer-create "*ctxls context*")))
                      (with-current-buffer buf
                        (unless (derived-mode-p 'ctxls-context-mode) (ctxls-context-mode)))
                      (setq ctxls--instructions (append (plist-get r :instructions) nil))
                      (ctxls--render-context buf (plist-get r :context))
                      (display-buffer buf)))))

;;;###autoload (autoload 'ctxls-preview "ctxls" nil t)
(defun ctxls-preview (message)
  "Show the exact model input a turn asking MESSAGE would send."
  (interactive (list (ctxls--read-question "Preview the prompt for: ")))
  (ctxls--command ctxls-protocol-command-chat-preview (list :message message)
                  (lambda (r)
                    (let ((buf (get-buffer-create "*ctxls preview*"))
                          (tokens (plist-get r :tokens)))
                      (with-current-buffer buf
                        (let ((inhibit-read-only t))
                          (erase-buffer)
                          (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
                          (insert (format "# Prompt preview (%s)\n\n" (plist-get r :model))
                                  (format "Tokens: %d total (system %d, files %d, history %d); budget %d; %d earlier messages dropped.\n\n"
                                          (or (plist-get tokens :total) 0) (or (plist-get tokens :system) 0)
                                          (or (plist-get tokens :files) 0) (or (plist-get tokens :history) 0)
                                          (or (plist-get r :budget) 0) (or (plist-get r :dropped) 0)))
                          ;; Their text ends the system message below.
                          (when (plist-get r :instructions)
                            (ctxls--insert-instructions (plist-get r :instructions) "Project instructions: ")
                            (insert "\n"))
                          (mapc (lambda (m)
                                  (insert "## " (plist-get m :role) "\n\n" (or (plist-get m :content) "") "\n\n"))
                                (plist-get r :messages))
                          (insert "## Tools\n\n")
                          (mapc (lambda (tl) (insert "- " (plist-get tl :name) ": "
                                                     (ctxls--one-line (plist-get tl :description) 100) "\n"))
                                (plist-get r :tools))
                          (goto-char (point-min)))
                        (setq buffer-read-only t))
                      (display-buffer buf)))))

;;;;; The context as the daemon says it changes

(defun ctxls--set-label (key)
  "How the context set KEY (:files, :applet, ...) is named to the user."
  (if (eq key :applet) "editor view" (substring (symbol-name key) 1)))

(defun ctxls--told-context (ctx)
  "The part of the context sets CTX a change of which is said.
The editor view (the set the daemon captures whenever point rests) is
left out: it changes all the time, by itself."
  (cl-loop for (key items) on ctx by #'cddr
           unless (or (eq key :applet) (zerop (length items)))
           collect (cons key (append items nil))))

(defun ctxls--on-context-changed (params)
  "Say in one line what the context is now (PARAMS of contextChanged).
Only a resume, or a change the user or the model made (to the files
or another set), is said: the editor view's capture changes the
context each time you rest, silently."
  (let* ((ctx (plist-get params :context))
         (told (ctxls--told-context ctx))
         (files (alist-get :files told))
         (others (assq-delete-all :files (copy-alist told)))
         (missing (append (plist-get params :missing) nil))
         (resume (equal (plist-get params :reason) "resume"))
         (changed (or resume (not (equal told ctxls--files)))))
    (when (or resume
              (if (eq ctxls--files 'unknown) told (not (equal told ctxls--files))))
      (ctxls--say "%s: %s%s%s" (if resume "resumed context" "context")
                  (if files
                      (mapconcat #'file-name-nondirectory files ", ")
                    "no files")
                  (mapconcat (lambda (o) (format ", %s (%d)" (ctxls--set-label (car o)) (length (cdr o))))
                             others "")
                  (if missing (format " (%d missing)" (length missing)) "")))
    (setq ctxls--files told)
    (when-let ((buf (get-buffer "*ctxls context*")))
      (ctxls--render-context buf ctx)
      ;; Other files may bring other folders' AGENTS.md.
      (when changed
        (ctxls--command ctxls-protocol-command-context-get nil
                        (lambda (r) (ctxls--show-instructions (plist-get r :instructions)))
                        #'ignore)))))

;;;; The session's folder

(defun ctxls--on-files-changed (params)
  "Show a session file written or removed (PARAMS of sessionFilesChanged)."
  (let* ((subdir (plist-get params :subdir))
         (name (plist-get params :name))
         (rel (concat subdir "/" name))
         (removed (eq (plist-get params :removed) t)))
    (ctxls--say "%s %s%s" (if removed "removed" "wrote") rel
                (if removed "" (format " (%s bytes)" (plist-get params :size))))
    (when (and (equal (plist-get params :by) "model") (not removed)
               (or (equal (plist-get params :sessionId) ctxls--session-id)
                   (and ctxls--turn (null ctxls--session-id))))
      (let ((session (plist-get params :sessionId)))
        (ctxls--chat-insert
         (lambda ()
           (insert "\n")
           (insert-text-button (format "[wrote %s]" rel)
                               'action (lambda (_) (ctxls--open-session-file session rel))
                               'help-echo (format "Open %s from the session folder" rel))
           (insert "\n")))))))

(defun ctxls--open-session-file (session rel &optional open tries)
  "Open REL, a file in SESSION's folder, asked for each time.
The folder moves when the session's title changes (a folder kept from
before opened an empty file of the old name), also between the answer
and the opening: a file not found there is asked for again, up to TRIES
times (default 3), before saying it is gone.  OPEN, a function of the
file's name, opens it (default `find-file-other-window')."
  (setq open (or open #'find-file-other-window)
        tries (or tries 3))
  (ctxls--command ctxls-protocol-command-session-show (list :sessionId session)
                  (lambda (r)
                    (let* ((folder (plist-get (plist-get r :session) :folder))
                           (file (and folder (expand-file-name rel folder))))
                      (when (equal session ctxls--session-id)
                        (setq ctxls--session-folder folder))
                      (cond
                       ((and file (file-exists-p file)) (funcall open file))
                       ((> tries 1)
                        (run-at-time 0.2 nil #'ctxls--open-session-file session rel open (1- tries)))
                       (t (ctxls--say "%s is no longer in the session's folder" rel)))))))

(provide 'ctxls-context)
;;; ctxls-context.el ends here
