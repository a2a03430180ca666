/**
 * What the code-server end-to-end test (run.ts) does as a user would: code-server with a
 * fresh profile and a fresh workspace, driven through Debian's chromium by playwright-core
 * with keys and clicks, and what it reads back from the page.
 * Screenshots of every step, and on failure the logs, land in test-artifacts/e2e/.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { type Browser, type Page, chromium } from 'playwright-core';

export const CLIENT = path.resolve(__dirname, '..', '..');
export const ARTIFACTS = path.join(CLIENT, 'test-artifacts', 'e2e');
export const WAIT_MS = 30_000;

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

export async function until<T>(
    what: string,
    probe: () => Promise<T | undefined | false>,
    timeoutMs = WAIT_MS,
): Promise<T> {
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

export class Harness {
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

    makeProject(venv: string, failingTest: string): void {
        mkdirSync(this.project, { recursive: true });
        writeFileSync(path.join(this.project, 'pytest.ini'), '[pytest]\n');
        writeFileSync(path.join(this.project, 'calc.py'), 'def add(a, b):\n    return a + b\n');
        writeFileSync(path.join(this.project, 'test_calc.py'), failingTest);
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
