"""A scripted OpenAI-compatible model on 127.0.0.1, for driving a real coding agent.

It answers `POST /v1/chat/completions` (streamed as server-sent events when asked, else one
JSON body). A request that offers tools is an agent turn: it gets the next step of the
script, a list of tool calls or, when the script is done, a short final answer. A request
without tools (a session title, a summary) gets a short text. Every agent turn is recorded
with what the model was shown (the last tool results) and when it arrived, so a test can
tell what the agent learnt from each tool call and how long the call took.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ToolCall = tuple[str, dict[str, Any]]  # (tool name, arguments)


@dataclass
class Turn:
    """One agent request: when it came, the tool results it carried, what it was answered."""

    at: float  # time.time()
    tool_results: list[str]
    answered: list[ToolCall] = field(default_factory=list)
    answered_at: float = 0.0


class FakeModel:
    def __init__(self, script: list[list[ToolCall]]) -> None:
        self.script = list(script)
        self.turns: list[Turn] = []
        self.other_requests = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _answer(self, body: dict[str, Any]) -> tuple[list[ToolCall], str]:
        """The tool calls (or the text) for one request."""
        if not body.get("tools"):
            with self._lock:
                self.other_requests += 1
            return [], "Verify loop"
        turn = Turn(time.time(), _last_tool_results(body.get("messages", [])))
        with self._lock:
            self.turns.append(turn)
            calls = self.script.pop(0) if self.script else []
        turn.answered = calls
        turn.answered_at = time.time()
        return calls, "" if calls else "Done."

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # /v1/models, should the agent ask
                self._send_json({"object": "list", "data": [{"id": "m1", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                calls, text = model._answer(body)
                if body.get("stream"):
                    self._send_stream(calls, text)
                else:
                    self._send_json(_completion(calls, text))

            def _send_json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, calls: list[ToolCall], text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _chunks(calls, text):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _last_tool_results(messages: list[dict[str, Any]]) -> list[str]:
    """The tool results since the last assistant message: what the last calls returned."""
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "tool":
            results.insert(0, _text(message.get("content")))
        elif message.get("role") == "assistant":
            break
    return results


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


def _tool_calls(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [
        {
            "index": n,
            "id": f"call_{time.time_ns()}_{n}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for n, (name, args) in enumerate(calls)
    ]


def _chunks(calls: list[ToolCall], text: str) -> list[dict[str, Any]]:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "m1"}
    delta: dict[str, Any] = {"role": "assistant"}
    if calls:
        delta["tool_calls"] = _tool_calls(calls)
    else:
        delta["content"] = text
    return [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {
            **head,
            "choices": [
                {"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    ]


def _completion(calls: list[ToolCall], text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else text}
    if calls:
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != "index"} for call in _tool_calls(calls)
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m1",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
