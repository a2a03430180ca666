;;; drive.el --- drive emacs --batch through the user's steps  -*- lexical-binding: t; -*-

;; Loaded after the documented lsp-verify.el beside it.  Writes what the editor saw as
;; JSON for tests/editors/test_emacs.py to judge.  Every wait is bounded; any error is
;; recorded rather than raised.

(require 'json)
(require 'flymake)

(defvar drive-project (file-name-as-directory (getenv "LSP_VERIFY_PROJECT")))
(defvar drive-out (getenv "LSP_VERIFY_OUT"))
(defvar drive-scenario (getenv "LSP_VERIFY_SCENARIO"))
(defvar drive-wait (/ (string-to-number (or (getenv "LSP_VERIFY_WAIT_MS") "30000")) 1000.0))
(defvar drive-result nil "An alist, written as a JSON object at the end.")

(defun drive-note (key value)
  (setq drive-result (cons (cons key value) drive-result)))

(defun drive-wait-until (predicate)
  "Pump process output until PREDICATE is true or the wait runs out; its last value."
  (let ((deadline (+ (float-time) drive-wait))
        (value nil))
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(defun drive-verify-diagnostics ()
  "The verify diagnostics flymake holds for the current buffer, as alists."
  ;; Flymake asks its backends on its own timers, which never fire in --batch.
  (flymake-start)
  (accept-process-output nil 0.01)
  (let (found)
    (dolist (diag (flymake-diagnostics))
      (let ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data diag))))
        (when (equal (plist-get lsp :source) "verify")
          (push `((line . ,(1- (line-number-at-pos (flymake-diagnostic-beg diag))))
                  (message . ,(plist-get lsp :message))
                  (text . ,(flymake-diagnostic-text diag))
                  (source . ,(plist-get lsp :source)))
                found))))
    (or (nreverse found) [])))

(defun drive-run-now ()
  (let ((record 'waiting))
    (lsp-verify-execute "verify.runNow" (lambda (result) (setq record result)))
    (drive-wait-until (lambda () (not (eq record 'waiting))))
    (if (eq record 'waiting) nil record)))

(defun drive-open (file)
  (find-file (expand-file-name file drive-project))
  (unless (eglot-current-server)
    (call-interactively #'eglot))
  (drive-note (intern (concat "managed:" file))
              (if (drive-wait-until (lambda () (eglot-current-server))) t :json-false)))

(defun drive-command-messages (command)
  "Call COMMAND as its key binding would; what it told the user."
  (let ((messages nil))
    (cl-letf (((symbol-function 'message)
               (lambda (format &rest args) (push (apply #'format format args) messages))))
      (call-interactively command)
      (drive-wait-until (lambda () messages)))
    (or messages [])))

(defun drive-full ()
  (drive-open "tests/test_calc.py")
  (let ((test-buffer (current-buffer)))
    ;; A change the failing line does not see, so its diagnostic is not withdrawn as stale.
    (goto-char (point-max))
    (insert "\n# edited in Emacs\n")
    (save-buffer)
    (drive-wait-until (lambda () (>= (length (drive-verify-diagnostics)) 2)))
    (drive-note 'after_failing_save (drive-verify-diagnostics))
    (drive-note 'run_now (drive-run-now))
    (drive-note 'command_failed (drive-command-messages #'lsp-verify-run-now))
    ;; The fix: the demo's bug is the divisor of mean().
    (drive-open "calc.py")
    (goto-char (point-min))
    (search-forward "(len(values) + 1)")
    (replace-match "len(values)" t t)
    (save-buffer)
    (with-current-buffer test-buffer
      (drive-note 'cleared
                  (if (drive-wait-until (lambda () (equal (drive-verify-diagnostics) [])))
                      t :json-false))
      (drive-note 'after_fix (drive-verify-diagnostics))
      (drive-note 'command_passed (drive-command-messages #'lsp-verify-run-now)))))

(defun drive-declined ()
  (drive-open "tests/test_calc.py")
  (drive-note 'run_now (drive-run-now))
  (drive-note 'diagnostics (drive-verify-diagnostics)))

(defun drive-approve ()
  ;; The question in the minibuffer, answered on standard input ("Always for this plan").
  (setq lsp-verify-ask-in-batch t)
  (drive-open "tests/test_calc.py")
  (drive-note 'run_now (drive-run-now))
  ;; Approved and stored: the next run does not ask (standard input has no answer left).
  (drive-note 'run_again (drive-run-now)))

(condition-case err
    (progn
      (let ((settings (getenv "LSP_VERIFY_SETTINGS")))
        (when (and settings (not (string-empty-p settings)))
          (setq lsp-verify-settings (json-parse-string settings :object-type 'plist))))
      (cond ((equal drive-scenario "declined") (drive-declined))
            ((equal drive-scenario "approve") (drive-approve))
            (t (drive-full)))
      (drive-note 'ok t))
  (error (drive-note 'ok :json-false)
         (drive-note 'error (error-message-string err))))

;; Shut the servers down (and wait) so that none outlives Emacs.
(dolist (server (hash-table-values eglot--servers-by-project))
  (dolist (s server)
    (ignore-errors (eglot-shutdown s))))

(with-temp-file drive-out
  (insert (json-encode drive-result)))
(kill-emacs 0)
