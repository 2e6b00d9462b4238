;;; ctxls-input.el --- Typing a question to ctxls: history  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; URL: https://github.com/ctxls/ctxls
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
;; typed.  With `savehist-mode' on, the list is kept from one Emacs to
;; the next.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

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

(defun ctxls--read-question (prompt)
  "Read a question at the minibuffer with PROMPT.
M-p and M-n walk `ctxls-question-history'."
  (read-string prompt nil 'ctxls-question-history))

(provide 'ctxls-input)
;;; ctxls-input.el ends here
