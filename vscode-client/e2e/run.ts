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
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

import { ARTIFACTS, CLIENT, Harness, WAIT_MS, until } from './harness';

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
        h.makeProject(venv, FAILING_TEST);
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
