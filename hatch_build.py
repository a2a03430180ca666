"""The long description for the package page: README.md with its relative links made absolute.

On GitHub the README's links (`docs/editors.md`, `#trust`) resolve against the repository; on
the package index they would be dead. Rather than writing the project's home into every link,
this build hook rewrites them against `project.urls.Homepage`, at the release's tag, so the
page links to the documents of the version it describes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

# [text](target "title") and ![alt](target): the target is the first word inside the brackets.
_INLINE = re.compile(r"(!?)(\[[^\]]*\])\(([^)\s]+)")
# [label]: target
_REFERENCE = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(\S+)", re.MULTILINE)
_ABSOLUTE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def absolute(target: str, home: str, ref: str, image: bool = False) -> str:
    """`target` as a link that works off GitHub: an anchor goes to the repository's front
    page, a path to the file at `ref` (an image to its raw bytes); absolute ones are kept."""
    if _ABSOLUTE.match(target) or target.startswith("//"):
        return target
    if target.startswith("#"):
        return home + target
    kind = "raw" if image else "blob"
    path = target[2:] if target.startswith("./") else target
    return f"{home}/{kind}/{ref}/{path}"


def absolute_links(text: str, home: str, ref: str) -> str:
    """Markdown `text` with every relative link and image made absolute (see `absolute`)."""
    home = home.rstrip("/")

    def inline(match: re.Match[str]) -> str:
        bang, label, target = match.groups()
        return f"{bang}{label}({absolute(target, home, ref, image=bang == '!')}"

    def reference(match: re.Match[str]) -> str:
        return match.group(1) + absolute(match.group(2), home, ref)

    return _REFERENCE.sub(reference, _INLINE.sub(inline, text))


class ReadmeHook(MetadataHookInterface):
    PLUGIN_NAME = "custom"

    def update(self, metadata: dict[str, Any]) -> None:
        text = (Path(self.root) / "README.md").read_text(encoding="utf-8")
        home = metadata["urls"]["Homepage"]
        ref = "v" + metadata["version"]  # the release workflow tags v<version>
        metadata["readme"] = {
            "content-type": "text/markdown",
            "text": absolute_links(text, home, ref),
        }
