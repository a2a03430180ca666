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
] as const;

export type VerifySettings = Partial<Record<(typeof SERVER_SETTING_KEYS)[number], unknown>>;

/** The part of vscode.WorkspaceConfiguration that is read here. */
export interface ConfigurationLike {
    get<T>(key: string): T | undefined;
    inspect<T>(key: string):
        | {
              globalValue?: T;
              workspaceValue?: T;
              workspaceFolderValue?: T;
              globalLanguageValue?: T;
              workspaceLanguageValue?: T;
              workspaceFolderLanguageValue?: T;
          }
        | undefined;
}

/**
 * The settings the user set explicitly, with VS Code's precedence already applied.
 *
 * Defaults are left out on purpose: the server ranks the editor's settings above
 * `.lsp-verify.toml`, so sending VS Code's defaults would override every value the project
 * file sets. Values are passed through unchecked: the server validates them and reports a
 * wrong one once, which is one place for the message instead of two.
 */
export function verifySettings(config: ConfigurationLike): VerifySettings {
    const settings: VerifySettings = {};
    for (const key of SERVER_SETTING_KEYS) {
        if (!explicitlySet(config, key)) {
            continue;
        }
        // get() and not inspect(): in Restricted Mode VS Code ignores a workspace's value
        // of a restricted setting (verify.command) and get() is what honours that.
        const value = config.get<unknown>(key);
        if (value !== undefined) {
            settings[key] = value;
        }
    }
    return settings;
}

function explicitlySet(config: ConfigurationLike, key: string): boolean {
    const seen = config.inspect<unknown>(key);
    if (seen === undefined) {
        return false;
    }
    return [
        seen.globalValue,
        seen.workspaceValue,
        seen.workspaceFolderValue,
        seen.globalLanguageValue,
        seen.workspaceLanguageValue,
        seen.workspaceFolderLanguageValue,
    ].some((value) => value !== undefined);
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
}

/**
 * The server learns whether the workspace is trusted from the client.
 * Diagnostics are pushed: VS Code declares pull support, but it keeps pulled diagnostics in a
 * list of their own (a server that also pushed would show twice) and pulls only open files,
 * while a failing test is often in a file that is not open.
 */
export function initializationOptions(settings: VerifySettings, workspaceTrusted: boolean): InitializationOptions {
    return { verify: settings, workspaceTrusted, diagnosticMode: 'push' };
}
