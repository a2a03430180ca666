/** Which process starts as the server, and the check that a Python can run it. */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Launch, type RunFile, launchProblem, resolveLaunch } from '../src/launch';

const python = (command = 'python3', origin: Launch['origin'] = 'default'): Launch => ({
    command,
    args: ['-I', '/ext/bundled/serve.py'],
    origin,
});

function answering(stdout: string): RunFile {
    return async () => ({ stdout, stderr: '' });
}

function failing(error: Record<string, unknown>): RunFile {
    return async () => {
        throw Object.assign(new Error('failed'), error);
    };
}

describe('resolveLaunch', () => {
    it('expands ~ in the configured paths', () => {
        const launch = resolveLaunch({ path: '', interpreter: '~/py/bin/python' }, '/ext');
        expect(launch.command).not.toContain('~');
        expect(launch.command.endsWith('/py/bin/python')).toBe(true);
        expect(launch.args).toEqual(['-I', '/ext/bundled/serve.py']);
    });
});

describe('launchProblem for a Python', () => {
    it('accepts 3.9 and newer', async () => {
        expect(await launchProblem(python(), answering('3.9.18\n'))).toBeUndefined();
        expect(await launchProblem(python(), answering('3.13.0\n'))).toBeUndefined();
    });

    it('names the version and what to set when it is too old', async () => {
        const problem = await launchProblem(python(), answering('3.8.18\n'));
        expect(problem).toContain('is Python 3.8, and the server needs 3.9 or newer');
        expect(problem).toContain('verify.server.interpreter');
        expect(problem).toContain('verify.server.path');
    });

    it('says that python3 was not found on PATH', async () => {
        const problem = await launchProblem(python(), failing({ code: 'ENOENT' }));
        expect(problem).toMatch(
            /^verify cannot start its server: python3 \(from PATH\) was not found\. Set verify\.server\.interpreter/,
        );
    });

    it('names the configured interpreter', async () => {
        const problem = await launchProblem(
            python('/opt/py/bin/python', 'verify.server.interpreter'),
            failing({ code: 'EACCES' }),
        );
        expect(problem).toContain('"/opt/py/bin/python" (verify.server.interpreter) is not executable');
    });

    it('reports what a broken interpreter printed', async () => {
        const problem = await launchProblem(python(), failing({ code: 2, stderr: 'Unknown option: -I\nusage: ...' }));
        expect(problem).toContain('failed to run (Unknown option: -I)');
    });

    it('runs a real interpreter and a real missing one', async () => {
        expect(await launchProblem(python('python3'))).toBeUndefined();
        expect(await launchProblem(python('/nonexistent/python3', 'verify.server.interpreter'))).toContain(
            'was not found',
        );
    });
});

describe('launchProblem for verify.server.path', () => {
    let dir = '';
    beforeAll(async () => {
        dir = await mkdtemp(path.join(tmpdir(), 'verify-launch-'));
        await writeFile(path.join(dir, 'lsp-verify'), '#!/bin/sh\n');
        await chmod(path.join(dir, 'lsp-verify'), 0o755);
        await writeFile(path.join(dir, 'not-executable'), '');
    });
    afterAll(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    const server = (command: string): Launch => ({ command, args: [], origin: 'verify.server.path' });

    it('accepts an executable file, by path or found on PATH', async () => {
        expect(await launchProblem(server(path.join(dir, 'lsp-verify')))).toBeUndefined();
        expect(await launchProblem(server('lsp-verify'), undefined, `/nonexistent:${dir}`)).toBeUndefined();
    });

    it('rejects a file that is missing or not executable, naming the setting', async () => {
        for (const command of [path.join(dir, 'missing'), path.join(dir, 'not-executable'), dir]) {
            const problem = await launchProblem(server(command));
            expect(problem).toContain(`verify.server.path is "${command}", which is not an executable file`);
        }
        expect(await launchProblem(server('lsp-verify'), undefined, '/nonexistent')).toBeDefined();
    });
});
