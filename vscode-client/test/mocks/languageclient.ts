/**
 * A stand-in for vscode-languageclient/node's LanguageClient: it records how it was built and
 * what it sent, and it registers the server's commands the way the real one does (a VS Code
 * command per advertised command, routed through middleware.executeCommand).
 */
import { Disposable, commands } from './vscode';

export enum State {
    Stopped = 1,
    Running = 2,
    Starting = 3,
    StartFailed = 4,
}
export enum CloseAction {
    DoNotRestart = 1,
    Restart = 2,
}
export enum ErrorAction {
    Continue = 1,
    Shutdown = 2,
}
export const DidChangeConfigurationNotification = { type: { method: 'workspace/didChangeConfiguration' } };

/** What the fake server advertises (executeCommandProvider), as lsp_verify/server.py does. */
export const ADVERTISED = [
    'verify.runNow',
    'verify.cancel',
    'verify.showLastRun',
    'verify.explain',
    'verify.approve',
    'verify.revoke',
    'verify.showRun',
    'verify.showPlan',
    'verify.showLocation',
];

type Handler = (params: unknown) => void;
type ShowDocumentAnswer = { success: boolean };
type ShowDocumentMiddleware = (
    params: { uri: string; external?: boolean },
    token: unknown,
    next: (params: { uri: string }, token: unknown) => Promise<ShowDocumentAnswer>,
) => Promise<ShowDocumentAnswer | unknown>;
type ExecuteMiddleware = (
    command: string,
    args: unknown[],
    next: (command: string, args: unknown[]) => unknown,
) => unknown;

export class LanguageClient {
    static instances: LanguageClient[] = [];
    /** Set by a test: start() fails like a server that exits during initialize. */
    static failStart: Error | undefined;

    state = State.Stopped;
    /** What the fake server answered to initialize, once started. */
    initializeResult: { serverInfo?: { name: string; version?: string } } | undefined;
    readonly notificationHandlers = new Map<string, Handler>();
    readonly sent: { method: string; params: unknown }[] = [];
    /** Commands the fake server received, with their arguments as sent. */
    readonly executed: { command: string; args: unknown[] }[] = [];
    /** What the fake server answers per command. */
    readonly results = new Map<string, unknown>();
    /** The document the fake server asks the client to show (window/showDocument) while it runs a command. */
    readonly showsDocument = new Map<string, string>();
    /** Documents that reached languageclient's own window/showDocument handler. */
    readonly shownByDefault: string[] = [];
    private stateListeners: ((event: { oldState: State; newState: State }) => void)[] = [];
    private commandRegistrations: Disposable[] = [];

    constructor(
        readonly id: string,
        readonly name: string,
        readonly serverOptions: unknown,
        readonly clientOptions: {
            documentSelector?: unknown;
            initializationOptions?: unknown;
            middleware?: {
                executeCommand?: ExecuteMiddleware;
                workspace?: { configuration?: Function };
                window?: { showDocument?: ShowDocumentMiddleware };
            };
            errorHandler?: unknown;
            outputChannel?: unknown;
        },
    ) {
        LanguageClient.instances.push(this);
    }

    static get last(): LanguageClient {
        const client = LanguageClient.instances[LanguageClient.instances.length - 1];
        if (!client) {
            throw new Error('no LanguageClient was created');
        }
        return client;
    }

    onNotification(method: string, handler: Handler): Disposable {
        this.notificationHandlers.set(method, handler);
        return new Disposable(() => this.notificationHandlers.delete(method));
    }

    onDidChangeState(listener: (event: { oldState: State; newState: State }) => void): Disposable {
        this.stateListeners.push(listener);
        return new Disposable();
    }

    async start(): Promise<void> {
        this.setState(State.Starting);
        if (LanguageClient.failStart) {
            this.setState(State.StartFailed);
            throw LanguageClient.failStart;
        }
        const middleware = this.clientOptions.middleware?.executeCommand;
        const execute = async (command: string, args: unknown[]) => {
            this.executed.push({ command, args });
            const shown = this.showsDocument.get(command);
            if (shown !== undefined) {
                await this.showDocument(shown);
            }
            return this.results.get(command) ?? null;
        };
        for (const command of ADVERTISED) {
            this.commandRegistrations.push(
                commands.registerCommand(command, (...args: unknown[]) =>
                    middleware ? middleware(command, args, execute) : execute(command, args),
                ),
            );
        }
        this.initializeResult = { serverInfo: { name: 'lsp-verify', version: '9.8.7' } };
        this.setState(State.Running);
    }

    /** As the real client handles the server's window/showDocument: through the middleware. */
    private async showDocument(uri: string): Promise<unknown> {
        const byDefault = async (params: { uri: string }) => {
            this.shownByDefault.push(params.uri);
            return { success: true };
        };
        const middleware = this.clientOptions.middleware?.window?.showDocument;
        return middleware ? middleware({ uri }, {}, byDefault) : byDefault({ uri });
    }

    isRunning(): boolean {
        return this.state === State.Running;
    }

    async sendNotification(type: { method: string }, params: unknown): Promise<void> {
        this.sent.push({ method: type.method, params });
    }

    async dispose(): Promise<void> {
        for (const registration of this.commandRegistrations) {
            registration.dispose();
        }
        this.commandRegistrations = [];
        this.setState(State.Stopped);
    }

    /** The server sends a notification to the client. */
    notify(method: string, params: unknown): void {
        this.notificationHandlers.get(method)?.(params);
    }

    private setState(newState: State): void {
        const oldState = this.state;
        this.state = newState;
        for (const listener of this.stateListeners) {
            listener({ oldState, newState });
        }
    }
}
