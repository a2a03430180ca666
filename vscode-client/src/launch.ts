/**
 * Which process the client starts as the server, and a check that it can start at all, so a
 * missing or too old Python gives one message that says what to set instead of a crash loop.
 */
import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

import type { ServerSettings } from './settings';

export const MIN_PYTHON: readonly [number, number] = [3, 9];
const PROBE_TIMEOUT_MS = 20_000;
const VERSION_PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

export interface Launch {
    command: string;
    args: string[];
    /** Where `command` came from, so a message can name what to change. */
    origin: 'verify.server.path' | 'verify.server.interpreter' | 'default';
}

export function bundledServerScript(extensionPath: string): string {
    return path.join(extensionPath, 'bundled', 'serve.py');
}

export function resolveLaunch(server: ServerSettings, extensionPath: string): Launch {
    if (server.path !== '') {
        return { command: expandHome(server.path), args: [], origin: 'verify.server.path' };
    }
    // -I: the user's PYTHONPATH and user site-packages must not shadow the bundled pygls.
    // It only affects the server's own imports: the verify command still gets the
    // environment as it was.
    const args = ['-I', bundledServerScript(extensionPath)];
    if (server.interpreter !== '') {
        return { command: expandHome(server.interpreter), args, origin: 'verify.server.interpreter' };
    }
    return { command: 'python3', args, origin: 'default' };
}

function expandHome(value: string): string {
    return value === '~' || value.startsWith('~/') ? path.join(os.homedir(), value.slice(1)) : value;
}

export interface RunResult {
    stdout: string;
    stderr: string;
}

/** Rejects like child_process.execFile: an Error with `code` (errno string or exit status). */
export type RunFile = (command: string, args: string[], timeoutMs: number) => Promise<RunResult>;

const runFile: RunFile = (command, args, timeoutMs) =>
    new Promise((resolve, reject) => {
        execFile(command, args, { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
            if (error) {
                reject(Object.assign(error, { stderr: String(stderr) }));
            } else {
                resolve({ stdout: String(stdout), stderr: String(stderr) });
            }
        });
    });

const REMEDY =
    'Set verify.server.interpreter to a Python 3.9 or newer, or verify.server.path to an ' +
    'lsp-verify executable; the server restarts when either changes.';

/** Why `launch` cannot start the server, as a message for the user; undefined when it can. */
export async function launchProblem(
    launch: Launch,
    run: RunFile = runFile,
    searchPath: string | undefined = process.env.PATH,
): Promise<string | undefined> {
    if (launch.origin === 'verify.server.path') {
        const found = await findExecutable(launch.command, searchPath);
        return found
            ? undefined
            : `verify cannot start its server: verify.server.path is "${launch.command}", which ` +
                  'is not an executable file. Set it to an lsp-verify executable, or clear it to use ' +
                  'the server bundled with the extension.';
    }
    const which =
        launch.origin === 'default' ? 'python3 (from PATH)' : `"${launch.command}" (verify.server.interpreter)`;
    let result: RunResult;
    try {
        result = await run(launch.command, ['-I', '-c', VERSION_PROBE], PROBE_TIMEOUT_MS);
    } catch (error) {
        return `verify cannot start its server: ${which} ${probeFailure(error)}. ${REMEDY}`;
    }
    const match = /^(\d+)\.(\d+)\.(\d+)\s*$/.exec(result.stdout);
    if (!match) {
        return `verify cannot start its server: ${which} did not report a Python version. ${REMEDY}`;
    }
    const major = Number(match[1]);
    const minor = Number(match[2]);
    if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
        return (
            `verify cannot start its server: ${which} is Python ${major}.${minor}, and the ` +
            `server needs ${MIN_PYTHON.join('.')} or newer. ${REMEDY}`
        );
    }
    return undefined;
}

function probeFailure(error: unknown): string {
    const details = (error ?? {}) as { code?: unknown; killed?: unknown; stderr?: unknown };
    if (details.code === 'ENOENT') {
        return 'was not found';
    }
    if (details.code === 'EACCES') {
        return 'is not executable';
    }
    if (details.killed === true) {
        return `did not answer within ${PROBE_TIMEOUT_MS / 1000} s`;
    }
    const stderr = typeof details.stderr === 'string' ? details.stderr.trim() : '';
    const first = stderr.split('\n')[0] ?? '';
    return first === '' ? 'failed to run' : `failed to run (${first})`;
}

async function findExecutable(command: string, searchPath: string | undefined): Promise<boolean> {
    const candidates = command.includes(path.sep)
        ? [command]
        : (searchPath ?? '')
              .split(path.delimiter)
              .filter((dir) => dir !== '')
              .map((dir) => path.join(dir, command));
    for (const candidate of candidates) {
        try {
            if ((await stat(candidate)).isFile()) {
                await access(candidate, fsConstants.X_OK);
                return true;
            }
        } catch {
            // not this one
        }
    }
    return false;
}
