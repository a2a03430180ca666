/**
 * The part of the `vscode` API the extension uses, with state a test can set and inspect.
 * `mock.reset()` runs before each test (see test/setup.ts).
 */
type Listener<T> = (value: T) => unknown;

export class Disposable {
    constructor(private readonly callback: () => void = () => undefined) {}
    dispose(): void {
        this.callback();
    }
}

export class EventEmitter<T> {
    private listeners: Listener<T>[] = [];
    readonly event = (listener: Listener<T>): Disposable => {
        this.listeners.push(listener);
        return new Disposable(() => {
            this.listeners = this.listeners.filter((l) => l !== listener);
        });
    };
    fire(value: T): void {
        for (const listener of [...this.listeners]) {
            listener(value);
        }
    }
    dispose(): void {
        this.listeners = [];
    }
}

export class Uri {
    private constructor(
        readonly scheme: string,
        readonly authority: string,
        readonly path: string,
    ) {}
    static parse(value: string): Uri {
        const match = /^([a-zA-Z][\w+.-]*):(\/\/([^/]*))?(.*)$/.exec(value);
        if (!match) {
            throw new Error(`not a URI: ${value}`);
        }
        return new Uri(match[1] ?? '', match[3] ?? '', match[4] ?? '');
    }
    static file(path: string): Uri {
        return new Uri('file', '', path);
    }
    static from(parts: { scheme: string; path?: string; authority?: string }): Uri {
        return new Uri(parts.scheme, parts.authority ?? '', parts.path ?? '');
    }
    toString(): string {
        const slashes = this.scheme === 'file' || this.authority !== '' ? `//${this.authority}` : '';
        return `${this.scheme}:${slashes}${this.path}`;
    }
}

export class ThemeColor {
    constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
    Left = 1,
    Right = 2,
}

export interface FakeStatusBarItem {
    id: string;
    name?: string;
    text: string;
    tooltip?: unknown;
    backgroundColor?: ThemeColor;
    command?: { command: string; arguments?: unknown[] };
    visible: boolean;
    show(): void;
    hide(): void;
    dispose(): void;
}

interface Inspected {
    globalValue?: unknown;
    workspaceValue?: unknown;
    workspaceFolderValue?: unknown;
}

export interface FakeDiagnostic {
    source?: string;
    message: string;
}

export interface ShownMessage {
    kind: 'error' | 'warning' | 'info';
    message: string;
    actions: string[];
}

function freshState() {
    return {
        /** `verify.<key>` -> where it is set; scoped: folder URI -> workspaceFolder values. */
        settings: new Map<string, Inspected>(),
        folderSettings: new Map<string, Map<string, unknown>>(),
        /** Values VS Code ignores in Restricted Mode for restricted settings. */
        restricted: new Set([
            'verify.command',
            'verify.confirm',
            'verify.autoDetect',
            'verify.server.path',
            'verify.server.interpreter',
        ]),
        defaults: new Map<string, unknown>([
            ['verify.command', null],
            ['verify.globs', []],
            ['verify.timeoutMs', 60000],
            ['verify.runOn', 'save'],
            ['verify.tailLines', 40],
            ['verify.autoDetect', true],
            ['verify.confirm', 'onChange'],
            ['verify.server.path', ''],
            ['verify.server.interpreter', ''],
            ['verify.trace.server', 'off'],
        ]),
        trusted: true,
        folders: [Uri.file('/work/project')] as Uri[] | undefined,
        activeUri: undefined as Uri | undefined,
        diagnostics: [] as [Uri, FakeDiagnostic[]][],
        messages: [] as ShownMessage[],
        /** What the next showXxxMessage resolves to. */
        messageAnswer: undefined as string | undefined,
        statusItems: [] as FakeStatusBarItem[],
        executed: [] as { command: string; args: unknown[] }[],
        registered: new Map<string, (...args: unknown[]) => unknown>(),
        opened: [] as { uri: string; text: string }[],
        tabs: [] as FakeTab[],
        providers: new Map<string, { provideTextDocumentContent(uri: Uri): string }>(),
        outputLines: [] as string[],
        shownChannels: [] as string[],
        events: {
            configuration: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
            trust: new EventEmitter<void>(),
            folders: new EventEmitter<unknown>(),
            diagnostics: new EventEmitter<unknown>(),
            activeEditor: new EventEmitter<unknown>(),
        },
    };
}

export const mock = {
    state: freshState(),
    reset(): void {
        this.state = freshState();
    },
    /** Sets `verify.<key>` at one level, as the Settings editor would. */
    set(key: string, value: unknown, level: keyof Inspected = 'globalValue'): void {
        const entry = this.state.settings.get(key) ?? {};
        entry[level] = value;
        this.state.settings.set(key, entry);
    },
    setForFolder(folder: string, key: string, value: unknown): void {
        const values = this.state.folderSettings.get(folder) ?? new Map<string, unknown>();
        values.set(key, value);
        this.state.folderSettings.set(folder, values);
    },
    /** Changes settings and fires onDidChangeConfiguration for them. */
    change(keys: string[], apply: () => void): void {
        apply();
        this.state.events.configuration.fire({
            affectsConfiguration: (section: string) =>
                keys.some((key) => key === section || key.startsWith(`${section}.`)),
        });
    },
    grantTrust(): void {
        this.state.trusted = true;
        this.state.events.trust.fire();
    },
    get statusItem(): FakeStatusBarItem {
        const item = this.state.statusItems[this.state.statusItems.length - 1];
        if (!item) {
            throw new Error('no status bar item was created');
        }
        return item;
    },
};

function configuration(section: string, scope?: Uri) {
    const full = (key: string) => `${section}.${key}`;
    const inspect = (key: string): Inspected | undefined => {
        const name = full(key);
        const entry = { ...(mock.state.settings.get(name) ?? {}) };
        const scoped = scope ? mock.state.folderSettings.get(scope.toString()) : undefined;
        if (scoped?.has(name)) {
            entry.workspaceFolderValue = scoped.get(name);
        }
        return entry;
    };
    return {
        inspect: <T>(key: string) =>
            inspect(key) as { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T } | undefined,
        get<T>(key: string): T | undefined {
            const name = full(key);
            const seen = inspect(key) ?? {};
            const untrusted = !mock.state.trusted && mock.state.restricted.has(name);
            const values = untrusted
                ? [seen.globalValue]
                : [seen.workspaceFolderValue, seen.workspaceValue, seen.globalValue];
            const value = values.find((v) => v !== undefined);
            return (value !== undefined ? value : mock.state.defaults.get(name)) as T | undefined;
        },
    };
}

function message(kind: ShownMessage['kind']) {
    return (text: string, ...actions: unknown[]): Promise<string | undefined> => {
        mock.state.messages.push({
            kind,
            message: text,
            actions: actions.filter((a): a is string => typeof a === 'string'),
        });
        return Promise.resolve(mock.state.messageAnswer);
    };
}

/** An open editor tab's input: a webview (a Markdown preview, for one). */
export class TabInputWebview {
    constructor(readonly viewType: string) {}
}

export interface FakeTab {
    label: string;
    input: unknown;
}

export const window = {
    tabGroups: {
        get all() {
            return [{ tabs: mock.state.tabs }];
        },
        async close(tabs: FakeTab[]): Promise<boolean> {
            mock.state.tabs = mock.state.tabs.filter((tab) => !tabs.includes(tab));
            return true;
        },
    },
    get activeTextEditor() {
        const uri = mock.state.activeUri;
        return uri ? { document: { uri } } : undefined;
    },
    onDidChangeActiveTextEditor: (listener: Listener<unknown>) => mock.state.events.activeEditor.event(listener),
    showErrorMessage: message('error'),
    showWarningMessage: message('warning'),
    showInformationMessage: message('info'),
    createOutputChannel(name: string) {
        const log = (level: string) => (text: string) => {
            mock.state.outputLines.push(`[${level}] ${text}`);
        };
        return {
            name,
            info: log('info'),
            warn: log('warn'),
            error: log('error'),
            debug: log('debug'),
            trace: log('trace'),
            appendLine: log('line'),
            show: () => {
                mock.state.shownChannels.push(name);
            },
            dispose: () => undefined,
        };
    },
    createStatusBarItem(id: string): FakeStatusBarItem {
        const item: FakeStatusBarItem = {
            id,
            text: '',
            visible: false,
            show() {
                item.visible = true;
            },
            hide() {
                item.visible = false;
            },
            dispose() {
                item.visible = false;
            },
        };
        mock.state.statusItems.push(item);
        return item;
    },
    async showTextDocument(document: { uri: Uri; getText(): string }) {
        mock.state.opened.push({ uri: document.uri.toString(), text: document.getText() });
        return { document };
    },
};

export const workspace = {
    get isTrusted() {
        return mock.state.trusted;
    },
    get workspaceFolders() {
        return mock.state.folders?.map((uri, index) => ({ uri, index, name: uri.path.split('/').pop() }));
    },
    getConfiguration: configuration,
    onDidChangeConfiguration: (listener: Listener<{ affectsConfiguration(section: string): boolean }>) =>
        mock.state.events.configuration.event(listener),
    onDidGrantWorkspaceTrust: (listener: Listener<void>) => mock.state.events.trust.event(listener),
    onDidChangeWorkspaceFolders: (listener: Listener<unknown>) => mock.state.events.folders.event(listener),
    registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) {
        mock.state.providers.set(scheme, provider);
        return new Disposable(() => mock.state.providers.delete(scheme));
    },
    async openTextDocument(uri: Uri) {
        const provider = mock.state.providers.get(uri.scheme);
        if (!provider) {
            throw new Error(`no provider for ${uri.toString()}`);
        }
        const text = provider.provideTextDocumentContent(uri);
        return { uri, getText: () => text, isUntitled: false };
    },
};

export const languages = {
    getDiagnostics(): [Uri, FakeDiagnostic[]][] {
        return mock.state.diagnostics;
    },
    onDidChangeDiagnostics: (listener: Listener<unknown>) => mock.state.events.diagnostics.event(listener),
};

export const commands = {
    async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
        mock.state.executed.push({ command, args });
        const handler = mock.state.registered.get(command);
        return handler ? handler(...args) : undefined;
    },
    registerCommand(command: string, handler: (...args: unknown[]) => unknown): Disposable {
        if (mock.state.registered.has(command)) {
            throw new Error(`command '${command}' already exists`);
        }
        mock.state.registered.set(command, handler);
        return new Disposable(() => mock.state.registered.delete(command));
    },
};
