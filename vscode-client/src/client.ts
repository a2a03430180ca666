/** The language client: which server to start, with what, and its life (start, restart, stop). */
import * as vscode from 'vscode';
import {
    CloseAction,
    type CloseHandlerResult,
    DidChangeConfigurationNotification,
    ErrorAction,
    type ErrorHandler,
    type ErrorHandlerResult,
    LanguageClient,
    type LanguageClientOptions,
    type Middleware,
    type ServerOptions,
    State,
} from 'vscode-languageclient/node';

import { executeCommandMiddleware } from './commands';
import type { JsonDocuments } from './jsonView';
import { type Launch, launchProblem, resolveLaunch } from './launch';
import {
    type ServerSettings,
    type VerifySettings,
    initializationOptions,
    serverSettings,
    verifySettings,
} from './settings';
import { OUTPUT_NOTIFICATION, type RunOutput } from './runOutput';
import { showDocument } from './runView';
import { STATUS_NOTIFICATION, parseStatus } from './status';
import type { StatusBar } from './statusBar';

export const CLIENT_ID = 'verify';
export const CLIENT_NAME = 'Verify';
/** A `when` clause context: the palette offers the server's commands only while it runs. */
export const RUNNING_CONTEXT = 'verify.serverRunning';
const RESTART_WINDOW_MS = 3 * 60 * 1000;
const MAX_RESTARTS = 3;

export interface ClientDeps {
    extensionPath: string;
    output: vscode.LogOutputChannel;
    runs: RunOutput;
    statusBar: StatusBar;
    documents: JsonDocuments;
}

function verifySection(scope?: vscode.Uri): VerifySettings {
    return verifySettings(vscode.workspace.getConfiguration('verify', scope));
}

export function serverOptions(launch: Launch): ServerOptions {
    return { command: launch.command, args: launch.args };
}

export function clientOptions(
    deps: ClientDeps,
    errorHandler: ErrorHandler,
    workspaceTrusted: boolean,
): LanguageClientOptions {
    const middleware: Middleware = {
        executeCommand: executeCommandMiddleware({
            activeUri: () => vscode.window.activeTextEditor?.document.uri,
            documents: deps.documents,
            showRunOutput: () => deps.runs.show(),
        }),
        window: { showDocument },
        workspace: {
            // The server asks for section `verify` per folder; VS Code's answer would carry
            // the client's own keys (server, trace) and every default, so it is built here.
            configuration: async (params, token, next) => {
                const answers = await next(params, token);
                if (!Array.isArray(answers)) {
                    return answers;
                }
                return params.items.map((item, index) =>
                    item.section === 'verify'
                        ? verifySection(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                        : answers[index],
                );
            },
        },
    };
    return {
        // Any saved file can be what the project's command checks, whatever its language.
        documentSelector: [{ scheme: 'file' }],
        outputChannel: deps.output,
        initializationOptions: initializationOptions(verifySection(), workspaceTrusted),
        errorHandler,
        middleware,
    };
}

/**
 * Restarts a server that dies while running, at most MAX_RESTARTS times in RESTART_WINDOW_MS;
 * never one that dies while starting (languageclient reports that once), so a broken
 * installation cannot loop.
 */
export class RestartPolicy implements ErrorHandler {
    private restarts: number[] = [];
    reachedRunning = false;

    constructor(
        private readonly onGiveUp: (message: string) => void,
        private readonly now: () => number = Date.now,
    ) {}

    error(_error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
        return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown };
    }

    closed(): CloseHandlerResult {
        if (!this.reachedRunning) {
            return { action: CloseAction.DoNotRestart, handled: true };
        }
        const now = this.now();
        this.restarts = [...this.restarts.filter((at) => now - at < RESTART_WINDOW_MS), now];
        if (this.restarts.length <= MAX_RESTARTS) {
            return { action: CloseAction.Restart, handled: true };
        }
        const message =
            `The verify server stopped ${this.restarts.length} times in 3 minutes and was not ` +
            'restarted. "Verify: Show Output" has its log; "Verify: Restart Server" starts it again.';
        this.onGiveUp(message);
        return { action: CloseAction.DoNotRestart, message, handled: true };
    }
}

export class VerifyClient implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private launched: ServerSettings | undefined;
    /** Why the current client stopped by itself, for the status bar's tooltip. */
    private stopReason: string | undefined;
    /** Start, stop and restart run one at a time, in the order asked. */
    private queue: Promise<void> = Promise.resolve();
    private readonly disposables: vscode.Disposable[] = [];

    constructor(private readonly deps: ClientDeps) {
        this.disposables.push(
            vscode.workspace.onDidChangeConfiguration((event) => this.configurationChanged(event)),
            vscode.workspace.onDidGrantWorkspaceTrust(() => this.trustGranted()),
            vscode.workspace.onDidChangeWorkspaceFolders(() => {
                if (this.client === undefined) {
                    void this.start();
                }
            }),
        );
    }

    /** The running client, if any (tests, and commands that need one). */
    get languageClient(): LanguageClient | undefined {
        return this.client;
    }

    start(): Promise<void> {
        return this.serially(() => this.doStart());
    }

    stop(): Promise<void> {
        return this.serially(() => this.doStop());
    }

    restart(): Promise<void> {
        return this.serially(async () => {
            await this.doStop();
            await this.doStart();
        });
    }

    private serially(work: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(work, work);
        return this.queue;
    }

    private async doStart(): Promise<void> {
        if (this.client !== undefined) {
            return;
        }
        if (!vscode.workspace.workspaceFolders?.length) {
            this.deps.statusBar.setVisible(false);
            return;
        }
        const { output, statusBar } = this.deps;
        const config = vscode.workspace.getConfiguration('verify');
        const server = serverSettings(config);
        const launch = resolveLaunch(server, this.deps.extensionPath);
        statusBar.setServer('starting');
        const problem = await launchProblem(launch);
        if (problem !== undefined) {
            output.error(problem);
            statusBar.setServer('stopped', problem);
            void this.showLaunchProblem(problem);
            return;
        }
        output.info(`starting the server: ${[launch.command, ...launch.args].join(' ')}`);
        this.stopReason = undefined;
        const policy = new RestartPolicy((message) => {
            this.stopReason = message;
            statusBar.setServer('stopped', message);
            void vscode.window.showErrorMessage(message, 'Show Output').then((choice) => {
                if (choice) {
                    output.show();
                }
            });
        });
        const client = new LanguageClient(
            CLIENT_ID,
            CLIENT_NAME,
            serverOptions(launch),
            clientOptions(this.deps, policy, vscode.workspace.isTrusted),
        );
        this.client = client;
        this.launched = server;
        client.onDidChangeState((event) => {
            if (event.newState === State.Running) {
                policy.reachedRunning = true;
            } else if (event.newState === State.Starting) {
                policy.reachedRunning = false;
            }
            this.serverStateChanged(client, event.newState);
        });
        client.onNotification(OUTPUT_NOTIFICATION, (params: unknown) => this.deps.runs.handle(params));
        client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
            const status = parseStatus(params);
            if (status !== undefined) {
                statusBar.update(status);
            }
        });
        try {
            await client.start();
            const info = client.initializeResult?.serverInfo;
            if (info !== undefined) {
                output.info(`server: ${info.name} ${info.version ?? '(version unknown)'}`);
            }
        } catch (error) {
            // languageclient has told the user already; the status bar keeps saying it.
            this.stopReason = `The verify server did not start: ${String(error)}`;
            statusBar.setServer('stopped', this.stopReason);
        }
    }

    private serverStateChanged(client: LanguageClient, state: State): void {
        if (client !== this.client) {
            return;
        }
        const running = state === State.Running;
        void vscode.commands.executeCommand('setContext', RUNNING_CONTEXT, running);
        if (running) {
            this.deps.statusBar.setServer('running');
        } else if (state === State.Starting) {
            this.deps.statusBar.setServer('starting');
        } else {
            this.deps.statusBar.setServer('stopped', this.stopReason);
        }
    }

    private async doStop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.launched = undefined;
        if (client === undefined) {
            return;
        }
        void vscode.commands.executeCommand('setContext', RUNNING_CONTEXT, false);
        this.deps.statusBar.setServer('stopped');
        try {
            // dispose() stops the server too (shutdown, exit) and unregisters its commands,
            // so a restart can register them again.
            await client.dispose();
        } catch (error) {
            this.deps.output.warn(`stopping the server: ${String(error)}`);
        }
    }

    private async showLaunchProblem(problem: string): Promise<void> {
        const choice = await vscode.window.showErrorMessage(problem, 'Open Settings', 'Show Output');
        if (choice === 'Open Settings') {
            await vscode.commands.executeCommand('workbench.action.openSettings', 'verify.server');
        } else if (choice === 'Show Output') {
            this.deps.output.show();
        }
    }

    private configurationChanged(event: vscode.ConfigurationChangeEvent): void {
        if (!event.affectsConfiguration('verify')) {
            return;
        }
        if (event.affectsConfiguration('verify.server') && this.serverSettingsChanged()) {
            void this.restart();
            return;
        }
        this.notifySettings();
    }

    private trustGranted(): void {
        this.deps.statusBar.setTrusted(true);
        // Restricted settings (verify.server.*) may only now take effect.
        if (this.serverSettingsChanged()) {
            void this.restart();
            return;
        }
        this.notifySettings();
    }

    private serverSettingsChanged(): boolean {
        const now = serverSettings(vscode.workspace.getConfiguration('verify'));
        const before = this.launched;
        return before === undefined || before.path !== now.path || before.interpreter !== now.interpreter;
    }

    /** The server re-reads its settings, and learns of trust granted, from this. */
    private notifySettings(): void {
        const client = this.client;
        if (client === undefined || !client.isRunning()) {
            return;
        }
        void client
            .sendNotification(DidChangeConfigurationNotification.type, {
                settings: { verify: verifySection(), workspaceTrusted: vscode.workspace.isTrusted },
            })
            .catch((error: unknown) => this.deps.output.warn(`sending settings: ${String(error)}`));
    }

    dispose(): void {
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
        void this.stop();
    }
}
