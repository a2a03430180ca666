/** The status bar item, fed by `verify/status`, the server's state and the diagnostics. */
import * as vscode from 'vscode';

import { type FolderStatus, type ServerState, isInside, pickFolder, statusView } from './status';

export const STATUS_ITEM_ID = 'verify.status';

export class StatusBar implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private readonly statuses = new Map<string, FolderStatus>();
    private readonly disposables: vscode.Disposable[] = [];
    private lastReported: string | undefined;
    private server: ServerState = 'starting';
    private serverProblem: string | undefined;

    constructor(private trusted: boolean) {
        this.item = vscode.window.createStatusBarItem(STATUS_ITEM_ID, vscode.StatusBarAlignment.Left, 50);
        this.item.name = 'Verify';
        this.disposables.push(
            this.item,
            vscode.languages.onDidChangeDiagnostics(() => this.render()),
            vscode.window.onDidChangeActiveTextEditor(() => this.render()),
        );
        this.render();
        this.item.show();
    }

    update(status: FolderStatus): void {
        this.statuses.set(status.folder, status);
        this.lastReported = status.folder;
        this.render();
    }

    /** Hidden in a window without a workspace folder, where verify has nothing to run. */
    setVisible(visible: boolean): void {
        if (visible) {
            this.item.show();
        } else {
            this.item.hide();
        }
    }

    setServer(state: ServerState, problem?: string): void {
        this.item.show();
        if (state === 'starting') {
            // A new server process knows nothing of the old one's runs.
            this.statuses.clear();
            this.lastReported = undefined;
        }
        this.server = state;
        this.serverProblem = problem;
        this.render();
    }

    setTrusted(trusted: boolean): void {
        this.trusted = trusted;
        this.render();
    }

    private render(): void {
        const active = vscode.window.activeTextEditor?.document.uri.toString();
        const status = pickFolder(this.statuses, active, this.lastReported);
        const view = statusView({
            server: this.server,
            serverProblem: this.serverProblem,
            status,
            folderName: status ? folderName(status.folder) : undefined,
            workspaceTrusted: this.trusted,
            problems: status ? countVerifyProblems(status.folder) : 0,
        });
        this.item.text = view.text;
        this.item.tooltip = view.tooltip;
        this.item.backgroundColor = view.background
            ? new vscode.ThemeColor(`statusBarItem.${view.background}Background`)
            : undefined;
        this.item.command = { title: 'Show Last Run', command: view.command, arguments: view.arguments };
    }

    dispose(): void {
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
    }
}

function countVerifyProblems(folder: string): number {
    let count = 0;
    for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
        if (isInside(folder, uri.toString())) {
            count += diagnostics.filter((d) => d.source === 'verify').length;
        }
    }
    return count;
}

function folderName(folder: string): string {
    const parts = vscode.Uri.parse(folder)
        .path.split('/')
        .filter((part) => part !== '');
    return parts[parts.length - 1] ?? folder;
}
