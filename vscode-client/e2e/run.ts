/**
 * The extension in a real VS Code: code-server with a fresh profile and a fresh workspace,
 * driven through Debian's chromium by playwright-core, as a user would with keys and clicks.
 *
 * Environment (set by .ci/vscode.sh):
 *   CODE_SERVER_ENTRY  code-server's out/node/entry.js (run with the current node)
 *   E2E_PYTEST_VENV    a virtual environment with pytest: the project's .venv
 *   E2E_CHROMIUM       the chromium executable (default /usr/bin/chromium)
 *   E2E_VSIX           the package to install (default ./lsp-verify.vsix)
 * Screenshots of every step, and on failure the logs, land in test-artifacts/e2e/.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { type Browser, type Page, chromium } from 'playwright-core';

const CLIENT = path.resolve(__dirname, '..', '..');
const ARTIFACTS = path.join(CLIENT, 'test-artifacts', 'e2e');
const WAIT_MS = 30_000;

const FAILING_TEST = `import time

from calc import add


def test_add():
    # Slow enough that the status bar can be seen spinning.
    time.sleep(1.5)
    assert add(2, 2) == 5
`;
const ASSERT_LINE = 9;

function required(name: string): string {
    const value = process.env[name];
    if (!value) {
        throw new Error(`${name} is not set (run .ci/vscode.sh e2e)`);
    }
    return value;
}

async function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            server.close(() =>
                typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
            );
        });
    });
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = WAIT_MS): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
        try {
            const value = await probe();
            if (value !== undefined && value !== false) {
                return value;
            }
        } catch (error) {
            last = error;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
    );
}

class Harness {
    readonly root = mkdtempSync(path.join(tmpdir(), 'verify-e2e-'));
    readonly project = path.join(this.root, 'project');
    readonly userData = path.join(this.root, 'user-data');
    readonly extensions = path.join(this.root, 'extensions');
    private server: ChildProcess | undefined;
    private serverLog = '';
    private browser: Browser | undefined;
    private shots = 0;
    page!: Page;

    private env(): NodeJS.ProcessEnv {
        // Only system directories on PATH: the bundled server must need nothing but python3.
        return {
            PATH: '/usr/local/bin:/usr/bin:/bin',
            HOME: path.join(this.root, 'home'),
            XDG_CONFIG_HOME: path.join(this.root, 'xdg', 'config'),
            XDG_DATA_HOME: path.join(this.root, 'xdg', 'data'),
            XDG_CACHE_HOME: path.join(this.root, 'xdg', 'cache'),
            XDG_STATE_HOME: path.join(this.root, 'xdg', 'state'),
            LANG: 'C.UTF-8',
        };
    }

    makeProject(venv: string): void {
        mkdirSync(this.project, { recursive: true });
        writeFileSync(path.join(this.project, 'pytest.ini'), '[pytest]\n');
        writeFileSync(path.join(this.project, 'calc.py'), 'def add(a, b):\n    return a + b\n');
        writeFileSync(path.join(this.project, 'test_calc.py'), FAILING_TEST);
        // The detector prefers the folder's own .venv/bin/pytest.
        symlinkSync(venv, path.join(this.project, '.venv'));
        const user = path.join(this.userData, 'User');
        mkdirSync(user, { recursive: true });
        writeFileSync(
            path.join(user, 'settings.json'),
            JSON.stringify(
                {
                    'security.workspace.trust.enabled': true,
                    'security.workspace.trust.startupPrompt': 'never',
                    'workbench.startupEditor': 'none',
                    'workbench.tips.enabled': false,
                    'workbench.enableExperiments': false,
                    'telemetry.telemetryLevel': 'off',
                    'update.mode': 'none',
                    'extensions.autoCheckUpdates': false,
                    'extensions.autoUpdate': false,
                    'chat.disableAIFeatures': true,
                    'editor.autoClosingBrackets': 'never',
                    'editor.quickSuggestions': { other: false, comments: false, strings: false },
                    'files.autoSave': 'off',
                },
                null,
                2,
            ),
        );
        for (const dir of ['home', 'xdg/config', 'xdg/data', 'xdg/cache', 'xdg/state']) {
            mkdirSync(path.join(this.root, dir), { recursive: true });
        }
    }

    installExtension(entry: string, vsix: string): void {
        execFileSync(
            process.execPath,
            [entry, '--user-data-dir', this.userData, '--extensions-dir', this.extensions, '--install-extension', vsix],
            { env: this.env(), stdio: 'pipe', timeout: 120_000 },
        );
    }

    async startCodeServer(entry: string): Promise<string> {
        const port = await freePort();
        const args = [
            entry,
            '--bind-addr',
            `127.0.0.1:${port}`,
            '--auth',
            'none',
            '--disable-telemetry',
            '--disable-update-check',
            '--disable-getting-started-override',
            '--reconnection-grace-time',
            '5',
            '--user-data-dir',
            this.userData,
            '--extensions-dir',
            this.extensions,
            this.project,
        ];
        // detached: its own process group, so the cleanup reaches the extension host and the
        // language server it started.
        const server = spawn(process.execPath, args, {
            env: this.env(),
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        this.server = server;
        server.stdout?.on('data', (data) => (this.serverLog += String(data)));
        server.stderr?.on('data', (data) => (this.serverLog += String(data)));
        const url = `http://127.0.0.1:${port}/`;
        await until('code-server to listen', async () => {
            if (server.exitCode !== null) {
                throw new Error(`code-server exited ${server.exitCode}:\n${this.serverLog}`);
            }
            const response = await fetch(`${url}healthz`).catch(() => undefined);
            return response?.ok;
        });
        return `${url}?folder=${encodeURIComponent(this.project)}`;
    }

    async openBrowser(url: string, executablePath: string): Promise<void> {
        this.browser = await chromium.launch({
            executablePath,
            headless: true,
            args: [
                '--no-sandbox',
                '--disable-gpu',
                '--disable-quic',
                '--no-first-run',
                '--disable-background-networking',
                '--disable-component-update',
                '--disable-sync',
            ],
        });
        this.page = await this.browser.newPage({ viewport: { width: 1600, height: 1000 } });
        await this.page.goto(url);
        await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    }

    async shot(name: string): Promise<void> {
        this.shots += 1;
        const file = path.join(ARTIFACTS, `${String(this.shots).padStart(2, '0')}-${name}.png`);
        await this.page.screenshot({ path: file }).catch(() => undefined);
    }

    async step(name: string, body: () => Promise<void>): Promise<void> {
        const started = Date.now();
        try {
            await body();
        } catch (error) {
            await this.shot(`FAILED-${name}`);
            const html = await this.page.content().catch(() => '');
            writeFileSync(path.join(ARTIFACTS, `FAILED-${name}.html`), html);
            throw new Error(`step "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
        }
        await this.shot(name);
        console.log(`  ok  ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }

    // ----- what a user sees and does -----

    statusItem() {
        return this.page.locator('.statusbar-item[id$="verify.status"]');
    }

    async statusText(): Promise<string> {
        return ((await this.statusItem().innerText({ timeout: 1000 })) ?? '').replace(/\s+/g, ' ').trim();
    }

    async waitForStatus(pattern: RegExp, timeoutMs = WAIT_MS): Promise<string> {
        return until(
            `the status bar to match ${pattern}`,
            async () => {
                const text = await this.statusText();
                return pattern.test(text) ? text : undefined;
            },
            timeoutMs,
        );
    }

    /**
     * Types into a quick input (F1, Ctrl+P, Ctrl+G) and accepts the row matching `row`.
     * Enter goes to the focused row only once the list has settled on the match: pressing it
     * while results still arrive picks whatever was first.
     */
    private async quickInput(key: string, text: string, row: string | undefined): Promise<void> {
        await this.page.keyboard.press(key);
        const widget = this.page.locator('.quick-input-widget');
        const input = widget.locator('input');
        await input.waitFor();
        await input.fill(text);
        if (row !== undefined) {
            await widget.locator('.monaco-list-row.focused', { hasText: row }).first().waitFor({ timeout: 10_000 });
        }
        await this.page.keyboard.press('Enter');
        await widget.waitFor({ state: 'hidden', timeout: 10_000 });
    }

    private async attempts(what: string, times: number, attempt: () => Promise<void>): Promise<void> {
        for (let i = 1; ; i += 1) {
            try {
                await attempt();
                return;
            } catch (error) {
                if (i >= times) {
                    throw error;
                }
                console.log(
                    `      retrying ${what}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
                );
                await this.page.keyboard.press('Escape');
            }
        }
    }

    async runCommand(title: string): Promise<void> {
        await this.attempts(`"${title}"`, 3, () => this.quickInput('F1', `>${title}`, title));
    }

    async openFile(name: string): Promise<void> {
        await this.attempts(`opening ${name}`, 3, async () => {
            await this.quickInput('Control+P', name, name);
            await this.page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 5_000 });
        });
        await this.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    }

    async activeEditorText(): Promise<string> {
        const text = await this.page
            .locator('.editor-group-container.active .monaco-editor .view-lines')
            .first()
            .innerText();
        // Monaco renders spaces as no-break spaces.
        return text.replace(/\u00a0/g, ' ');
    }

    async goToLine(line: number): Promise<void> {
        await this.quickInput('Control+G', `:${line}`, undefined);
    }

    async save(): Promise<void> {
        await this.page.keyboard.press('Control+S');
        await until('the editor to be saved', async () => (await this.page.locator('.tab.active.dirty').count()) === 0);
    }

    /** Ctrl+. on the cursor's line, once the menu lists `title`; the menu's locator. */
    async quickFixes(title: string) {
        const menu = this.page.locator('.action-widget');
        await this.attempts(`the quick fixes listing "${title}"`, 5, async () => {
            await this.page.keyboard.press('Control+.');
            await menu.locator('[role="option"]', { hasText: title }).first().waitFor({ timeout: 5_000 });
        });
        return menu;
    }

    async problems(): Promise<string[]> {
        const panel = this.page.locator('.markers-panel');
        if (!(await panel.isVisible())) {
            await this.page.keyboard.press('Control+Shift+M');
            await panel.waitFor();
        }
        return panel.locator('.monaco-list-row').allInnerTexts();
    }

    async notification(text: string) {
        const toast = this.page.locator('.notification-toast', { hasText: text }).first();
        await toast.waitFor({ timeout: WAIT_MS });
        return toast;
    }

    /**
     * Verify: Show Last Run, then the text of the run view (a Markdown preview) once it
     * matches every pattern and, when `after` is given, shows a run that started later.
     * The preview may show the previous run for a moment while it refreshes.
     */
    async lastRunView(expected: RegExp[], after?: string): Promise<{ text: string; started: string }> {
        await this.runCommand('Verify: Show Last Run');
        await this.page.locator('.tab.active', { hasText: /Preview last-run-/ }).waitFor();
        let text = '';
        try {
            return await until('the run view to be shown', async () => {
                text = (await this.runView().locator('body').innerText()).replace(/\u00a0/g, ' ');
                const started = /started:\s*(\S+)/.exec(text)?.[1];
                const fresh = started !== undefined && started !== after;
                return fresh && expected.every((pattern) => pattern.test(text)) ? { text, started } : undefined;
            });
        } catch {
            throw new Error(`the run view does not match ${expected.join(', ')}:\n${text}`);
        }
    }

    /** The document inside the active webview (a Markdown preview). */
    runView() {
        return this.page.frameLocator('iframe.webview.ready').first().frameLocator('#active-frame');
    }

    /**
     * The whole text of the output channel shown in the panel. Monaco renders only the lines in
     * view, so the channel is read a page at a time from its top.
     */
    async outputChannelText(): Promise<string> {
        const view = this.page.locator('.part.panel .monaco-editor .view-lines').first();
        await view.click();
        await this.page.keyboard.press('Control+Home');
        const seen: string[] = [];
        for (let page = 0; page < 50; page += 1) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            const lines = (await view.locator('.view-line').allInnerTexts()).map((line) =>
                line.replace(/\u00a0/g, ' '),
            );
            const fresh = lines.filter((line) => !seen.includes(line));
            if (page > 0 && fresh.length === 0) {
                break;
            }
            seen.push(...fresh);
            await this.page.keyboard.press('PageDown');
        }
        return seen.join('\n');
    }

    // ----- cleanup -----

    async close(failed: boolean): Promise<void> {
        await this.browser?.close().catch(() => undefined);
        const server = this.server;
        if (server?.pid !== undefined && server.exitCode === null) {
            const exited = new Promise((resolve) => server.once('exit', resolve));
            process.kill(-server.pid, 'SIGTERM');
            const timer = setTimeout(() => {
                try {
                    process.kill(-server.pid!, 'SIGKILL');
                } catch {
                    // already gone
                }
            }, 5000);
            await exited;
            clearTimeout(timer);
            try {
                // Whatever is left of the group (the extension host, the language server).
                process.kill(-server.pid, 'SIGKILL');
            } catch {
                // all gone
            }
        }
        if (failed) {
            writeFileSync(path.join(ARTIFACTS, 'code-server.log'), this.serverLog);
            const logs = path.join(this.userData, 'logs');
            if (existsSync(logs)) {
                cpSync(logs, path.join(ARTIFACTS, 'vscode-logs'), { recursive: true });
            }
        }
        rmSync(this.root, { recursive: true, force: true });
    }
}

async function main(): Promise<void> {
    const entry = required('CODE_SERVER_ENTRY');
    const venv = required('E2E_PYTEST_VENV');
    const chromiumPath = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
    const vsix = path.resolve(process.env.E2E_VSIX || path.join(CLIENT, 'lsp-verify.vsix'));
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });

    const started = Date.now();
    const h = new Harness();
    let failed = true;
    /** When the run that "Run verify again" started began, as the run view says. */
    let ranAgain: string | undefined;
    try {
        h.makeProject(venv);
        h.installExtension(entry, vsix);
        const url = await h.startCodeServer(entry);
        await h.openBrowser(url, chromiumPath);
        console.log(`  code-server up, workbench loaded (${((Date.now() - started) / 1000).toFixed(1)} s)`);

        await h.step('restricted-save-runs-nothing', async () => {
            // code-server opens a new folder in Restricted Mode.
            await h.page
                .locator('.statusbar-item', { hasText: 'Restricted Mode' })
                .first()
                .waitFor({ timeout: WAIT_MS });
            await h.waitForStatus(/verify: Restricted Mode/);
            await h.openFile('test_calc.py');
            await h.page.keyboard.press('Control+End');
            await h.page.keyboard.type('# saved in Restricted Mode');
            await h.save();
            await h.lastRunView([/verify: Declined/, /exit status:\s*none/, /trigger:\s*save/]);
            const status = await h.waitForStatus(/verify: Restricted Mode/);
            const tooltip = (await h.statusItem().getAttribute('aria-label')) ?? '';
            const problems = await h.problems();
            if (problems.some((row) => row.includes('verify'))) {
                throw new Error(`a verify problem appeared in Restricted Mode: ${problems.join(' | ')}`);
            }
            if ((await h.page.locator('.notification-toast', { hasText: 'verify wants to run' }).count()) > 0) {
                throw new Error('the server asked to run a repository command in Restricted Mode');
            }
            console.log(`      status "${status}" (${tooltip})`);
        });

        await h.step('trust-failing-save-approve', async () => {
            await h.runCommand('Workspaces: Manage Workspace Trust');
            const trust = h.page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
            await trust.waitFor();
            await trust.click();
            await until(
                'the workspace to be trusted',
                async () => (await h.page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).count()) === 0,
            );
            await h.shot('trusted');
            // The trust editor opens as a modal over the others.
            await h.page.locator('[aria-label^="Close Modal Editor"]').first().click();
            await h.page.locator('.workspace-trust-editor').waitFor({ state: 'hidden' });
            await h.openFile('test_calc.py');
            await h.page.keyboard.press('Control+End');
            await h.page.keyboard.type(' and then trusted');
            await h.save();
            const toast = await h.notification('verify wants to run');
            await h.shot('approval-question');
            await toast.locator('.monaco-button', { hasText: 'Always for this plan' }).click();
            await h.waitForStatus(/verify: failed \(\d+\)/);
            const problems = await until('a verify problem in the Problems panel', async () => {
                const rows = await h.problems();
                return rows.some((row) => row.includes('verify failed (exit 1)')) ? rows : undefined;
            });
            console.log(`      problems: ${problems.map((row) => row.replace(/\s+/g, ' ').slice(0, 60)).join(' | ')}`);
        });

        await h.step('light-bulb-show-output-and-run-again', async () => {
            await h.openFile('test_calc.py');
            await h.goToLine(ASSERT_LINE);
            // The quick-fix menu on the failing line offers verify's own actions.
            const menu = await h.quickFixes("Show the run's output");
            await h.shot('light-bulb');
            await menu.locator('[role="option"]', { hasText: "Show the run's output" }).first().click();
            const output = h.page.locator('.part.panel .monaco-editor .view-lines').first();
            await until('the run output in the Verify Runs channel', async () => {
                const shown = (await output.innerText()).replace(/\u00a0/g, ' ');
                // The channel shows its last lines: the run's end, after pytest's own summary.
                return /1 failed/.test(shown) && /── failed \(exit 1\) in/.test(shown) ? shown : undefined;
            });
            await h.shot('run-output');
            await h.openFile('test_calc.py');
            await h.goToLine(ASSERT_LINE);
            const again = await h.quickFixes('Run verify again');
            await again.locator('[role="option"]', { hasText: 'Run verify again' }).first().click();
            await h.waitForStatus(/verify: running/, 10_000);
            await h.waitForStatus(/verify: failed \(\d+\)/);
            ranAgain = (await h.lastRunView([/verify: Failed/, /trigger:\s*runNow/])).started;
        });

        await h.step('run-now-and-show-last-run', async () => {
            await h.openFile('test_calc.py');
            await h.problems(); // the panel shows Problems, not the run's output
            await h.runCommand('Verify: Run Now');
            await h.waitForStatus(/verify: running/, 10_000);
            // A click on the spinning status shows the run's output as it comes (the test
            // sleeps 1.5 s, so the run is still going).
            const output = h.page.locator('.part.panel .monaco-editor .view-lines').first();
            if (await output.isVisible()) {
                throw new Error('an output channel shows before the click');
            }
            await h.statusItem().click();
            await until('the running command in the Verify Runs channel', async () => {
                if (!(await output.isVisible())) {
                    return undefined;
                }
                const shown = (await output.innerText()).replace(/\u00a0/g, ' ');
                // The newest header is this run's, with no outcome after it yet.
                const header = shown.lastIndexOf('── verify: ');
                return header >= 0 &&
                    /runNow/.test(shown.slice(header)) &&
                    !/── (passed|failed)/.test(shown.slice(header))
                    ? shown
                    : undefined;
            });
            await h.shot('status-click-run-output');
            await h.waitForStatus(/verify: failed \(\d+\)/);
            const view = await h.lastRunView(
                [
                    /verify: Failed/,
                    /trigger:\s*runNow/,
                    /exit status:\s*1\b/,
                    new RegExp(`test_calc\\.py:${ASSERT_LINE}:\\d+`),
                    /"outcome": "failed"/,
                ],
                ranAgain,
            );
            await h.shot('run-view');
            // The problem's link opens the file at the failing line, wherever the cursor was.
            await h.openFile('test_calc.py');
            await h.goToLine(1);
            await h.runCommand('Verify: Show Last Run');
            await h.page.locator('.tab.active', { hasText: /Preview last-run-/ }).waitFor();
            // One view per folder: the previews of older runs were closed.
            const views = await h.page.locator('.tab', { hasText: /Preview last-run-/ }).count();
            if (views !== 1) {
                throw new Error(`${views} run views are open, not 1`);
            }
            await h
                .runView()
                .locator('a', { hasText: `test_calc.py:${ASSERT_LINE}:` })
                .first()
                .click();
            await h.page.locator('.tab.active', { hasText: 'test_calc.py' }).waitFor({ timeout: WAIT_MS });
            const position = await until('the cursor on the failing line', async () => {
                const item = await h.page
                    .locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ })
                    .first()
                    .innerText();
                return item.includes(`Ln ${ASSERT_LINE},`) ? item : undefined;
            });
            console.log(`      run view started ${view.started}; its link opened test_calc.py at ${position.trim()}`);
        });

        await h.step('fix-save-passes', async () => {
            await h.openFile('test_calc.py');
            await h.goToLine(ASSERT_LINE);
            await h.page.keyboard.press('End');
            await h.page.keyboard.press('Backspace');
            await h.page.keyboard.type('4');
            await h.save();
            await h.waitForStatus(/verify: passed/);
            const rows = await until('the verify problems to clear', async () => {
                const current = await h.problems();
                return current.some((row) => row.includes('verify')) ? undefined : current;
            });
            console.log(`      problems after the fix: ${rows.length}`);
        });

        await h.step('output-channel-has-the-server-log', async () => {
            await h.runCommand('Verify: Show Output');
            const text = await until('the run log in the Verify output', async () => {
                const shown = await h.outputChannelText();
                return /verify passed \(exit 0\)/.test(shown) ? shown : undefined;
            });
            for (const expected of [/verify declined/, /verify failed \(exit 1\)/]) {
                if (!expected.test(text)) {
                    throw new Error(`the Verify output lacks ${expected}:\n${text}`);
                }
            }
        });
        failed = false;
    } finally {
        await h.close(failed);
        console.log(
            `e2e ${failed ? 'FAILED' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${ARTIFACTS}`,
        );
    }
}

main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
});
