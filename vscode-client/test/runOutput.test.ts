/** The "Verify Runs" channel: what the server streams with verify/output. */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { RunOutput, parseOutput } from '../src/runOutput';
import { activated, lastClient, mock, shutdown } from './helpers';
import { commands } from './mocks/vscode';

vi.mock('../src/launch', async (importOriginal) => {
    const original = await importOriginal<typeof import('../src/launch')>();
    return { ...original, launchProblem: vi.fn(async () => undefined) };
});

const FOLDER = 'file:///work/my%20project';

function sink() {
    const lines: string[] = [];
    return { lines, runs: new RunOutput({ appendLine: (text: string) => lines.push(text), show: () => undefined }) };
}

describe('RunOutput', () => {
    it('writes a header, the lines in order and the outcome', () => {
        const { lines, runs } = sink();
        runs.handle({ run: 1, folder: FOLDER, kind: 'begin', phase: 'full', command: 'pytest -x -q', trigger: 'save' });
        runs.handle({ run: 1, folder: FOLDER, kind: 'lines', lines: ['collected 2 items', 'F.'] });
        runs.handle({ run: 1, folder: FOLDER, kind: 'lines', lines: ['1 failed'] });
        runs.handle({
            run: 1,
            folder: FOLDER,
            kind: 'end',
            outcome: 'failed',
            exitCode: 1,
            durationMs: 1234,
            omitted: 0,
        });
        expect(lines).toEqual([
            '',
            '── verify: pytest -x -q  (save, my project) ──',
            'collected 2 items',
            'F.',
            '1 failed',
            '── failed (exit 1) in 1.23 s ──',
        ]);
    });

    it('shows the quick phase, then the whole suite, as one run', () => {
        const { lines, runs } = sink();
        const begin = { run: 3, folder: FOLDER, kind: 'begin', trigger: 'save' };
        runs.handle({ ...begin, phase: 'quick', command: 'pytest tests/test_a.py -x -q --ff' });
        runs.handle({ run: 3, folder: FOLDER, kind: 'lines', lines: ['1 passed'] });
        runs.handle({ ...begin, phase: 'full', command: 'pytest -x -q --ff' });
        expect(lines).toEqual([
            '',
            '── verify: pytest tests/test_a.py -x -q --ff  (the saved test file first, save, my project) ──',
            '1 passed',
            '── then the whole suite: pytest -x -q --ff ──',
        ]);
    });

    it('says how many lines were not shown, and no exit status for a killed run', () => {
        const { lines, runs } = sink();
        runs.handle({
            run: 2,
            folder: FOLDER,
            kind: 'end',
            outcome: 'timed-out',
            exitCode: null,
            durationMs: 60000,
            omitted: 12,
        });
        expect(lines).toEqual(['── timed-out in 60.00 s; 12 lines not shown ──']);
    });

    it('ignores what is not a verify/output payload', () => {
        const { lines, runs } = sink();
        for (const value of [
            null,
            42,
            'x',
            {},
            { run: 1, folder: FOLDER, kind: 'nope' },
            { run: 1, folder: FOLDER, kind: 'lines', lines: 'x' },
        ]) {
            runs.handle(value);
        }
        expect(lines).toEqual([]);
        expect(parseOutput({ run: '1', folder: FOLDER, kind: 'begin' })).toBeUndefined();
    });
});

describe('the extension', () => {
    let context: Awaited<ReturnType<typeof activated>> | undefined;
    afterEach(async () => {
        if (context) {
            await shutdown(context);
            context = undefined;
        }
    });

    it('asks for live output and writes what the server streams to its channel', async () => {
        context = await activated();
        expect(lastClient().clientOptions.initializationOptions).toMatchObject({ liveOutput: true });
        lastClient().notify('verify/output', { run: 7, folder: FOLDER, kind: 'lines', lines: ['hello from the run'] });
        expect(mock.state.outputLines).toContain('[line] hello from the run');
    });

    it('answers the code action "Show the run\'s output" with the channel, not the server', async () => {
        context = await activated();
        mock.state.shownChannels = [];
        await commands.executeCommand('verify.showRun', 'file:///work/project');
        expect(lastClient().executed).toEqual([]);
        expect(mock.state.shownChannels).toEqual(['Verify Runs']);
    });
});
