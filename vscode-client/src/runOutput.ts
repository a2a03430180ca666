/**
 * The "Verify Runs" output channel: each run's output as the server streams it
 * (`verify/output`, asked for with the `liveOutput` initialization option), a header line per
 * run and its outcome at the end.
 */
export const OUTPUT_NOTIFICATION = 'verify/output';

export interface Sink {
    appendLine(text: string): void;
    show(preserveFocus?: boolean): void;
}

type Message =
    | { kind: 'begin'; run: number; folder: string; phase: string; command: string; trigger: string }
    | { kind: 'lines'; run: number; folder: string; lines: string[] }
    | {
          kind: 'end';
          run: number;
          folder: string;
          outcome: string;
          exitCode: number | null;
          durationMs: number;
          omitted: number;
      };

/** A `verify/output` payload, or undefined when it is not one. */
export function parseOutput(value: unknown): Message | undefined {
    if (typeof value !== 'object' || value === null) {
        return undefined;
    }
    const raw = value as Record<string, unknown>;
    if (typeof raw.run !== 'number' || typeof raw.folder !== 'string') {
        return undefined;
    }
    const { run, folder } = raw;
    switch (raw.kind) {
        case 'begin':
            return {
                kind: 'begin',
                run,
                folder,
                phase: String(raw.phase ?? 'full'),
                command: String(raw.command ?? ''),
                trigger: String(raw.trigger ?? ''),
            };
        case 'lines':
            return Array.isArray(raw.lines)
                ? { kind: 'lines', run, folder, lines: raw.lines.map((line) => String(line)) }
                : undefined;
        case 'end':
            return {
                kind: 'end',
                run,
                folder,
                outcome: String(raw.outcome ?? ''),
                exitCode: typeof raw.exitCode === 'number' ? raw.exitCode : null,
                durationMs: typeof raw.durationMs === 'number' ? raw.durationMs : 0,
                omitted: typeof raw.omitted === 'number' ? raw.omitted : 0,
            };
        default:
            return undefined;
    }
}

function folderName(uri: string): string {
    const trimmed = uri.replace(/\/+$/, '');
    return decodeURIComponent(trimmed.slice(trimmed.lastIndexOf('/') + 1)) || uri;
}

/** Writes what the server streams to `sink`, one block per run. */
export class RunOutput {
    /** The run whose quick phase was shown last: its full phase is a continuation. */
    private quickRun: number | undefined;

    constructor(private readonly sink: Sink) {}

    show(): void {
        this.sink.show(true);
    }

    handle(value: unknown): void {
        const message = parseOutput(value);
        if (message === undefined) {
            return;
        }
        switch (message.kind) {
            case 'begin': {
                if (message.phase !== 'quick' && this.quickRun === message.run) {
                    // The whole suite after the saved file's quick phase: same run, no blank line.
                    this.sink.appendLine(`── then the whole suite: ${message.command} ──`);
                    return;
                }
                this.quickRun = message.phase === 'quick' ? message.run : undefined;
                const phase = message.phase === 'quick' ? 'the saved test file first, ' : '';
                this.sink.appendLine('');
                this.sink.appendLine(
                    `── verify: ${message.command}  (${phase}${message.trigger}, ${folderName(message.folder)}) ──`,
                );
                return;
            }
            case 'lines':
                for (const line of message.lines) {
                    this.sink.appendLine(line);
                }
                return;
            case 'end': {
                const exit = message.exitCode === null ? '' : ` (exit ${message.exitCode})`;
                const seconds = (message.durationMs / 1000).toFixed(2);
                const omitted = message.omitted > 0 ? `; ${message.omitted} lines not shown` : '';
                this.sink.appendLine(`── ${message.outcome}${exit} in ${seconds} s${omitted} ──`);
                return;
            }
        }
    }
}
