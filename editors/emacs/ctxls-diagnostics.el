;;; ctxls-diagnostics.el --- Flymake's diagnostics, for the model's diagnostics tool  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: the errors and warnings Flymake
;; shows, in the buffers visiting files, as the daemon asks for them
;; (ctxls/diagnostics) for the model's diagnostics tool.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'ctxls-core)

(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function flymake-diagnostic-end "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-text "flymake" (diag))
(declare-function flymake-diagnostic-backend "flymake" (diag))
(declare-function flymake-diagnostic-data "flymake" (diag))
(declare-function flymake-running-backends "flymake" ())
(declare-function flymake-reporting-backends "flymake" ())

;;;; The editor's diagnostics

;; The model's diagnostics tool asks for the errors and warnings the editor
;; holds (ctxls/diagnostics, initializationOptions.diagnostics): Flymake's,
;; of every buffer visiting a file with `flymake-mode' on, whatever the
;; backend (eglot's language server, the byte compiler, checkdoc).  The
;; answer is sent from a timer, never from jsonrpc's process filter; with
;; waitMs, Flymake's diagnostics of the files asked about are looked at
;; every `ctxls--diagnostics-poll' seconds and the answer goes once they
;; differ from those of the request's arrival with every backend running
;; in those buffers reported (one backend's report alone, checkdoc's
;; before the byte compiler's, would answer with the other's old ones),
;; or when waitMs has passed.

(defconst ctxls--diagnostics-poll 0.2
  "Seconds between two looks at Flymake's diagnostics while waiting.")

(defun ctxls--diagnostic-severity (type)
  "LSP's severity of the Flymake diagnostic TYPE: 1 error ... 3 information."
  (pcase (or (get type 'flymake-category) type)
    ('flymake-error 1)
    ('flymake-warning 2)
    ('flymake-note 3)
    (_ (let ((level (get (or (get type 'flymake-category) type) 'severity)))
         (cond ((not (numberp level)) 1)
               ((>= level (warning-numeric-level :error)) 1)
               ((>= level (warning-numeric-level :warning)) 2)
               (t 3))))))

(defun ctxls--diagnostic (diag)
  "Flymake's DIAG of the current buffer as LSP's Diagnostic (a plist).
Positions in the negotiated encoding; `source' and `code' from the
language server's own diagnostic when eglot made it, else the backend."
  (let* ((data (flymake-diagnostic-data diag))
         (lsp (and (listp data) (cdr (assq 'eglot-lsp-diag data))))
         (source (or (and (listp lsp) (plist-get lsp :source))
                     (let ((b (flymake-diagnostic-backend diag)))
                       (and b (symbolp b) (symbol-name b)))))
         (code (and (listp lsp) (plist-get lsp :code)))
         (out (list :range (ctxls--range (flymake-diagnostic-beg diag) (flymake-diagnostic-end diag))
                    :severity (ctxls--diagnostic-severity (flymake-diagnostic-type diag))
                    :message (substring-no-properties (or (flymake-diagnostic-text diag) "")))))
    (when (stringp source)
      (setq out (plist-put out :source source)))
    (when (or (stringp code) (numberp code))
      (setq out (plist-put out :code code)))
    out))

(defun ctxls--buffer-diagnostics (buf)
  "BUF's Flymake diagnostics as a vector of LSP Diagnostics."
  (with-current-buffer buf
    (condition-case err
        (vconcat (mapcar #'ctxls--diagnostic (flymake-diagnostics)))
      (error (ctxls--log "diagnostics of %s: %s" (buffer-name buf) (error-message-string err))
             []))))

(defun ctxls--flymake-buffers ()
  "The live buffers visiting files with `flymake-mode' on."
  (cl-remove-if-not (lambda (b)
                      (and (buffer-local-value 'buffer-file-name b)
                           (buffer-local-value 'flymake-mode b)))
                    (and (boundp 'flymake-mode) (buffer-list))))

(defun ctxls--diagnostics-settled-p (uris)
  "Non-nil when every Flymake backend running in the buffers of URIS (a
list, or t for all) has reported since it started."
  (cl-every (lambda (b)
              (or (not (or (eq uris t)
                           (member (expand-file-name (buffer-local-value 'buffer-file-name b))
                                   (mapcar (lambda (u) (expand-file-name (ctxls--uri-file u))) uris))))
                  (with-current-buffer b
                    (cl-subsetp (flymake-running-backends) (flymake-reporting-backends)))))
            (ctxls--flymake-buffers)))

(defun ctxls--diagnostics-of (uris)
  "The answer to ctxls/diagnostics: the diagnostics of URIS (a list), or
with URIS t, of every buffer visiting a file that has some."
  (let ((bufs (ctxls--flymake-buffers)))
    (if (eq uris t)
        (vconcat (delq nil (mapcar (lambda (b)
                                     (let ((ds (ctxls--buffer-diagnostics b)))
                                       (when (> (length ds) 0)
                                         (list :uri (or (buffer-local-value 'ctxls--uri b)
                                                        (ctxls--path-uri (buffer-local-value 'buffer-file-name b)))
                                               :diagnostics ds))))
                                   bufs)))
      (vconcat (mapcar (lambda (uri)
                         (let* ((file (expand-file-name (ctxls--uri-file uri)))
                                (buf (cl-find file bufs :key (lambda (b) (expand-file-name (buffer-local-value 'buffer-file-name b)))
                                              :test #'string=)))
                           (list :uri uri :diagnostics (if buf (ctxls--buffer-diagnostics buf) []))))
                       uris)))))

(defun ctxls--diagnostics-when (params answer)
  "Call ANSWER with the answer to ctxls/diagnostics's PARAMS, from a timer.
With waitMs, once the diagnostics of the files asked about differ from
those now and their Flymake backends have all reported, or when waitMs
has passed."
  (let* ((uris (if (plist-member params :uris) (append (plist-get params :uris) nil) t))
         (wait (plist-get params :waitMs)))
    (if (not (and (numberp wait) (> wait 0)))
        (run-at-time 0 nil (lambda () (funcall answer (ctxls--diagnostics-of uris))))
      (let ((before (ctxls--diagnostics-of uris))
            (deadline (+ (float-time) (/ wait 1000.0)))
            timer)
        (setq timer
              (run-at-time ctxls--diagnostics-poll ctxls--diagnostics-poll
                           (lambda ()
                             (let ((now (ctxls--diagnostics-of uris)))
                               (when (or (and (not (equal now before)) (ctxls--diagnostics-settled-p uris))
                                         (>= (float-time) deadline))
                                 (cancel-timer timer)
                                 (funcall answer now))))))))))

(defun ctxls--diagnostics-request (conn id params)
  "Answer CONN's ctxls/diagnostics request ID with PARAMS, later."
  (ctxls--diagnostics-when params
                           (lambda (files)
                             (when (jsonrpc-running-p conn)
                               (jsonrpc-connection-send conn :id id :result files)))))

(provide 'ctxls-diagnostics)
;;; ctxls-diagnostics.el ends here
