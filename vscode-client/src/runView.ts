/**
 * The readable view of a run. The server writes it as a Markdown file in the user's state
 * folder and asks the editor to show it (`window/showDocument`); VS Code shows it rendered, as
 * a Markdown preview whose problem links open the file at the line, instead of as source.
 */
import * as vscode from 'vscode';
import type {
    CancellationToken,
    ResponseError,
    ShowDocumentParams,
    ShowDocumentRequest,
    ShowDocumentResult,
} from 'vscode-languageclient/node';

/**
 * The server's name for a run view, in its state folder:
 * `lsp-verify/runs/last-run-<folder>-<digest>-<started>.md`, one per run.
 */
const RUN_VIEW = /\/lsp-verify\/runs\/((last-run-[^/]*-[0-9a-f]{12}-)[0-9A-Za-z]+\.md)$/;

/**
 * A run view's file name, and the name all views of the same folder's runs start with, as a
 * tab shows them (a folder named `café` is `caf%C3%A9` in the URI, `café` in the label).
 */
export function runViewName(uri: string): { name: string; folder: string } | undefined {
    const found = uri.startsWith('file:') ? RUN_VIEW.exec(uri) : null;
    if (!found) {
        return undefined;
    }
    try {
        return { name: decodeURIComponent(found[1] ?? ''), folder: decodeURIComponent(found[2] ?? '') };
    } catch {
        return undefined; // not a URI the server writes
    }
}

/** Previews of the folder's older runs (the server has removed their files). */
async function closeOlderViews(folder: string, name: string): Promise<void> {
    const older = vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .filter(
            (tab) =>
                tab.input instanceof vscode.TabInputWebview && tab.label.includes(folder) && !tab.label.includes(name),
        );
    if (older.length > 0) {
        await vscode.window.tabGroups.close(older, true);
    }
}

/** `window.showDocument` middleware: a run view opens as a preview; anything else as asked. */
export async function showDocument(
    params: ShowDocumentParams,
    token: CancellationToken,
    next: ShowDocumentRequest.HandlerSignature,
): Promise<ShowDocumentResult | ResponseError<void>> {
    const view = runViewName(params.uri);
    if (params.external || view === undefined) {
        return next(params, token);
    }
    try {
        await closeOlderViews(view.folder, view.name);
        // Reveals the preview already open for this file, refreshed.
        await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.parse(params.uri));
        return { success: true };
    } catch {
        // Markdown support disabled: the source is still readable.
        return next(params, token);
    }
}
