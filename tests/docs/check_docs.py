#!/usr/bin/env python3
"""The documentation as a reader follows it: README.md, docs/*.md and bench/README.md.

- Every relative link ([text](path) or [text](path#anchor)) names a file or folder that exists,
  and an anchor a heading of the file it points into (GitHub's anchors: lower case, punctuation
  dropped, spaces as hyphens).
- Every `swr-tune` command line in a command block (``` fences, and lines indented by four spaces
  that start with a command) uses a subcommand and options that exist: each is compared with what
  `swr-tune [SUBCOMMAND] --help` lists.

    tests/docs/check_docs.py SOURCE_DIR SWR_TUNE   (CTest docs_links; exit 1 on a finding, 2 on
                                                    bad arguments)
"""
import os
import re
import shlex
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
OPTION = re.compile(r"^\s+(?:-[A-Za-z],)?(--[a-z0-9][a-z0-9-]*)", re.M)


def documents(source):
    found = [os.path.join(source, "README.md"), os.path.join(source, "bench", "README.md")]
    docs = os.path.join(source, "docs")
    for root, _, files in os.walk(docs):
        found += [os.path.join(root, name) for name in sorted(files) if name.endswith(".md")]
    return [path for path in found if os.path.isfile(path)]


def anchor_of(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    found, fenced = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.add(anchor_of(line.lstrip("#")))
    return found


def outside_code(text):
    """The text without fenced blocks and inline code spans, where links are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def check_links(path, source):
    problems = []
    text = outside_code(open(path, encoding="utf-8").read())
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("//"):
            continue  # https:, mailto: ...: not checked here
        file_part, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part \
            else path
        where = os.path.relpath(path, source)
        if not os.path.exists(resolved):
            problems.append(f"{where}: link to {target}: {os.path.relpath(resolved, source)} "
                            "does not exist")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            problems.append(f"{where}: link to {target}: no heading with anchor #{anchor} in "
                            f"{os.path.relpath(resolved, source)}")
    return problems


def command_lines(path):
    """(line number, command text) of each swr-tune command in a command block; continuation
    lines (ending in a backslash) are joined."""
    lines = open(path, encoding="utf-8").read().split("\n")
    commands, fenced, language = [], False, ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```"):
            fenced = not fenced
            language = line[3:].strip()
            index += 1
            continue
        in_block = (fenced and language in ("", "sh", "bash", "console", "shell")) or \
            (not fenced and line.startswith("    ") and not line.strip().startswith(("-", "|")))
        number = index + 1
        joined = line
        while joined.endswith("\\") and index + 1 < len(lines):
            index += 1
            joined = joined[:-1] + " " + lines[index].strip()
        index += 1
        if in_block and re.search(r"(^|[\s/(=$])swr-tune(\s|$)", joined):
            commands.append((number, joined))
    return commands


def swr_tune_calls(command):
    """The argument lists of each swr-tune call in a shell line: swr-tune (any path to it) where a
    command starts (the line's start after a `$ ` prompt and VAR=value assignments, or after |,
    &&, ||, ; or `(`), up to the end of that command."""
    command = re.sub(r"(^|\s)#.*$", "", command)  # a comment
    command = re.sub(r"([|;()])", r" \1 ", command.replace("$(", " ( "))
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    calls, current, at_start = [], None, True
    for word in words:
        if word in ("|", "||", "&&", ";", "(", ")", "&"):
            current, at_start = None, True
            continue
        if word in (">", ">>", "2>", "<", "2>&1"):
            current, at_start = None, False
            continue
        if at_start and (word == "$" or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word)):
            continue
        if at_start and re.search(r"(^|/)swr-tune$", word):
            current = []
            calls.append(current)
        elif current is not None:
            current.append(word)
        at_start = False
    return calls


class Help:
    def __init__(self, swr_tune):
        self.swr_tune = swr_tune
        self.cache = {}
        top = self.text([])
        section = top.split("Subcommands:", 1)[1] if "Subcommands:" in top else ""
        self.subcommands = set(re.findall(r"^  ([a-z][a-z0-9-]*)\s{2,}", section, re.M))

    def text(self, subcommand):
        key = tuple(subcommand)
        if key not in self.cache:
            result = subprocess.run([self.swr_tune] + subcommand + ["--help"], capture_output=True,
                                    text=True, timeout=60)
            if result.returncode != 0:
                raise RuntimeError(f"swr-tune {' '.join(subcommand)} --help failed: "
                                   f"{result.stderr.strip()}")
            self.cache[key] = result.stdout
        return self.cache[key]

    def options(self, subcommand):
        return set(OPTION.findall(self.text(subcommand)))


def check_commands(path, source, help_):
    """Problems of the swr-tune calls in the file's command blocks, and how many calls there were."""
    problems, calls = [], 0
    where = os.path.relpath(path, source)
    for number, command in command_lines(path):
        for arguments in swr_tune_calls(command):
            calls += 1
            subcommand = []
            if arguments and not arguments[0].startswith("-"):
                if arguments[0] not in help_.subcommands:
                    if re.fullmatch(r"[a-z][a-z0-9-]*", arguments[0]):
                        problems.append(f"{where}:{number}: swr-tune {arguments[0]}: no such "
                                        f"subcommand (swr-tune --help lists "
                                        f"{', '.join(sorted(help_.subcommands))})")
                    continue  # a placeholder such as SUBCOMMAND or [...]
                subcommand = [arguments[0]]
            known = help_.options(subcommand)
            for word in arguments[len(subcommand):]:
                option = word.split("=", 1)[0]
                if re.fullmatch(r"--[a-z0-9][a-z0-9-]*", option) and option not in known:
                    name = " ".join(["swr-tune"] + subcommand)
                    problems.append(f"{where}:{number}: {name} {option}: no such option "
                                    f"(`{name} --help`)")
    return problems, calls


def main(argv):
    if len(argv) != 3 or not os.path.isdir(argv[1]) or not os.access(argv[2], os.X_OK):
        print("usage: check_docs.py SOURCE_DIR SWR_TUNE (a directory and an executable)",
              file=sys.stderr)
        return 2
    source, swr_tune = os.path.abspath(argv[1]), argv[2]
    help_ = Help(swr_tune)
    problems, count, calls = [], 0, 0
    for path in documents(source):
        count += 1
        problems += check_links(path, source)
        found, called = check_commands(path, source, help_)
        problems += found
        calls += called
    for problem in problems:
        print(problem)
    print(f"{count} documents, {calls} swr-tune command lines checked: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
