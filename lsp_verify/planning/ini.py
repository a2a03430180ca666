"""INI files (setup.cfg, tox.ini, pytest.ini) as Python's configparser reads them, at a cost
linear in the file and bounded.

configparser is no bound on a file a repository ships (SPEC section 7): it rebuilds its
error message for every bad line (50 000 bad lines: 8.2 s), and its option expression
backtracks over a run of blanks (one line of 20 000 spaces: 2.8 s). This is its reading with
the settings setuptools, tox and pytest use (ConfigParser(interpolation=None): `=` and `:`
delimiters, full-line `#` and `;` comments, no inline comments, empty lines kept in values,
a DEFAULT section, option names in lower case, values joined and stripped), done with
string methods in one pass that stops at the first error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lsp_verify.config.project_file import TooCostly

DEFAULT = "DEFAULT"
MAX_LINES = 20_000  # past that, a file is not read: no setup.cfg or tox.ini is that long


class IniError(ValueError):
    """The first thing configparser would reject, and its line."""

    def __init__(self, lineno: int, problem: str) -> None:
        super().__init__(f"line {lineno}: {problem}")
        self.lineno = lineno


@dataclass
class Ini:
    """Sections in file order (DEFAULT apart), each option's value as configparser gives it."""

    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)

    def get(self, section: str, option: str) -> str | None:
        """The value configparser's get() gives, or None where has_option() says no."""
        found = self.sections.get(section, {}).get(option)
        return found if found is not None else self.defaults.get(option)


def read_ini(text: str, strict: bool = True) -> Ini:
    """`text` read as configparser reads it; IniError at the first problem it would raise
    for (strict: a section or an option twice is one, as with ConfigParser(strict=True)),
    TooCostly past MAX_LINES."""
    if text.count("\n") >= MAX_LINES:
        raise TooCostly(f"more than {MAX_LINES} lines")
    ini = Ini()
    values: dict[str, list[str]] | None = None  # the current section's, as lists of lines
    sections: dict[str, dict[str, list[str]]] = {}
    defaults: dict[str, list[str]] = {}
    seen: set[object] = set()  # configparser's elements_added
    section = ""
    option = ""
    indent = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            if not stripped and values is not None and option:
                values[option].append("")  # an empty line inside a value
            continue
        current = len(line) - len(line.lstrip())
        if values is not None and option and current > indent:
            values[option].append(stripped)  # a continuation line
            continue
        indent = current
        if stripped[0] == "[" and stripped.rfind("]") >= 2:
            section = stripped[1 : stripped.rfind("]")]
            if section in sections:
                if strict and section in seen:
                    raise IniError(lineno, f"section {section!r} already exists")
                values = sections[section]
            elif section == DEFAULT:
                values = defaults
            else:
                values = sections[section] = {}
            seen.add(section)
            option = ""
            continue
        if values is None:
            raise IniError(lineno, "text before the first [section] header")
        delimiter = stripped.find("=")
        colon = stripped.find(":", 0, delimiter) if delimiter >= 0 else stripped.find(":")
        if colon >= 0:
            delimiter = colon
        name = stripped[:delimiter].rstrip().lower() if delimiter > 0 else ""
        if not name:
            raise IniError(lineno, f"cannot parse {_shown(line)}")
        if strict and (section, name) in seen:
            raise IniError(lineno, f"option {name!r} in section {section!r} already exists")
        seen.add((section, name))
        option = name
        values[option] = [stripped[delimiter + 1 :].strip()]
    for name, options in sections.items():
        ini.sections[name] = {k: "\n".join(v).rstrip() for k, v in options.items()}
    ini.defaults = {k: "\n".join(v).rstrip() for k, v in defaults.items()}
    return ini


def _shown(line: str) -> str:
    return repr(line) if len(line) <= 80 else repr(line[:77]) + "..."
