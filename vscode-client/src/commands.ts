/**
 * Palette commands. The server's own commands are registered by vscode-languageclient (it
 * registers every command the server advertises); this module only adds the active
 * document to their arguments and shows what they return.
 */
import * as vscode from 'vscode';

import type { JsonDocuments } from './jsonView';

export const SERVER_COMMANDS = [
    'verify.runNow',
    'verify.cancel',
    'verify.showLastRun',
    'verify.explain',
    'verify.approve',
    'verify.revoke',
] as const;

export const CLIENT_COMMANDS = {
    showOutput: 'verify.showOutput',
    showRunOutput: 'verify.showRunOutput',
    restartServer: 'verify.restartServer',
} as const;

type Next = (command: string, args: unknown[]) => vscode.ProviderResult<unknown>;

/**
 * From the palette a command has no arguments; the server then guesses the folder (the one
 * saved last). The active document says which folder the user means.
 */
export function withActiveDocument(args: unknown[], activeUri: vscode.Uri | undefined): unknown[] {
    if (args.length > 0 || activeUri === undefined || activeUri.scheme !== 'file') {
        return args;
    }
    return [activeUri.toString()];
}

export interface CommandDeps {
    activeUri(): vscode.Uri | undefined;
    documents: JsonDocuments;
    /** Opens the Verify Runs channel, where each run's output streams. */
    showRunOutput(): void;
}

/**
 * The code action "Show the run's output": VS Code has the run's output in a channel already.
 * Show Last Run asks the server for it directly, for the readable view.
 */
const SHOW_RUN = 'verify.showRun';

export function executeCommandMiddleware(deps: CommandDeps) {
    return async (command: string, args: unknown[], next: Next): Promise<unknown> => {
        if (command === SHOW_RUN) {
            deps.showRunOutput();
            return undefined;
        }
        if (!(SERVER_COMMANDS as readonly string[]).includes(command)) {
            return next(command, args);
        }
        const forwarded = withActiveDocument(args, deps.activeUri());
        const result = await next(command, forwarded);
        if (command === 'verify.showLastRun') {
            if (isEmpty(result)) {
                const where = forwarded.length > 0 ? 'in this folder' : 'in this workspace';
                void vscode.window.showInformationMessage(`verify has not run ${where} yet.`);
            } else {
                // The server writes the run's readable view and asks to show it (see runView.ts).
                await next(SHOW_RUN, forwarded);
            }
        } else {
            await present(command, result, deps.documents);
        }
        return result;
    };
}

function isEmpty(result: unknown): boolean {
    return result === null || result === undefined || (Array.isArray(result) && result.length === 0);
}

/** What a palette user sees of a command's result (the caller still gets the result). */
export async function present(command: string, result: unknown, documents: JsonDocuments): Promise<void> {
    const value = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
    switch (command) {
        case 'verify.explain':
            if (result === null || result === undefined) {
                void vscode.window.showInformationMessage('verify: no workspace folder to explain.');
            } else {
                await documents.show('plan.json', result);
            }
            return;
        case 'verify.runNow':
            if (result === null || result === undefined) {
                void vscode.window.showInformationMessage('verify: no workspace folder to run in.');
            } else if (['no-plan', 'declined', 'skipped'].includes(String(value.outcome))) {
                void vscode.window.showWarningMessage(`verify did not run: ${String(value.reason ?? value.outcome)}`);
            }
            return;
        case 'verify.approve':
            if (value.approved === true) {
                void vscode.window.showInformationMessage(
                    `verify: approved \`${String(value.command)}\` for this folder.`,
                );
            } else if (typeof value.reason === 'string') {
                void vscode.window.showInformationMessage(`verify: ${value.reason}`);
            }
            return;
        case 'verify.revoke':
            if (value.revoked !== undefined) {
                void vscode.window.showInformationMessage(
                    `verify: withdrew ${String(value.revoked)} stored decision(s) for this folder.`,
                );
            }
            return;
        default:
            return;
    }
}
