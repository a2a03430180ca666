;;; lsp-verify.el --- lsp-verify through eglot  -*- lexical-binding: t; -*-

;; Emacs 28 with eglot 1.9 or newer (Emacs 29+ has eglot built in).  Load it from your
;; init file, e.g. (load "~/.emacs.d/lsp-verify.el"), then M-x eglot in a project.
;; Eglot gives a buffer one server: the modes in `lsp-verify-modes' get lsp-verify
;; *instead of* their usual server (see docs/editors.md for the way around that).

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)

(defvar lsp-verify-program '("lsp-verify")
  "How to start the server: the program (on PATH, or a full path) and its arguments.")

(defvar lsp-verify-modes '(python-mode)
  "Major modes whose buffers eglot manages with lsp-verify.")

(defvar lsp-verify-settings nil
  "The `verify' settings as a plist, e.g. (:command \"make check\" :timeoutMs 120000).
nil lets the project decide (.lsp-verify.toml, its script, the detector), and you are
asked before a repository's command first runs.  Per project, set
`eglot-workspace-configuration' to (:verify (:command \"...\")) in .dir-locals.el.")

(defclass lsp-verify-server (eglot-lsp-server) ()
  :documentation "lsp-verify, so that its requests can be answered on their own terms.")

(cl-defmethod eglot-initialization-options ((_server lsp-verify-server))
  (list :verify (or lsp-verify-settings (make-hash-table))))

(defvar lsp-verify-ask-in-batch nil
  "Non-nil: in `emacs --batch', ask the approval question on standard input too.")

;; The server asks before a repository's command first runs, in eglot's prompt in the
;; minibuffer.  In `emacs --batch' there is no one to answer it: say no, unless told to
;; read the answer from standard input (`lsp-verify-ask-in-batch').
(cl-defmethod eglot-handle-request
  ((_server lsp-verify-server) (_method (eql window/showMessageRequest)) &rest _params)
  (if (and noninteractive (not lsp-verify-ask-in-batch)) nil (cl-call-next-method)))

(add-to-list 'eglot-server-programs
             `(,lsp-verify-modes . (lsp-verify-server . ,lsp-verify-program)))

(defun lsp-verify--uri (file)
  (if (fboundp 'eglot-path-to-uri)
      (eglot-path-to-uri file)
    (eglot--path-to-uri file)))

(defun lsp-verify-execute (command &optional callback)
  "Send COMMAND (\"verify.runNow\", ...) for the current file; CALLBACK gets the result.
Asynchronous, because a run takes as long as the project's tests do."
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'lsp-verify-server)
      (user-error "lsp-verify is not managing this buffer"))
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command command :arguments (vector (lsp-verify--uri buffer-file-name)))
     :success-fn (lambda (result) (when callback (funcall callback result)))
     :error-fn (lambda (err) (message "verify: %s" (plist-get err :message)))
     :timeout nil)))

(defun lsp-verify--describe (record)
  "One line for RECORD; Flymake and `lsp-verify-last-run' hold the rest."
  (if (not record)
      "verify: no run (no workspace folder for this buffer)"
    (let ((outcome (plist-get record :outcome))
          (tail (plist-get record :tail)))
      (format "verify %s (exit %s): %s%s"
              outcome
              (or (plist-get record :exitCode) "null")
              (or (plist-get record :command) "no command")
              (cond ((equal outcome "passed") "")
                    ((member outcome '("failed" "timed-out"))
                     (if (> (length tail) 0) (concat " | " (elt tail (1- (length tail)))) ""))
                    (t (concat " | " (plist-get record :reason))))))))

(defun lsp-verify-run-now ()
  "Run the project's verification command now and report the outcome."
  (interactive)
  (lsp-verify-execute "verify.runNow"
                      (lambda (record) (message "%s" (lsp-verify--describe record)))))

(defun lsp-verify-cancel ()
  "Cancel the run in flight."
  (interactive)
  (lsp-verify-execute "verify.cancel"
                      (lambda (cancelled) (message "verify: cancelled %d run(s)"
                                                   (length cancelled)))))

(defun lsp-verify-last-run ()
  "Show the last run's outcome."
  (interactive)
  (lsp-verify-execute "verify.showLastRun"
                      (lambda (record) (message "%s" (if record (lsp-verify--describe record)
                                                       "verify: nothing has run yet")))))

(defun lsp-verify-explain ()
  "Show which command would run, and why."
  (interactive)
  (lsp-verify-execute "verify.explain"
                      (lambda (plan) (message "verify would run: %s\n%s"
                                              (plist-get plan :command)
                                              (plist-get plan :reason)))))

(defun lsp-verify-approve ()
  "Approve this project's command, so that it runs on save without asking."
  (interactive)
  (lsp-verify-execute "verify.approve"
                      (lambda (answer) (message "verify: %S" answer))))

(define-key eglot-mode-map (kbd "C-c v r") #'lsp-verify-run-now)

(provide 'lsp-verify)
;;; lsp-verify.el ends here
