;;; ctxls-setup.el --- Setting ctxls up: the provider's key, the first run  -*- lexical-binding: t; -*-

;; Keywords: tools, convenience
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Part of ctxls.el, which loads it: what a new user needs before the
;; first answer.
;;
;; The key.  `ctxls-api-key' nil (the default) takes the provider's key
;; from Emacs's environment (OPENAI_API_KEY, ANTHROPIC_API_KEY for
;; Anthropic's API, or the variable `ctxls-provider''s :apiKeyEnv names),
;; else from auth-source, as gptel does: the entry of `auth-sources'
;; (~/.authinfo.gpg, ~/.authinfo, ~/.netrc) for the provider's host, user
;; "apikey" (else any user):
;;
;;   machine api.openai.com login apikey password sk-...
;;
;; It may also be the key itself, or a function that returns it.  The key
;; goes to the daemon alone, in its process's environment as it starts,
;; under the variable the daemon reads it from: never into Emacs's own
;; environment (which every other process Emacs starts inherits), a
;; message, a log, or a file.
;;
;; The first run.  A question that meets no usable provider is answered,
;; in the chat, with what to set in Emacs's words (the key, or another
;; server's address and model), and once in the echo area.
;;
;; M-x ctxls-setup asks for the server, the key when none is found
;; (saved by auth-source, to the first of `auth-sources'), and
;; the model (completing from the server's own list), then saves
;; `ctxls-provider' with `customize-save-variable'.  Emacs users set
;; packages up in their init file, but a first provider is easier to
;; choose from the server's list than to type, and auth-source is where
;; Emacs keeps secrets: the command writes both where Emacs would.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'url-parse)
(require 'ctxls-protocol)

(declare-function auth-source-search "auth-source" (&rest spec))
(declare-function auth-source-forget "auth-source" (spec))
(declare-function ctxls--call "ctxls" (id arg))
(declare-function ctxls--say "ctxls-core" (fmt &rest args))
(declare-function ctxls--key-current "ctxls" (&optional force))
(declare-function ctxls--usable-p "ctxls" ())
(declare-function custom-file "cus-edit" (&optional no-error))
(defvar ctxls-provider)
(defvar ctxls--session-id)

(defcustom ctxls-api-key nil
  "The model provider's API key, which ctxls gives the daemon.
nil (the default): the environment variable the daemon reads the key
from, when Emacs has it (OPENAI_API_KEY; ANTHROPIC_API_KEY for
`ctxls-provider''s :api \"anthropic\"; or the one its :apiKeyEnv
names), else auth-source's entry for the provider's host (the host of
its :baseURL: api.openai.com by default, api.anthropic.com for
Anthropic), user \"apikey\" or else any user, as gptel looks keys up.
In ~/.authinfo.gpg (or any file of `auth-sources'):

  machine api.openai.com login apikey password sk-...

A string: the key itself (it is then in your init file).  A function
of no arguments: it returns the key (say, from a password manager).

The key is looked up when the daemon starts, and again after a
question was refused for want of a provider (the daemon then starts
again when a key is found).  It goes to the daemon alone, in its
process's environment under that variable; it is never put in Emacs's
environment, shown or logged, and the daemon keeps it out of the MCP
servers and commands it runs.  \\[ctxls-setup] can save it with
auth-source."
  :type '(choice (const :tag "Environment, else auth-source" nil)
                 (string :tag "The key")
                 (function :tag "A function returning the key"))
  :group 'ctxls)
(put 'ctxls-api-key 'risky-local-variable t)

(defvar ctxls--key-error nil
  "Why the last lookup of the key found none, in words without the key.")

(defvar ctxls--key-given nil
  "The key the running daemon was given by Emacs, hashed
\(`ctxls--key-fingerprint'), or nil.")

;;;; The provider as the daemon will read it

(defun ctxls--nonempty (s)
  "S when it is a string with something in it, else nil."
  (and (stringp s) (not (string-blank-p s)) s))

(defconst ctxls--hosted-hosts '("api.openai.com" "api.anthropic.com")
  "The hosts whose APIs need a key and have a default model.")

(defun ctxls--provider-facts (&optional provider)
  "What PROVIDER (default `ctxls-provider') comes to, as the daemon reads it.
A plist: :base (the base URL, or nil for the API's own), :host, :hosted
\(OpenAI's or Anthropic's API), :anthropic, :model, :var (the variable
the daemon reads the key from) and :vendor (\"OpenAI\", \"Anthropic\")."
  (let* ((p (or provider ctxls-provider))
         (api (plist-get p :api))
         (base (or (ctxls--nonempty (plist-get p :baseURL))
                   (and (not (equal api "anthropic")) (ctxls--nonempty (getenv "OPENAI_BASE_URL")))))
         (host (and base (url-host (url-generic-parse-url base))))
         (anthropic (or (equal api "anthropic") (and (null api) (equal host "api.anthropic.com")))))
    (list :base base
          :host (or (and host (downcase host)) (if anthropic "api.anthropic.com" "api.openai.com"))
          :hosted (or (null base) (and host (member (downcase host) ctxls--hosted-hosts) t))
          :anthropic anthropic
          :model (or (ctxls--nonempty (plist-get p :model)) (ctxls--nonempty (getenv "CTXLS_MODEL")))
          :var (or (ctxls--nonempty (plist-get p :apiKeyEnv))
                   (if anthropic "ANTHROPIC_API_KEY" "OPENAI_API_KEY"))
          :vendor (if anthropic "Anthropic" "OpenAI"))))

;;;; The key

(defun ctxls--auth-source-key (host)
  "The secret of auth-source's entry for HOST, or nil.
User \"apikey\" first, as gptel looks it up, then any user.  What
auth-source remembers of these searches is forgotten first: it
remembers finding nothing too, and the key is looked up again just
when the user may have added it."
  (require 'auth-source)
  (let* ((specs (list (list :host host :user "apikey" :require '(:secret) :max 1)
                      (list :host host :require '(:secret) :max 1)))
         (entry (cl-some (lambda (spec)
                           (auth-source-forget spec)
                           (car (apply #'auth-source-search spec)))
                         specs))
         (secret (plist-get entry :secret)))
    (when (functionp secret)
      (setq secret (funcall secret)))
    (and (ctxls--nonempty secret) (string-trim secret))))

(defun ctxls--find-key ()
  "The key to give the daemon: (VARIABLE . KEY), or nil.
nil too when Emacs's environment has the variable: the daemon inherits
it.  When `ctxls-api-key' fails, `ctxls--key-error' says so."
  (setq ctxls--key-error nil)
  (let* ((facts (ctxls--provider-facts))
         (var (plist-get facts :var)))
    (cond
     ((stringp ctxls-api-key)
      (if (ctxls--nonempty ctxls-api-key)
          (cons var (string-trim ctxls-api-key))
        (setq ctxls--key-error "`ctxls-api-key' is empty")
        nil))
     ((functionp ctxls-api-key)
      (condition-case err
          (let ((key (funcall ctxls-api-key)))
            (if (ctxls--nonempty key)
                (cons var (string-trim key))
              (setq ctxls--key-error "`ctxls-api-key' (a function) returned no key")
              nil))
        (error (setq ctxls--key-error (format "`ctxls-api-key' (a function) failed: %s"
                                              (error-message-string err)))
               nil)))
     (ctxls-api-key
      (setq ctxls--key-error "`ctxls-api-key' is neither a string nor a function")
      nil)
     ((ctxls--nonempty (getenv var)) nil)
     (t (let ((key (ctxls--auth-source-key (plist-get facts :host))))
          (and key (cons var key)))))))

(defun ctxls--key-fingerprint (key)
  "KEY, (VARIABLE . SECRET) or nil, with its secret hashed: to compare keys."
  (and key (cons (car key) (secure-hash 'sha256 (cdr key)))))

(defun ctxls--key-inputs ()
  "What the key's lookup depends on: when it changes, the key is looked up again."
  (let ((facts (ctxls--provider-facts)))
    (list ctxls-api-key (plist-get facts :var) (plist-get facts :host))))

;;;; No usable provider: what to say

(defun ctxls--authinfo-line (facts)
  "The line of ~/.authinfo.gpg that gives the key of FACTS' host."
  (format "machine %s login apikey password sk-…" (plist-get facts :host)))

(defun ctxls--key-words (facts lead)
  "How to give FACTS' key, after LEAD, as Markdown for the chat."
  (format "%s: a line in ~/.authinfo.gpg, as gptel reads it,\n\n    %s\n\nor `ctxls-api-key` (the key, or a function returning it), or `%s` in Emacs's environment."
          lead (ctxls--authinfo-line facts) (plist-get facts :var)))

(defconst ctxls--other-server-words
  "For another server (Ollama, llama.cpp, vLLM), its address and a model:\n\n    (setq ctxls-provider '(:baseURL \"http://127.0.0.1:11434/v1\" :model \"llama3.1\"))"
  "How to use another server, as Markdown for the chat.")

(defun ctxls--no-provider-words (message)
  "What to say when a question met no usable provider.
MESSAGE is the daemon's, kept where it knows more than Emacs: a key is
at hand, or the server is the user's own and has a model.  A plist:
:notice (one line for the echo area), :chat (the answer's error) and
:more (Markdown under it, or nil)."
  (let* ((facts (ctxls--provider-facts))
         (var (plist-get facts :var))
         (base (plist-get facts :base))
         (again "M-x ctxls-setup asks for them; M-p at the prompt brings the question back."))
    (cond
     (ctxls--key-error
      (list :notice (format "no key: %s" ctxls--key-error)
            :chat (format "error: no key: %s" ctxls--key-error)
            :more (concat (ctxls--key-words facts "Mend it, or give the key another way") "\n\n" again)))
     ((and (not (plist-get facts :hosted)) (not (plist-get facts :model))
           (string-match-p "\\`https?://" base))
      (let ((pick (substitute-command-keys "\\[ctxls-set-model]")))
        (list :notice (format "no model is set for the server at %s: %s picks one" base pick)
              :chat (format "error: no model is set for the server at %s" base)
              :more (format "%s picks one of its models for this session (C-u %s: new ones too), or M-x ctxls-setup saves one in `ctxls-provider`."
                            pick pick))))
     ((or (not (plist-get facts :hosted)) ctxls--key-given (ctxls--nonempty (getenv var)))
      (list :notice message :chat (concat "error: " message)))
     (t
      (list :notice "no model provider yet: M-x ctxls-setup, or see the chat"
            :chat "error: no model provider yet"
            :more (concat (ctxls--key-words facts (format "To use %s, give ctxls your key" (plist-get facts :vendor)))
                          "\n\n" ctxls--other-server-words "\n\n" again))))))

;;;; M-x ctxls-setup

(defconst ctxls--known-servers
  '(("https://api.openai.com/v1" . "OpenAI")
    ("https://api.anthropic.com" . "Anthropic")
    ("http://127.0.0.1:11434/v1" . "Ollama")
    ("http://127.0.0.1:8080/v1" . "llama.cpp's server")
    ("http://127.0.0.1:8000/v1" . "vLLM"))
  "Servers `ctxls-setup' offers, with their names.")

(defun ctxls--save-key (facts)
  "Read FACTS' key and save it with auth-source; non-nil when saved."
  (require 'auth-source)
  (let* ((host (plist-get facts :host))
         (base (plist-get facts :base))
         (port (or (and base (url-port-if-non-default (url-generic-parse-url base))) "https"))
         (key (read-passwd (format "Key for %s (saved with auth-source; RET: none): " host))))
    (when (ctxls--nonempty key)
      (let* ((entry (car (auth-source-search :host host :user "apikey" :port (format "%s" port)
                                             :secret (string-trim key) :create t :max 1)))
             (save (plist-get entry :save-function)))
        (when (functionp save)
          (funcall save))
        (clear-string key)
        t))))

;;;###autoload (autoload 'ctxls-setup "ctxls" nil t)
(defun ctxls-setup (server model)
  "Set ctxls's provider up: SERVER (a base URL) and MODEL, then save them.
Interactively, asks for the server (OpenAI's by default, or one of the
usual local ones, or any base URL); when no key is found for it (see
`ctxls-api-key'), for the key (RET: none, as a local server may need),
which auth-source saves to the first file of `auth-sources' (it asks
first);
then for the model, completing from the server's own list (the
daemon's ctxls.models.list).  `ctxls-provider' is then saved with
`customize-save-variable', for the next Emacs too.  The daemon gets
the new provider with the next request, and a key found now, by
starting again."
  (interactive
   (let* ((old ctxls-provider)
          (current (or (plist-get old :baseURL) (car (car ctxls--known-servers))))
          (server (string-trim
                   (completing-read (format-prompt "Base URL of the model server" current)
                                    (mapcar #'car ctxls--known-servers) nil nil nil nil current)))
          (facts (ctxls--provider-facts (list :baseURL server)))
          done)
     (unwind-protect
         (progn
           ;; The daemon lists the new server's models (it gets the
           ;; provider with the request); put back if the command stops.
           (setq ctxls-provider (list :baseURL server))
           ;; Asked of any server: OpenAI-compatible services other than
           ;; OpenAI's need one too (a local server may take none: RET).
           (when (and (null (ctxls--find-key))
                      (not (ctxls--nonempty (getenv (plist-get facts :var))))
                      (ctxls--save-key facts))
             (ctxls--say "the key for %s is saved" (plist-get facts :host)))
           ;; A key found now goes to the daemon, started again with it.
           (ctxls--key-current t)
           (let* ((r (condition-case err
                         (ctxls--call ctxls-protocol-command-models-list
                                      (and ctxls--session-id (list :sessionId ctxls--session-id)))
                       (user-error (ctxls--say "%s; type a model's name" (cadr err)) nil)))
                  (models (append (plist-get r :models) nil))
                  (default (or (ctxls--nonempty (plist-get r :default)) (car models)))
                  (model (string-trim
                          (completing-read (format-prompt "Model" default) models nil nil nil nil default))))
             (setq done t)
             (list server model)))
       (unless done
         (setq ctxls-provider old)))))
  (when (string-empty-p model)
    (user-error "ctxls: no model chosen"))
  (customize-save-variable 'ctxls-provider (list :baseURL server :model model))
  (let ((name (or (cdr (assoc server ctxls--known-servers)) server)))
    (if (custom-file t)
        (ctxls--say "%s's model %s, saved in `ctxls-provider' (%s) for the next Emacs too"
                    name model (abbreviate-file-name (custom-file)))
      ;; Emacs started with -q: customize would not save it.
      (ctxls--say "%s's model %s, set in `ctxls-provider' for this Emacs (not saved: no init file)"
                  name model))))

(provide 'ctxls-setup)
;;; ctxls-setup.el ends here
