/**
 * The `verify` section of VS Code's settings, as the server reads it, and the
 * client's own `verify.server.*` settings.
 */

/** The server's setting keys, in the README's order. `server` and `trace` are the client's own. */
export const SERVER_SETTING_KEYS = [
    'command',
    'globs',
    'timeoutMs',
    'runOn',
    'tailLines',
    'autoDetect',
    'confirm',
    'failedFirst',
    'affectedFirst',
] as const;

/**
 * Keys only the user may set. The workspace's settings (`.vscode/settings.json`, the
 * `.code-workspace` file) belong to the repository, and a `confirm` from there would let it run
 * its own command unasked, so for these keys only the user's own (global) value is sent. The
 * server ignores them in `.lsp-verify.toml` for the same reason.
 */
export const USER_ONLY_KEYS: ReadonlySet<string> = new Set(['autoDetect', 'confirm']);

/**
 * The key a command from the workspace's settings is sent under. The server treats it as the
 * repository's (source `workspace-settings`): it runs only once approved, like a command in
 * `.lsp-verify.toml`. `command` is kept for the user's own value.
 */
export const WORKSPACE_COMMAND_KEY = 'workspaceCommand';

export type VerifySettings = Partial<
    Record<(typeof SERVER_SETTING_KEYS)[number] | typeof WORKSPACE_COMMAND_KEY, unknown>
>;

/** What inspect() says about one key, level by level. */
export interface Inspected<T> {
    globalValue?: T;
    workspaceValue?: T;
    workspaceFolderValue?: T;
    globalLanguageValue?: T;
    workspaceLanguageValue?: T;
    workspaceFolderLanguageValue?: T;
}

/** The part of vscode.WorkspaceConfiguration that is read here. */
export interface ConfigurationLike {
    get<T>(key: string): T | undefined;
    inspect<T>(key: string): Inspected<T> | undefined;
}

/**
 * The settings the user set explicitly, with VS Code's precedence already applied, and a
 * command the workspace set marked as the workspace's.
 *
 * Defaults are left out on purpose: the server ranks the editor's settings above
 * `.lsp-verify.toml`, so sending VS Code's defaults would override every value the project
 * file sets. Values are passed through unchecked: the server validates them and reports a
 * wrong one once, which is one place for the message instead of two.
 */
export function verifySettings(config: ConfigurationLike): VerifySettings {
    const settings: VerifySettings = {};
    for (const key of SERVER_SETTING_KEYS) {
        const seen = config.inspect<unknown>(key);
        if (seen === undefined || !explicitlySet(seen)) {
            continue;
        }
        if (USER_ONLY_KEYS.has(key)) {
            if (seen.globalValue !== undefined) {
                settings[key] = seen.globalValue;
            }
            continue;
        }
        // get() and not inspect(): in Restricted Mode VS Code ignores a workspace's value
        // of a restricted setting (verify.command) and get() is what honours that.
        const value = config.get<unknown>(key);
        if (value === undefined) {
            continue;
        }
        if (key === 'command' && typeof value === 'string' && fromWorkspace(seen, value)) {
            settings[WORKSPACE_COMMAND_KEY] = value;
        } else {
            settings[key] = value;
        }
    }
    return settings;
}

function explicitlySet(seen: Inspected<unknown>): boolean {
    return [
        seen.globalValue,
        seen.workspaceValue,
        seen.workspaceFolderValue,
        seen.globalLanguageValue,
        seen.workspaceLanguageValue,
        seen.workspaceFolderLanguageValue,
    ].some((value) => value !== undefined);
}

/**
 * Whether the value get() returned is one the workspace set. When the user's own value is the
 * same string, it still counts as the workspace's: asking once too often is the safe mistake.
 */
function fromWorkspace(seen: Inspected<unknown>, value: unknown): boolean {
    const workspace = [
        seen.workspaceFolderValue,
        seen.workspaceValue,
        seen.workspaceFolderLanguageValue,
        seen.workspaceLanguageValue,
    ];
    return workspace.some((level) => level !== undefined && level === value);
}

export interface ServerSettings {
    /** An `lsp-verify` executable; empty for the bundled server. */
    path: string;
    /** The Python that runs the bundled server; empty for `python3` on PATH. */
    interpreter: string;
}

export function serverSettings(config: ConfigurationLike): ServerSettings {
    return {
        path: stringSetting(config.get<unknown>('server.path')),
        interpreter: stringSetting(config.get<unknown>('server.interpreter')),
    };
}

function stringSetting(value: unknown): string {
    return typeof value === 'string' ? value.trim() : '';
}

export interface InitializationOptions {
    verify: VerifySettings;
    workspaceTrusted: boolean;
    diagnosticMode: 'push';
    /** The server streams each run's output (verify/output) to the "Verify Runs" channel. */
    liveOutput: true;
}

/**
 * The server learns whether the workspace is trusted from the client.
 * Diagnostics are pushed: VS Code declares pull support, but it keeps pulled diagnostics in a
 * list of their own (a server that also pushed would show twice) and pulls only open files,
 * while a failing test is often in a file that is not open.
 */
export function initializationOptions(settings: VerifySettings, workspaceTrusted: boolean): InitializationOptions {
    return { verify: settings, workspaceTrusted, diagnosticMode: 'push', liveOutput: true };
}
