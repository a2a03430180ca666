import * as vscode from 'vscode';

import { VerifyClient } from './client';
import { CLIENT_COMMANDS } from './commands';
import { JSON_SCHEME, JsonDocuments } from './jsonView';
import { RunOutput } from './runOutput';
import { StatusBar } from './statusBar';

let client: VerifyClient | undefined;

export function activate(context: vscode.ExtensionContext): void {
    // languageclient 11 writes through a log channel; the server's window/logMessage lands here.
    const output = vscode.window.createOutputChannel('Verify', { log: true });
    // Each run's own output, as it streams: a plain channel, no timestamps on the lines.
    const runsChannel = vscode.window.createOutputChannel('Verify Runs');
    const runs = new RunOutput(runsChannel);
    const documents = new JsonDocuments();
    const statusBar = new StatusBar(vscode.workspace.isTrusted);
    client = new VerifyClient({ extensionPath: context.extensionPath, output, runs, statusBar, documents });
    const verify = client;
    context.subscriptions.push(
        output,
        runsChannel,
        documents,
        statusBar,
        vscode.workspace.registerTextDocumentContentProvider(JSON_SCHEME, documents),
        vscode.commands.registerCommand(CLIENT_COMMANDS.showOutput, () => output.show()),
        vscode.commands.registerCommand(CLIENT_COMMANDS.showRunOutput, () => runsChannel.show()),
        vscode.commands.registerCommand(CLIENT_COMMANDS.restartServer, () => verify.restart()),
    );
    // Not awaited: activation must not wait for a Python to start.
    void verify.start();
}

export async function deactivate(): Promise<void> {
    const verify = client;
    client = undefined;
    if (verify !== undefined) {
        await verify.stop();
        verify.dispose();
    }
}
