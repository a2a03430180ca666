"""The store forgets a document once it has no diagnostics and is not open, and every pull
is still answered right: a client holding any result id it was ever given gets "unchanged"
only when what it holds is what the store would send."""

from __future__ import annotations

from lsprotocol import types

from lsp_verify.results.diagnostics import CONFIG, VERIFY, Diagnostics, Entry

FOLDER = "file:///work/project"


def entry(message: str) -> Entry:
    at = types.Position(line=0, character=0)
    return Entry(types.Diagnostic(range=types.Range(start=at, end=at), message=message), "x = 1")


class Client:
    """What a client that pulls holds per document: the result id and the items."""

    def __init__(self, store: Diagnostics) -> None:
        self.store = store
        self.held: dict[str, tuple[str, list[types.Diagnostic]]] = {}

    def pull(self, uri: str) -> list[types.Diagnostic]:
        """The document's diagnostics as this client shows them after a pull, answered as
        handlers.pull_document answers it."""
        rid = self.store.result_id(uri)
        previous = self.held.get(uri)
        if previous is None or previous[0] != rid:
            self.held[uri] = (rid, self.store.union(uri))
        return self.held[uri][1]


def everything(uri: str) -> bool:
    return True


def test_a_closed_document_whose_diagnostics_were_cleared_is_forgotten() -> None:
    open_documents = {f"{FOLDER}/open.py"}
    store = Diagnostics(lambda uri: None, open_documents.__contains__)
    uris = [f"{FOLDER}/f{n}.py" for n in range(100)] + sorted(open_documents)
    store.replace_verify({uri: [entry("failed")] for uri in uris}, everything)
    store.set_config(uris[0], [("a bad key", 3)])
    assert store.documents() == set(uris)
    store.replace_verify({}, everything)
    store.set_config(uris[0], [])
    # The open document keeps its result id, so its client's next pull is "unchanged".
    assert store.documents() == open_documents
    open_documents.clear()
    store.release(f"{FOLDER}/open.py")  # didClose
    assert store.documents() == set()


def test_a_document_with_diagnostics_or_open_is_kept() -> None:
    open_documents = {f"{FOLDER}/open.py"}
    store = Diagnostics(lambda uri: None, open_documents.__contains__)
    store.replace_verify({f"{FOLDER}/a.py": [entry("failed")]}, everything)
    store.set_config(f"{FOLDER}/open.py", [("a bad key", 3)])
    store.set_config(f"{FOLDER}/open.py", [])
    store.release(f"{FOLDER}/a.py")  # closed, but it still has a diagnostic
    assert store.documents() == {f"{FOLDER}/a.py", f"{FOLDER}/open.py"}
    assert store.result_id(f"{FOLDER}/open.py") != "0"


def test_pulls_stay_right_across_a_document_forgotten_and_back() -> None:
    store = Diagnostics(lambda uri: None)
    uri = f"{FOLDER}/a.py"
    late, eager, fresh = Client(store), Client(store), Client(store)
    assert late.pull(uri) == []  # "0": the empty report
    ids = {store.result_id(uri)}
    for round_ in range(5):
        found = [entry(f"failed in round {round_}")]
        store.replace_verify({uri: found}, everything)
        failed_id = store.result_id(uri)
        ids.add(failed_id)
        assert eager.pull(uri) == [e.diagnostic for e in found]
        assert late.pull(uri) == [e.diagnostic for e in found]
        store.replace_verify({}, everything)
        assert store.documents() == set()
        assert store.result_id(uri) == "0"
        # Each client, whatever it holds, now shows what the store has: nothing.
        assert eager.pull(uri) == [] and late.pull(uri) == [] and fresh.pull(uri) == []
        # A client that missed the clearing holds the id of this round's failure: it
        # never equals the next round's, so it is sent the next round's items.
        late.held[uri] = (failed_id, [e.diagnostic for e in found])
    assert len(ids) == 6  # "0" and one new id a round: none ever given twice


def test_a_config_layer_alone_keeps_the_document() -> None:
    store = Diagnostics(lambda uri: None)
    uri = f"{FOLDER}/.lsp-verify.toml"
    store.set_config(uri, [("a bad key", 3)])
    store.replace_verify({}, everything)
    assert store.entries(uri, CONFIG) and not store.entries(uri, VERIFY)
    assert store.documents() == {uri}
