"""A scripted model on 127.0.0.1, for driving a real coding agent: OpenAI-compatible
(`POST /v1/chat/completions`, opencode) and Anthropic's Messages API (`POST /v1/messages`,
Claude Code), each streamed as server-sent events when asked, else one JSON body.

A request that offers the agent's tools is an agent turn: it gets the next step of the
script, a list of tool calls, or a short final answer when the step is empty or the script
is done. Any other request (a session title, a summary, a token count) gets a short text.
Every agent turn is recorded with what the model was shown since its last answer (tool
results, and for Claude Code the text blocks the agent adds beside them) and when it
arrived, so a test can tell what the agent learnt from each tool call and how long it took.
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
    def __init__(self, script: list[list[ToolCall]], agent_tool: str | None = None) -> None:
        """`agent_tool`: a tool only the agent's main loop offers (Claude Code's "Edit"); by
        default any request with tools is an agent turn."""
        self.script = list(script)
        self.agent_tool = agent_tool
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
        return self._turn(_last_tool_results(body.get("messages", [])))

    def _turn(self, shown: list[str]) -> tuple[list[ToolCall], str]:
        """An agent turn: the script's next step, recorded with what the model was shown."""
        turn = Turn(time.time(), shown)
        with self._lock:
            self.turns.append(turn)
            calls = self.script.pop(0) if self.script else []
        turn.answered = calls
        turn.answered_at = time.time()
        return calls, "" if calls else "Done."

    def _anthropic(self, body: dict[str, Any]) -> tuple[list[ToolCall], str]:
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if self.agent_tool not in tools:
            with self._lock:
                self.other_requests += 1
            return [], "Verify loop"
        return self._turn(_anthropic_shown(body.get("messages", [])))

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
                if self.path.startswith("/v1/messages/count_tokens"):
                    self._send_json({"input_tokens": 10})
                    return
                if self.path.startswith("/v1/messages"):
                    calls, text = model._anthropic(body)
                    if body.get("stream"):
                        self._send_events(_anthropic_events(calls, text))
                    else:
                        self._send_json(_anthropic_message(calls, text))
                    return
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

            def _send_events(self, events: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in events:
                    line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                    self.wfile.write(line.encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _anthropic_shown(messages: list[dict[str, Any]]) -> list[str]:
    """The blocks of the user messages since the last assistant message, as text: tool
    results, and the reminders and hook feedback the agent adds beside them."""
    shown: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                texts.append(_text(block.get("content")))
            elif block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        shown[:0] = texts
    return shown


def _anthropic_content(calls: list[ToolCall], text: str) -> list[dict[str, Any]]:
    if not calls:
        return [{"type": "text", "text": text}]
    return [
        {"type": "tool_use", "id": f"toolu_{time.time_ns()}_{n}", "name": name, "input": args}
        for n, (name, args) in enumerate(calls)
    ]


def _anthropic_message(calls: list[ToolCall], text: str) -> dict[str, Any]:
    return {
        "id": f"msg_{time.time_ns()}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": _anthropic_content(calls, text),
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _anthropic_events(calls: list[ToolCall], text: str) -> list[dict[str, Any]]:
    message = _anthropic_message(calls, text)
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    ]
    for n, block in enumerate(message["content"]):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            {"type": "content_block_start", "index": n, "content_block": start},
            {"type": "content_block_delta", "index": n, "delta": delta},
            {"type": "content_block_stop", "index": n},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    return events


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
