/**
 * The status bar item: what the server's `verify/status` notifications say, at a glance, so that
 * silence never looks like success.
 */
export const STATUS_NOTIFICATION = 'verify/status';

export const RUN_STATES = ['idle', 'waiting', 'running', 'queued'] as const;
export const OUTCOMES = ['passed', 'failed', 'timed-out', 'cancelled', 'skipped', 'declined', 'no-plan'] as const;
export type RunState = (typeof RUN_STATES)[number];
export type Outcome = (typeof OUTCOMES)[number];

export interface FolderStatus {
    folder: string;
    state: RunState;
    lastOutcome: Outcome | null;
    command: string | null;
    needsApproval: boolean;
}

/** A `verify/status` payload, or undefined when it is not one (a newer server, a bug). */
export function parseStatus(value: unknown): FolderStatus | undefined {
    if (typeof value !== 'object' || value === null) {
        return undefined;
    }
    const raw = value as Record<string, unknown>;
    const { folder, state, lastOutcome, command, needsApproval } = raw;
    if (typeof folder !== 'string' || !isOneOf(RUN_STATES, state)) {
        return undefined;
    }
    return {
        folder,
        state,
        lastOutcome: isOneOf(OUTCOMES, lastOutcome) ? lastOutcome : null,
        command: typeof command === 'string' ? command : null,
        needsApproval: needsApproval === true,
    };
}

function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
    return typeof value === 'string' && (values as readonly string[]).includes(value);
}

export type ServerState = 'starting' | 'running' | 'stopped';

export interface StatusInput {
    server: ServerState;
    /** Why the server is not running, when it could not start. */
    serverProblem?: string;
    status?: FolderStatus;
    /** The folder's name, for the tooltip. */
    folderName?: string;
    workspaceTrusted: boolean;
    /** verify diagnostics currently shown for the folder. */
    problems: number;
}

export interface StatusView {
    text: string;
    tooltip: string;
    background?: 'error' | 'warning';
    command: string;
    arguments: unknown[];
}

const SHOW_LAST_RUN = 'verify.showLastRun';
const SHOW_OUTPUT = 'verify.showOutput';
/** The Verify Runs channel, where the running command's output streams. */
const SHOW_RUN_OUTPUT = 'verify.showRunOutput';
const RESTRICTED =
    'This workspace is in Restricted Mode: verify runs no command from the repository on save. ' +
    'Trust the workspace to let it run; "Verify: Run Now" still asks first.';

export function statusView(input: StatusInput): StatusView {
    if (input.server !== 'running') {
        return serverView(input);
    }
    const status = input.status;
    const lastRun = { command: SHOW_LAST_RUN, arguments: status ? [status.folder] : [] };
    const about = describe(status, input.folderName);
    if (status === undefined) {
        if (!input.workspaceTrusted) {
            return restrictedView(lastRun, '');
        }
        return { text: '$(circle-outline) verify', tooltip: 'verify: waiting for the server', ...lastRun };
    }
    if (status.state === 'waiting') {
        return {
            text: '$(question) verify: waiting for approval',
            tooltip: `Waiting for your answer before running ${about}.`,
            background: 'warning',
            ...lastRun,
        };
    }
    if (status.state !== 'idle') {
        const queued = status.state === 'queued' ? ' (+1 queued)' : '';
        return {
            text: `$(sync~spin) verify: running${queued}`,
            tooltip: `Running ${about}. Click to watch its output.`,
            command: SHOW_RUN_OUTPUT,
            arguments: [],
        };
    }
    const click = 'Click to show the last run.';
    switch (status.lastOutcome) {
        case 'passed':
            return { text: '$(check) verify: passed', tooltip: `Passed: ${about}. ${click}`, ...lastRun };
        case 'failed': {
            const count = input.problems > 0 ? ` (${input.problems})` : '';
            return {
                text: `$(error) verify: failed${count}`,
                tooltip: `Failed: ${about}; ${plural(input.problems, 'problem')} in the Problems panel. ${click}`,
                background: 'error',
                ...lastRun,
            };
        }
        case 'timed-out':
            return {
                text: '$(error) verify: timed out',
                tooltip: `Timed out and killed: ${about} (verify.timeoutMs). ${click}`,
                background: 'error',
                ...lastRun,
            };
        case 'cancelled':
            return { text: '$(circle-slash) verify: cancelled', tooltip: `Cancelled: ${about}. ${click}`, ...lastRun };
        case 'skipped':
            return {
                text: '$(debug-step-over) verify: skipped',
                tooltip: `Skipped: the plan's manifest changed since it was made; the next save plans again. ${click}`,
                ...lastRun,
            };
        case 'no-plan':
            return {
                text: '$(circle-slash) verify: no plan',
                tooltip:
                    'No verification command was found for this folder: "Verify: Explain Plan" says what was looked at.',
                ...lastRun,
            };
        case 'declined':
            if (!input.workspaceTrusted) {
                return restrictedView(lastRun, 'Nothing ran: ');
            }
            return {
                text: '$(shield) verify: needs approval',
                tooltip:
                    `Not run: ${about} comes from the repository and was not approved. ` +
                    `Save again to be asked, or run "Verify: Approve Plan". ${click}`,
                background: 'warning',
                ...lastRun,
            };
        case null:
            if (!input.workspaceTrusted) {
                return restrictedView(lastRun, '');
            }
            return { text: '$(circle-outline) verify: not run yet', tooltip: `Not run yet: ${about}`, ...lastRun };
    }
}

function restrictedView(lastRun: { command: string; arguments: unknown[] }, prefix: string): StatusView {
    return {
        text: '$(shield) verify: Restricted Mode',
        tooltip: prefix + RESTRICTED,
        background: 'warning',
        ...lastRun,
    };
}

function serverView(input: StatusInput): StatusView {
    const output = { command: SHOW_OUTPUT, arguments: [] };
    if (input.server === 'starting') {
        return { text: '$(sync~spin) verify: starting', tooltip: 'Starting the verify server', ...output };
    }
    return {
        text: '$(error) verify: server not running',
        tooltip: input.serverProblem ?? 'The verify server is not running: "Verify: Restart Server" starts it.',
        background: 'error',
        ...output,
    };
}

function describe(status: FolderStatus | undefined, folderName: string | undefined): string {
    const command = status?.command ? `\`${status.command}\`` : 'the verify command';
    return folderName ? `${command} in ${folderName}` : command;
}

function plural(count: number, word: string): string {
    return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * The folder the status bar speaks for: the one holding the active document (innermost),
 * else the one that reported most recently.
 */
export function pickFolder(
    statuses: ReadonlyMap<string, FolderStatus>,
    activeUri: string | undefined,
    lastReported: string | undefined,
): FolderStatus | undefined {
    if (activeUri !== undefined) {
        let best: FolderStatus | undefined;
        for (const status of statuses.values()) {
            if (isInside(status.folder, activeUri) && (!best || status.folder.length > best.folder.length)) {
                best = status;
            }
        }
        if (best) {
            return best;
        }
    }
    return (lastReported !== undefined ? statuses.get(lastReported) : undefined) ?? statuses.values().next().value;
}

/** Whether `uri` is `folder` or inside it; both as URI strings. */
export function isInside(folder: string, uri: string): boolean {
    const base = folder.endsWith('/') ? folder : `${folder}/`;
    return uri === folder || uri.startsWith(base);
}
