;;; ctxls-sync.el --- Your buffers' text as the daemon keeps it, and the view  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: the file buffers `ctxls-mode' syncs
;; with the daemon (didOpen, didChange with a range or the whole text,
;; didSave, didClose), the workspace folders they bring, the options the
;; daemon reads while running (workspace/didChangeConfiguration), and
;; the view (file, point, region) sent when Emacs is idle.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'ctxls-protocol)
(require 'ctxls-core)

(declare-function ctxls--folder "ctxls" (dir))
(defvar ctxls-mode)

;;;; Text synchronisation

(defun ctxls--track (&optional buffer)
  "Start syncing BUFFER (default current) if it visits a local file."
  (with-current-buffer (or buffer (current-buffer))
    (when (and ctxls-mode (ctxls--syncable-p))
      (unless (memq (current-buffer) ctxls--buffers)
        (push (current-buffer) ctxls--buffers)
        (add-hook 'before-change-functions #'ctxls--before-change nil t)
        (add-hook 'after-change-functions #'ctxls--after-change nil t)
        (add-hook 'kill-buffer-hook #'ctxls--on-kill nil t)
        (add-hook 'after-revert-hook #'ctxls--resync nil t))
      (ctxls--add-folder-for buffer-file-name)
      (when (eq ctxls--state 'ready)
        (ctxls--did-open)))))

(defun ctxls--untrack (&optional buffer)
  "Stop syncing BUFFER (default current), closing it on the daemon."
  (with-current-buffer (or buffer (current-buffer))
    (ctxls--did-close)
    (setq ctxls--buffers (delq (current-buffer) ctxls--buffers))
    (remove-hook 'before-change-functions #'ctxls--before-change t)
    (remove-hook 'after-change-functions #'ctxls--after-change t)
    (remove-hook 'kill-buffer-hook #'ctxls--on-kill t)
    (remove-hook 'after-revert-hook #'ctxls--resync t)))

(dolist (fn '(ctxls--before-change ctxls--after-change ctxls--on-kill ctxls--resync))
  ;; A major mode change keeps the buffer synced.
  (put fn 'permanent-local-hook t))

(defun ctxls--add-folder-for (file)
  "Tell the daemon about FILE's project when it is a new workspace folder."
  (when-let ((root (ctxls--project-root (file-name-directory file))))
    (unless (cl-some (lambda (f) (or (string= f root) (file-in-directory-p root f)))
                     ctxls--folders)
      (setq ctxls--folders (append ctxls--folders (list root)))
      (when (eq ctxls--state 'ready)
        (jsonrpc-notify ctxls--connection 'workspace/didChangeWorkspaceFolders
                        (list :event (list :added (vector (ctxls--folder root))
                                           :removed [])))))))

(defun ctxls--did-open ()
  "Send didOpen for the current buffer."
  (when (and (eq ctxls--state 'ready) (ctxls--syncable-p) (not ctxls--uri))
    (condition-case err
        (let ((uri (ctxls--path-uri buffer-file-name)))
          (ctxls--scan-cr)
          (setq ctxls--version 1 ctxls--change nil)
          (jsonrpc-notify ctxls--connection 'textDocument/didOpen
                          (list :textDocument (list :uri uri :languageId (ctxls--language-id)
                                                    :version ctxls--version
                                                    :text (ctxls--buffer-text))))
          (setq ctxls--uri uri ctxls--tick (buffer-chars-modified-tick)))
      (error (ctxls--log "ctxls: didOpen %s failed: %S" buffer-file-name err)))))

(defun ctxls--did-close ()
  "Send didClose for the current buffer if it is open on the daemon."
  (when ctxls--uri
    (when (eq ctxls--state 'ready)
      (ignore-errors
        (jsonrpc-notify ctxls--connection 'textDocument/didClose
                        (list :textDocument (list :uri ctxls--uri)))))
    (setq ctxls--uri nil ctxls--change nil)))

(defun ctxls--send-change (change)
  "Send one didChange with CHANGE, a TextDocumentContentChangeEvent."
  (setq ctxls--version (1+ ctxls--version))
  (jsonrpc-notify ctxls--connection 'textDocument/didChange
                  (list :textDocument (list :uri ctxls--uri :version ctxls--version)
                        :contentChanges (vector change)))
  (setq ctxls--tick (buffer-chars-modified-tick)))

(defun ctxls--send-full ()
  "Send the whole text of the current buffer as one change."
  (ctxls--scan-cr)
  (ctxls--send-change (list :text (ctxls--buffer-text))))

(defun ctxls--before-change (beg end)
  "Record the LSP range of BEG..END before it changes."
  (when (and ctxls--uri (eq ctxls--state 'ready))
    (condition-case err
        (setq ctxls--change
              (if (or ctxls--has-cr (not (eql ctxls--tick (buffer-chars-modified-tick))))
                  'full             ; a lone CR, or a change made silently
                (list beg end (ctxls--position beg) (ctxls--position end))))
      (error (setq ctxls--change 'full)
             (ctxls--log "ctxls: before-change: %S" err)))))

(defun ctxls--after-change (beg end old-len)
  "Send the change of BEG..END (OLD-LEN characters before) to the daemon."
  (when (and ctxls--uri (eq ctxls--state 'ready))
    (condition-case err
        (let ((rec ctxls--change))
          (setq ctxls--change nil)
          (pcase rec
            ;; The after-change region lies inside the one recorded before
            ;; the change (capitalize-word, fill-paragraph and friends
            ;; announce more than they change): send the recorded range
            ;; with its new text.
            (`(,b ,e ,start ,stop)
             (if (and (<= b beg) (<= (+ beg old-len) e) (not ctxls--has-cr)
                      (not (string-search "\r" (buffer-substring-no-properties beg end))))
                 (ctxls--send-change
                  (list :range (list :start start :end stop)
                        :text (save-restriction
                                (widen)
                                (buffer-substring-no-properties b (+ e (- end beg old-len))))))
               (ctxls--send-full)))
            (_ (ctxls--send-full))))
      (error (ctxls--log "ctxls: after-change: %S" err)))))

(defun ctxls--resync ()
  "Send the whole text again (after a revert)."
  (when (and ctxls--uri (eq ctxls--state 'ready))
    (ctxls--send-full)))

(defun ctxls--sync-settings ()
  "Give the daemon the options it reads while running, if changed since.
`ctxls-provider' set (setq, customize) after the daemon started, say
after a first question answered \"no usable model provider\", is used
by the next request, with no restart; so is
`ctxls-project-instructions' (workspace/didChangeConfiguration)."
  (when (eq ctxls--state 'ready)
    (let* ((provider (and ctxls-provider (not (equal ctxls-provider ctxls--provider-sent))))
           (on (and ctxls-project-instructions t))
           (instructions (not (eq on ctxls--instructions-sent))))
      (when (or provider instructions)
        (when provider
          (setq ctxls--provider-sent (copy-tree ctxls-provider)))
        (setq ctxls--instructions-sent on)
        (jsonrpc-notify ctxls--connection 'workspace/didChangeConfiguration
                        (list :settings
                              (list :ctxls (ctxls--plist
                                            (ctxls--key ctxls-protocol-setting-provider) (and provider ctxls-provider)
                                            (ctxls--key ctxls-protocol-setting-project-instructions)
                                            (and instructions (if on t :json-false))))))))))

(defun ctxls--flush ()
  "Resend buffers whose text changed without the change hooks seeing it.
A changed `ctxls-provider' or `ctxls-project-instructions' goes first
\(`ctxls--sync-settings')."
  (ctxls--sync-settings)
  (when (eq ctxls--state 'ready)
    (dolist (buf ctxls--buffers)
      (when (buffer-live-p buf)
        (with-current-buffer buf
          (cond
           ((and (ctxls--syncable-p) (not ctxls--uri)) (ctxls--did-open))
           ((and ctxls--uri (not (eql ctxls--tick (buffer-chars-modified-tick))))
            (ctxls--send-full))))))))

(defun ctxls--on-kill ()
  "Close the buffer on the daemon as it is killed."
  (ctxls--untrack))

(defun ctxls--after-save ()
  "Send didSave; a buffer saved under a new name is reopened under it."
  (when ctxls-mode
    (cond
     ((not (memq (current-buffer) ctxls--buffers)) (ctxls--track))
     ((and ctxls--uri buffer-file-name
           (not (string= ctxls--uri (ctxls--path-uri buffer-file-name))))
      (ctxls--did-close)
      (ctxls--did-open))
     ((and ctxls--uri (eq ctxls--state 'ready))
      (jsonrpc-notify ctxls--connection 'textDocument/didSave
                      (list :textDocument (list :uri ctxls--uri)))))))

;;;; The view

(defun ctxls--view ()
  "The didChangeView params of the selected window, or nil."
  (let* ((win (selected-window))
         (buf (window-buffer win)))
    (with-current-buffer buf
      (when ctxls--uri
        (let ((sel (if (use-region-p)
                       (ctxls--range (region-beginning) (region-end))
                     (ctxls--range (window-point win) (window-point win)))))
          (list :textDocument (list :uri ctxls--uri)
                :selection sel
                :visibleRange (ctxls--range (window-start win)
                                            (min (point-max) (window-end win)))))))))

(defun ctxls--send-view ()
  "Send ctxls/didChangeView when the view changed since the last one."
  (when (and (eq ctxls--state 'ready) (not (minibufferp (window-buffer (selected-window)))))
    (condition-case err
        (let ((view (ctxls--view)))
          (when (and view (not (equal view ctxls--last-view)))
            (setq ctxls--last-view view)
            (jsonrpc-notify ctxls--connection
                            (intern ctxls-protocol-client-notification-did-change-view)
                            view)))
      (error (ctxls--log "ctxls: view: %S" err)))))

(provide 'ctxls-sync)
;;; ctxls-sync.el ends here
