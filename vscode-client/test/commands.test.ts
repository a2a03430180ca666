/** The middleware that adds the active document's URI, and what palette users see. */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { withActiveDocument } from '../src/commands';
import { activated, lastClient, mock, shutdown } from './helpers';
import { TabInputWebview, Uri, commands } from './mocks/vscode';

vi.mock('../src/launch', async (importOriginal) => {
    const original = await importOriginal<typeof import('../src/launch')>();
    return { ...original, launchProblem: vi.fn(async () => undefined) };
});

let context: Awaited<ReturnType<typeof activated>> | undefined;

afterEach(async () => {
    if (context) {
        await shutdown(context);
        context = undefined;
    }
});

describe('withActiveDocument', () => {
    const file = Uri.file('/work/project/tests/test_calc.py');

    it('adds the active file when the palette passes no arguments', () => {
        expect(withActiveDocument([], file as never)).toEqual(['file:///work/project/tests/test_calc.py']);
    });

    it('keeps arguments that were given', () => {
        expect(withActiveDocument(['file:///work/other'], file as never)).toEqual(['file:///work/other']);
    });

    it('adds nothing for an untitled or virtual document, or no editor', () => {
        expect(withActiveDocument([], Uri.parse('untitled:Untitled-1') as never)).toEqual([]);
        expect(withActiveDocument([], undefined)).toEqual([]);
    });
});

describe('server commands from the palette', () => {
    it('reach the server with the active document URI through the client', async () => {
        mock.state.activeUri = Uri.file('/work/project/calc.py');
        context = await activated();
        lastClient().results.set('verify.runNow', { outcome: 'failed', exitCode: 1 });
        const result = await commands.executeCommand('verify.runNow');
        expect(lastClient().executed).toEqual([{ command: 'verify.runNow', args: ['file:///work/project/calc.py'] }]);
        // The caller still gets the record.
        expect(result).toEqual({ outcome: 'failed', exitCode: 1 });
    });

    it('are registered once, by the client, not by the extension as well', async () => {
        context = await activated();
        // The fake client throws on a duplicate registration, as VS Code does.
        expect(lastClient().executed).toEqual([]);
        expect(mock.state.registered.has('verify.showLastRun')).toBe(true);
        expect(mock.state.registered.has('verify.showOutput')).toBe(true);
        expect(mock.state.registered.has('verify.restartServer')).toBe(true);
        expect(mock.state.registered.has('verify.showRunOutput')).toBe(true);
    });

    const VIEW = 'file:///state/lsp-verify/runs/last-run-project-0123456789ab-20261201T100000000Z.md';

    it("Show Last Run opens the server's readable view of the run as a Markdown preview", async () => {
        mock.state.activeUri = Uri.file('/work/project/calc.py');
        context = await activated();
        const record = { folder: '/work/project', outcome: 'failed', trigger: 'runNow' };
        lastClient().results.set('verify.showLastRun', record);
        lastClient().showsDocument.set('verify.showRun', VIEW);
        const result = await commands.executeCommand('verify.showLastRun');
        // The caller still gets the record; the user gets the view of the same folder's run.
        expect(result).toEqual(record);
        expect(lastClient().executed).toEqual([
            { command: 'verify.showLastRun', args: ['file:///work/project/calc.py'] },
            { command: 'verify.showRun', args: ['file:///work/project/calc.py'] },
        ]);
        const previews = mock.state.executed.filter((e) => e.command === 'markdown.showPreview');
        expect(previews.map((e) => String(e.args[0]))).toEqual([VIEW]);
        // Neither as source nor as raw JSON.
        expect(lastClient().shownByDefault).toEqual([]);
        expect(mock.state.opened).toEqual([]);
    });

    it("Show Last Run closes the previews of the folder's older runs, not other folders'", async () => {
        context = await activated();
        const older = {
            label: 'Preview last-run-project-0123456789ab-20261130T090000000Z.md',
            input: new TabInputWebview('markdown.preview'),
        };
        const otherFolder = {
            label: 'Preview last-run-other-ba9876543210-20261130T090000000Z.md',
            input: new TabInputWebview('markdown.preview'),
        };
        const source = { label: 'last-run-project-0123456789ab-20261130T090000000Z.md', input: {} };
        mock.state.tabs = [older, otherFolder, source];
        lastClient().results.set('verify.showLastRun', { outcome: 'passed' });
        lastClient().showsDocument.set('verify.showRun', VIEW);
        await commands.executeCommand('verify.showLastRun');
        expect(mock.state.tabs).toEqual([otherFolder, source]);
    });

    it("closes the older previews of a folder whose name is not ASCII, and keeps this run's", async () => {
        context = await activated();
        const preview = (name: string) => ({
            label: `Preview ${name}`,
            input: new TabInputWebview('markdown.preview'),
        });
        const older = preview('last-run-café-0123456789ab-20261130T090000000Z.md');
        const current = preview('last-run-café-0123456789ab-20261201T100000000Z.md');
        mock.state.tabs = [older, current];
        lastClient().results.set('verify.showLastRun', { outcome: 'passed' });
        lastClient().showsDocument.set(
            'verify.showRun',
            'file:///state/lsp-verify/runs/last-run-caf%C3%A9-0123456789ab-20261201T100000000Z.md',
        );
        await commands.executeCommand('verify.showLastRun');
        expect(mock.state.tabs).toEqual([current]);
    });

    it("a Markdown file of the user's named like a run view opens as languageclient would", async () => {
        context = await activated();
        const own = {
            label: 'Preview last-run-notes-0123456789ab-1.md',
            input: new TabInputWebview('markdown.preview'),
        };
        mock.state.tabs = [own];
        lastClient().results.set('verify.showLastRun', { outcome: 'passed' });
        lastClient().showsDocument.set('verify.showRun', 'file:///work/project/last-run-notes-0123456789ab-2.md');
        await commands.executeCommand('verify.showLastRun');
        expect(lastClient().shownByDefault).toEqual(['file:///work/project/last-run-notes-0123456789ab-2.md']);
        expect(mock.state.tabs).toEqual([own]);
    });

    it('a document the server shows that is not a run view opens as languageclient would', async () => {
        context = await activated();
        lastClient().results.set('verify.showLastRun', { outcome: 'passed' });
        lastClient().showsDocument.set('verify.showRun', 'file:///work/project/notes.md');
        await commands.executeCommand('verify.showLastRun');
        expect(lastClient().shownByDefault).toEqual(['file:///work/project/notes.md']);
        expect(mock.state.executed.some((e) => e.command === 'markdown.showPreview')).toBe(false);
    });

    it('without Markdown support the run view opens as its source', async () => {
        context = await activated();
        mock.state.registered.set('markdown.showPreview', () => {
            throw new Error("command 'markdown.showPreview' not found");
        });
        lastClient().results.set('verify.showLastRun', { outcome: 'passed' });
        lastClient().showsDocument.set('verify.showRun', VIEW);
        await commands.executeCommand('verify.showLastRun');
        expect(lastClient().shownByDefault).toEqual([VIEW]);
    });

    it('Show Last Run before any run says so instead of opening an empty document', async () => {
        context = await activated();
        await commands.executeCommand('verify.showLastRun');
        expect(mock.state.opened).toEqual([]);
        expect(lastClient().executed.map((e) => e.command)).toEqual(['verify.showLastRun']);
        expect(mock.state.messages.map((m) => m.message)).toEqual(['verify has not run in this workspace yet.']);
    });

    it('Show Last Run for a folder that has not run says it of that folder, not the workspace', async () => {
        mock.state.activeUri = Uri.file('/work/project/calc.py');
        context = await activated();
        await commands.executeCommand('verify.showLastRun');
        expect(mock.state.messages.map((m) => m.message)).toEqual(['verify has not run in this folder yet.']);
    });

    it('Explain Plan opens the plan as JSON', async () => {
        context = await activated();
        lastClient().results.set('verify.explain', { source: 'detected', command: 'pytest -x -q', rules: [] });
        await commands.executeCommand('verify.explain');
        expect(mock.state.opened[0]?.uri).toBe('verify-json:/plan.json');
        expect(JSON.parse(mock.state.opened[0]?.text ?? '')).toMatchObject({ command: 'pytest -x -q' });
    });

    it('Run Now says why when nothing ran', async () => {
        context = await activated();
        lastClient().results.set('verify.runNow', { outcome: 'no-plan', reason: 'no rule matched' });
        await commands.executeCommand('verify.runNow');
        expect(mock.state.messages).toEqual([
            { kind: 'warning', message: 'verify did not run: no rule matched', actions: [] },
        ]);
    });

    it('the status bar item opens the last run of the folder it shows', async () => {
        context = await activated();
        lastClient().notify('verify/status', {
            folder: 'file:///work/project',
            state: 'idle',
            lastOutcome: 'passed',
            command: 'pytest -x -q',
            needsApproval: false,
        });
        const click = mock.statusItem.command;
        expect(click).toMatchObject({ command: 'verify.showLastRun', arguments: ['file:///work/project'] });
        await commands.executeCommand(click?.command ?? '', ...(click?.arguments ?? []));
        expect(lastClient().executed).toEqual([{ command: 'verify.showLastRun', args: ['file:///work/project'] }]);
    });
});
