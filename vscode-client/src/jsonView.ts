/** Read-only JSON documents for what the server returns (a run record, a plan). */
import * as vscode from 'vscode';

export const JSON_SCHEME = 'verify-json';

export class JsonDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly contents = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.contents.get(uri.path) ?? '';
    }

    /** Opens (or refreshes) the document `name` with `value` pretty-printed. */
    async show(name: string, value: unknown): Promise<vscode.TextEditor> {
        const uri = vscode.Uri.from({ scheme: JSON_SCHEME, path: `/${name}` });
        this.contents.set(uri.path, `${JSON.stringify(value, null, 2)}\n`);
        // A document already open keeps its old text until its provider says it changed.
        this.changed.fire(uri);
        const document = await vscode.workspace.openTextDocument(uri);
        return vscode.window.showTextDocument(document, { preview: false });
    }

    dispose(): void {
        this.changed.dispose();
    }
}
