/** Status bar states from `verify/status` notifications. */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { type FolderStatus, parseStatus, pickFolder, statusView } from '../src/status';
import { activated, lastClient, mock, shutdown } from './helpers';
import { Uri } from './mocks/vscode';

vi.mock('../src/launch', async (importOriginal) => {
    const original = await importOriginal<typeof import('../src/launch')>();
    return { ...original, launchProblem: vi.fn(async () => undefined) };
});

const FOLDER = 'file:///work/project';
let context: Awaited<ReturnType<typeof activated>> | undefined;

afterEach(async () => {
    if (context) {
        await shutdown(context);
        context = undefined;
    }
});

function status(overrides: Partial<FolderStatus> = {}): FolderStatus {
    return {
        folder: FOLDER,
        state: 'idle',
        lastOutcome: null,
        command: 'pytest -x -q',
        needsApproval: false,
        ...overrides,
    };
}

async function notified(...statuses: FolderStatus[]) {
    context ??= await activated();
    for (const s of statuses) {
        lastClient().notify('verify/status', s);
    }
    return mock.statusItem;
}

describe('the status bar item, driven by verify/status', () => {
    it('spins while a run is in flight', async () => {
        const item = await notified(status({ state: 'running', lastOutcome: 'failed' }));
        expect(item.text).toBe('$(sync~spin) verify: running');
        expect(item.visible).toBe(true);
        // While it runs, a click shows its output as it comes; afterwards, the run's view.
        expect(item.tooltip).toContain('Click to watch its output');
        expect(item.command).toMatchObject({ command: 'verify.showRunOutput' });
        const done = await notified(status({ lastOutcome: 'failed' }));
        expect(done.command).toMatchObject({ command: 'verify.showLastRun' });
    });

    it('says when a run is queued behind the running one', async () => {
        const item = await notified(status({ state: 'queued' }));
        expect(item.text).toBe('$(sync~spin) verify: running (+1 queued)');
    });

    it('says it waits for an answer while the approval question is open', async () => {
        const item = await notified(status({ state: 'waiting' }));
        expect(item.text).toBe('$(question) verify: waiting for approval');
        expect(item.tooltip).toContain('Waiting for your answer');
    });

    it('shows passed', async () => {
        const item = await notified(status({ state: 'running' }), status({ lastOutcome: 'passed' }));
        expect(item.text).toBe('$(check) verify: passed');
        expect(item.backgroundColor).toBeUndefined();
    });

    it('shows failed with the number of verify diagnostics in the folder', async () => {
        mock.state.diagnostics = [
            [
                Uri.file('/work/project/tests/test_calc.py'),
                [
                    { source: 'verify', message: 'a' },
                    { source: 'pyright', message: 'b' },
                ],
            ],
            [Uri.file('/work/project/calc.py'), [{ source: 'verify', message: 'c' }]],
            [Uri.file('/work/elsewhere/x.py'), [{ source: 'verify', message: 'd' }]],
        ];
        const item = await notified(status({ lastOutcome: 'failed' }));
        expect(item.text).toBe('$(error) verify: failed (2)');
        expect(item.backgroundColor).toEqual({ id: 'statusBarItem.errorBackground' });
    });

    it('recounts when the diagnostics change', async () => {
        const item = await notified(status({ lastOutcome: 'failed' }));
        expect(item.text).toBe('$(error) verify: failed');
        mock.state.diagnostics = [[Uri.file('/work/project/a.py'), [{ source: 'verify', message: 'x' }]]];
        mock.state.events.diagnostics.fire({});
        expect(item.text).toBe('$(error) verify: failed (1)');
    });

    it('shows a timed-out run as a failure', async () => {
        const item = await notified(status({ lastOutcome: 'timed-out' }));
        expect(item.text).toBe('$(error) verify: timed out');
    });

    it('asks for approval when a repository command was declined', async () => {
        const item = await notified(status({ lastOutcome: 'declined', needsApproval: true }));
        expect(item.text).toBe('$(shield) verify: needs approval');
        expect(String(item.tooltip)).toContain('Verify: Approve Plan');
    });

    it('says when there is no plan', async () => {
        const item = await notified(status({ lastOutcome: 'no-plan', command: null }));
        expect(item.text).toBe('$(circle-slash) verify: no plan');
        expect(String(item.tooltip)).toContain('Explain Plan');
    });

    it('never looks like success before a run', async () => {
        const item = await notified(status());
        expect(item.text).toBe('$(circle-outline) verify: not run yet');
    });

    it('ignores a payload that is not a status', async () => {
        const item = await notified(status({ lastOutcome: 'passed' }));
        lastClient().notify('verify/status', { folder: 42, state: 'exploded' });
        expect(item.text).toBe('$(check) verify: passed');
    });
});

describe('restricted mode', () => {
    it('says why a declined save ran nothing', async () => {
        mock.state.trusted = false;
        const item = await notified(status({ lastOutcome: 'declined', needsApproval: true }));
        expect(item.text).toBe('$(shield) verify: Restricted Mode');
        expect(String(item.tooltip)).toMatch(/^Nothing ran: This workspace is in Restricted Mode/);
    });

    it('still shows a run the user asked for', async () => {
        mock.state.trusted = false;
        const item = await notified(status({ state: 'running' }));
        expect(item.text).toBe('$(sync~spin) verify: running');
    });

    it('maps the same record to needs approval once the workspace is trusted', () => {
        const declined = status({ lastOutcome: 'declined', needsApproval: true });
        const base = { server: 'running' as const, status: declined, problems: 0 };
        expect(statusView({ ...base, workspaceTrusted: false }).text).toBe('$(shield) verify: Restricted Mode');
        expect(statusView({ ...base, workspaceTrusted: true }).text).toBe('$(shield) verify: needs approval');
    });
});

describe('which folder the item speaks for', () => {
    const a = status({ folder: 'file:///work/a', lastOutcome: 'passed' });
    const b = status({ folder: 'file:///work/b', lastOutcome: 'failed' });
    const nested = status({ folder: 'file:///work/b/inner', lastOutcome: 'no-plan' });
    const all = new Map([a, b, nested].map((s) => [s.folder, s]));

    it('is the innermost folder holding the active document', () => {
        expect(pickFolder(all, 'file:///work/b/inner/x.py', 'file:///work/a')).toBe(nested);
        expect(pickFolder(all, 'file:///work/b/x.py', 'file:///work/a')).toBe(b);
    });

    it('is not a folder that merely shares a name prefix', () => {
        expect(pickFolder(all, 'file:///work/abc/x.py', 'file:///work/b')).toBe(b);
    });

    it('is the folder that reported last when no document is active', () => {
        expect(pickFolder(all, undefined, 'file:///work/a')).toBe(a);
    });

    it('follows the active editor', async () => {
        context = await activated();
        lastClient().notify('verify/status', a);
        lastClient().notify('verify/status', b);
        expect(mock.statusItem.text).toBe('$(error) verify: failed');
        mock.state.activeUri = Uri.file('/work/a/main.py');
        mock.state.events.activeEditor.fire({});
        expect(mock.statusItem.text).toBe('$(check) verify: passed');
    });
});

describe('parseStatus', () => {
    it('accepts the server payload and drops unknown outcomes to null', () => {
        expect(parseStatus({ folder: FOLDER, state: 'idle', lastOutcome: 'exploded', command: 1 })).toEqual({
            folder: FOLDER,
            state: 'idle',
            lastOutcome: null,
            command: null,
            needsApproval: false,
        });
        expect(parseStatus(null)).toBeUndefined();
        expect(parseStatus({ folder: FOLDER, state: 'busy' })).toBeUndefined();
    });
});
