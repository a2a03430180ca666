import { describe, expect, it } from 'vitest';

import { serverSettings, verifySettings } from '../src/settings';
import { mock } from './mocks/vscode';
import { workspace } from './mocks/vscode';

describe('verifySettings', () => {
    it('takes a workspace folder value over the workspace and the user value', () => {
        mock.set('verify.tailLines', 10);
        mock.set('verify.tailLines', 20, 'workspaceValue');
        mock.setForFolder('file:///work/a', 'verify.tailLines', 30);
        expect(verifySettings(workspace.getConfiguration('verify', Uri('file:///work/a')))).toEqual({ tailLines: 30 });
        expect(verifySettings(workspace.getConfiguration('verify'))).toEqual({ tailLines: 20 });
    });

    it('passes a wrong value through for the server to report', () => {
        mock.set('verify.timeoutMs', 'soon');
        expect(verifySettings(workspace.getConfiguration('verify'))).toEqual({ timeoutMs: 'soon' });
    });

    it('keeps an explicit null command (the user unsetting it)', () => {
        mock.set('verify.command', null);
        expect(verifySettings(workspace.getConfiguration('verify'))).toEqual({ command: null });
    });
});

describe('serverSettings', () => {
    it('trims, and treats non-strings as unset', () => {
        mock.set('verify.server.path', '  /usr/bin/lsp-verify ');
        mock.set('verify.server.interpreter', 42);
        expect(serverSettings(workspace.getConfiguration('verify'))).toEqual({
            path: '/usr/bin/lsp-verify',
            interpreter: '',
        });
    });
});

function Uri(value: string) {
    return { toString: () => value } as never;
}
