"""The shell examples of README.md and docs/, and the answers they document.

An example is a fenced shell block that talks to the service of `./dev up`: it calls
`http://127.0.0.1:8000` with curl, or runs `./dev manage`. Other shell blocks are
instructions (set-up, deployment, long-running programs such as the agent) and are not run.

In an example, each command may be followed at once (no blank line) by comment lines: what
it answers. A trailing comment on the command's last line that starts with a status is an
answer too. An answer is written one of three ways:

- ``# 404 {"error":{"message":"Receipt not found",…}}``: the HTTP status, then the output;
- ``# 404 Receipt not found``: the HTTP status and the error envelope's message;
- ``# anything else``: the output alone (``-i`` answers, a loop's statuses, a printed key).

In outputs, ``…`` stands for any text (generated tokens, times) and whitespace is not
significant. Comments after a blank line explain the next command; they are not answers.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
SHELLS = {"sh", "bash", "shell"}
SERVICE = "http://127.0.0.1:8000"
_STATUS_JSON = re.compile(r"^(\d{3}) ([\[{].*)$", re.S)
_STATUS_MESSAGE = re.compile(r"^(\d{3}) ([A-Za-z].*)$", re.S)
_ANY = re.compile(r"…|\.\.\.")


@dataclass
class Command:
    text: str
    line: int  # in the document, from 1
    answer: list[str] = field(default_factory=list)

    @property
    def documented(self) -> str:
        return "\n".join(self.answer).strip()


@dataclass
class Expected:
    status: int | None
    output: str | None  # a glob of the whole output
    message: str | None  # or an error envelope's message


def examples(path: Path) -> list[list[Command]]:
    """The example blocks of a Markdown file, each as its commands in order."""
    blocks, language, lines, start = [], None, [], 0
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        fence = FENCE.match(line)
        if fence and language is None:
            language, lines, start = fence[1], [], number + 1
        elif line.startswith("```") and language is not None:
            text = "\n".join(lines)
            if language in SHELLS and (("curl " in text and SERVICE in text) or "./dev manage" in text):
                blocks.append(commands(lines, start))
            language = None
        elif language is not None:
            lines.append(line)
    return blocks


def commands(lines: list[str], first_line: int) -> list[Command]:
    """Split a block's lines into commands (continued lines and multi-line quotes joined),
    each with the answer that follows it."""
    found: list[Command] = []
    pending: list[str] = []
    state = _Scanner()
    answering = False
    for offset, line in enumerate(lines):
        if not pending:
            stripped = line.strip()
            if not stripped:
                answering = False
                continue
            if stripped.startswith("#"):
                if answering and found:
                    found[-1].answer.append(stripped[1:].strip())
                continue
            start = first_line + offset
        pending.append(line)
        comment = state.feed(line)
        if state.complete:
            found.append(Command("\n".join(pending), start))
            if comment is not None and re.match(r"^\d{3} ", comment):
                found[-1].answer.append(comment)
            pending, answering = [], True
    assert not pending, f"an unfinished command at line {first_line}: {pending}"
    return found


class _Scanner:
    """Follows bash's quoting across lines, enough to tell where a command ends."""

    def __init__(self):
        self.quote = None
        self.complete = True

    def feed(self, line: str) -> str | None:
        """Read one line; return its trailing comment, if any."""
        index = 0
        continued = False
        while index < len(line):
            char = line[index]
            if self.quote == "'":
                if char == "'":
                    self.quote = None
            elif self.quote == '"':
                if char == "\\":
                    index += 1
                elif char == '"':
                    self.quote = None
            elif char in "'\"":
                self.quote = char
            elif char == "\\" and index == len(line) - 1:
                continued = True
            elif char == "\\":
                index += 1
            elif char == "#" and (index == 0 or line[index - 1].isspace()):
                self.complete = True
                return line[index + 1 :].strip()
            index += 1
        self.complete = self.quote is None and not continued
        return None


def expected(command: Command, port: int) -> Expected | None:
    """What the documented answer of ``command`` says, the service's port put in."""
    text = command.documented.replace(SERVICE, f"http://127.0.0.1:{port}")
    if not text:
        return None
    if match := _STATUS_JSON.match(text):
        return Expected(int(match[1]), match[2], None)
    if match := _STATUS_MESSAGE.match(text):
        return Expected(int(match[1]), None, match[2])
    return Expected(None, text, None)


def matches(glob: str, output: str) -> bool:
    """Whether ``output`` is what ``glob`` documents: ``…`` any text, whitespace ignored."""
    pieces = [re.escape("".join(piece.split())) for piece in _ANY.split(glob)]
    return re.fullmatch(".*?".join(pieces), "".join(output.split()), re.S) is not None


def problems(command: Command, port: int, output: str, errors: str, status: int | None, code: int) -> list[str]:
    """What differs between a command's documented answer and what it did."""
    found = []
    if code != 0:
        found.append(f"exited with {code}: {errors.strip()[-500:]}")
    want = expected(command, port)
    if want is None:
        return found
    if want.status is not None and status != want.status:
        found.append(f"answered status {status}, documented {want.status}")
    if want.output is not None and not matches(want.output, output):
        found.append(f"answered\n    {output.strip()}\n  documented\n    {want.output}")
    if want.message is not None:
        try:
            message = json.loads(output)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = None
        if message != want.message:
            found.append(f"answered\n    {output.strip()}\n  documented the error {want.message!r}")
    return found
