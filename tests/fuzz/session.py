"""A fuzz session as data: what the fuzzer does to the server, in order, as JSON values, so that
a replay file holds everything needed to do it again.

A session is a dict:
- `seed`, `index`: where it came from (informative; a replay needs only the rest);
- `policy`: how the fuzzer answers each kind of request the server sends (method -> Answer);
  a method not listed gets a well-formed answer;
- `steps`: a list of steps, each a dict with one of these keys:
  - `send`: a list of parts written to the server's stdin in ONE write. A part is
    `{"json": value}` (framed with a right Content-Length), optionally with `"delta": n` (the
    Content-Length lies by n), `"headers": "..."` (the header block as given, `{n}` standing
    for the body's length), `"slice": [start, end]` (only those bytes of the framed message),
    `"ascii": false` (lone surrogates written as raw bytes, not escapes); or `{"body": text}`
    (latin-1 bytes framed as they are), or `{"raw": text}` (latin-1 bytes, no framing).
    `"event": true` on the step: a repository event, whose server CPU is bounded;
  - `sleep`: seconds;
  - `file`: a path in the workspace folder, with `text` (a string or a recipe, see
    `file_text`), or `kind` (see values.FILE_KINDS), or `delete`;
- `stop`: how the session ends: "shutdown-exit", "exit", "sigterm", "close-stdin",
  "kill-keeper".

An Answer is `{"kind": k, "value": v}`: "result" (answer v), "each" (a list of v, one per
item asked: workspace/configuration), "error" (a JSON-RPC error), "none" (never answer),
"wrong-id" (answer v under another id), "twice" (answer v twice), "late" (answer v after
`delay` seconds).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.fuzz.values import ROOT, TOKEN

Session = dict[str, Any]
Step = dict[str, Any]
STOPS = ("shutdown-exit", "exit", "sigterm", "close-stdin", "kill-keeper")


def substitute(value: Any, root_uri: str, token: str) -> Any:
    """`value` with @ROOT@ and @TOKEN@ replaced in every string (keys included)."""
    if isinstance(value, str):
        return value.replace(ROOT, root_uri).replace(TOKEN, token)
    if isinstance(value, list):
        return [substitute(v, root_uri, token) for v in value]
    if isinstance(value, dict):
        return {
            substitute(k, root_uri, token): substitute(v, root_uri, token) for k, v in value.items()
        }
    return value


def encode_body(value: Any, ascii_only: bool = True) -> bytes:
    """A JSON body as a client writes it: lone surrogates as escapes (ascii_only), or as the
    raw bytes a careless encoder writes."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    return text.encode("utf-8", errors="surrogatepass")


def part_bytes(part: dict[str, Any], root_uri: str, token: str) -> bytes:
    """The bytes one part of a `send` step writes."""
    if "raw" in part:
        return str(part["raw"]).encode("latin-1", errors="replace")
    if "body" in part:
        body = str(part["body"]).encode("latin-1", errors="replace")
    else:
        body = encode_body(substitute(part["json"], root_uri, token), part.get("ascii", True))
    length = len(body) + int(part.get("delta", 0))
    headers = part.get("headers")
    if headers is None:
        head = b"Content-Length: %d\r\n\r\n" % length
    else:
        head = str(headers).replace("{n}", str(length)).encode("latin-1", errors="replace")
    data = head + body
    cut = part.get("slice")
    if cut is not None:
        start, end = cut
        data = data[min(int(start), len(data)) : None if end is None else int(end)]
    return data


def step_requests(step: Step) -> list[dict[str, Any]]:
    """The requests a send step makes (JSON-RPC objects with a method and an id that is a
    string or an integer): those the server must answer. A part cut with `slice` counts in
    the step that writes its end."""
    found = []
    for part in step.get("send", []):
        value = part.get("json")
        cut = part.get("slice")
        if cut is not None and cut[1] is not None:
            continue
        if is_request(value):
            found.append(value)
    return found


def is_request(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("method"), str)
        and "result" not in value
        and "error" not in value
        and type(value.get("id")) in (int, str)
    )


def file_text(text: Any) -> str:
    """A file's text: a string, or a recipe {"prefix", "repeat", "times", "suffix"} where
    `{n}` in `repeat` is the repetition's number."""
    if isinstance(text, str):
        return text
    repeat = str(text.get("repeat", ""))
    times = int(text.get("times", 1))
    if "{n}" in repeat:
        middle = "".join(repeat.replace("{n}", str(n)) for n in range(times))
    else:
        middle = repeat * times
    return str(text.get("prefix", "")) + middle + str(text.get("suffix", ""))


def apply_file(root: Path, step: Step) -> None:
    """Make the repository file a `file` step describes (replacing what was there)."""
    rel = str(step["file"])
    if os.path.isabs(rel) or ".." in rel.split("/"):
        return  # never outside the workspace folder
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()  # a FIFO
    if step.get("delete"):
        return
    kind = step.get("kind")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "self-symlink":
        path.symlink_to(path.name)
    elif kind == "dir-loop":
        path.mkdir()
        (path / "loop").symlink_to("..")
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling":
        path.symlink_to("nowhere/at/all")
    else:
        data = file_text(step.get("text", "")).encode("utf-8", errors="surrogatepass")
        path.write_bytes(data)


def save_replay(session: Session, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(session, indent=1, ensure_ascii=True) + "\n")
    return path


def load_replay(path: Path) -> Session:
    session: Session = json.loads(path.read_text())
    if session.get("stop") not in STOPS or not isinstance(session.get("steps"), list):
        raise ValueError(f"{path}: not a fuzz replay (stop, steps)")
    session.setdefault("policy", {})
    return session
