#!/usr/bin/env python3
"""docs/cli.md against the binary's `--help`: every command has a section, every option a
command's `--help` lists appears in that command's section, and every option a section's heading
shows exists in that command's `--help`; and README's worked example prints what README shows.

Usage: cli_doc_test.py MIGSCOPE_BINARY SOURCE_DIR.
"""
import re
import subprocess
import sys
import unittest

MIGSCOPE = SOURCE = None
DOC = ""
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def help_text(*command):
    done = subprocess.run([MIGSCOPE, *command, "--help"], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"migscope {' '.join(command)} --help: exit {done.returncode}")
    return done.stdout


def subcommands(text):
    """The names under 'Subcommands:' in a CLI11 help text."""
    if "Subcommands:" not in text:
        return []
    block = text.split("Subcommands:", 1)[1]
    return re.findall(r"^  ([a-z][a-z-]*)\s", block, re.MULTILINE)


def option_names(text):
    """{long option: its short form or None} of the lines under 'Options:' of a help text."""
    if "Options:" not in text:
        return {}
    block = text.split("Options:", 1)[1].split("Subcommands:", 1)[0]
    found = re.findall(r"^  (?:(-\w),)?(--[a-z][a-z0-9-]*)", block, re.MULTILINE)
    return {long: short or None for short, long in found if long != "--help"}


def options(text):
    return set(option_names(text))


def sections(command):
    """(headings, bodies) of docs/cli.md's '### `migscope COMMAND …`' sections, concatenated."""
    headings, bodies = [], []
    parts = re.split(r"^### ", DOC, flags=re.MULTILINE)[1:]
    for part in parts:
        heading, _, body = part.partition("\n")
        body = re.split(r"^## ", body, flags=re.MULTILINE)[0]
        if re.match(r"`migscope " + re.escape(command) + r"[ `]", heading):
            headings.append(heading)
            bodies.append(body)
    return "\n".join(headings), "\n".join(bodies)


class CliDoc(unittest.TestCase):
    def commands(self):
        """Every command and subcommand path: ['gpus'], ['results', 'list'], …"""
        out = []
        for name in subcommands(help_text()):
            out.append([name])
            out += [[name, sub] for sub in subcommands(help_text(name))]
        return out

    def test_every_command_has_a_section(self):
        for name in subcommands(help_text()):
            heading, _ = sections(name)
            self.assertTrue(heading, f"docs/cli.md has no '### `migscope {name} …`' section")

    def test_every_option_of_help_is_documented(self):
        missing = []
        for path in self.commands():
            heading, body = sections(path[0])
            text = heading + "\n" + body
            documented = set(OPTION.findall(text))
            for long, short in option_names(help_text(*path)).items():
                named_short = short and re.search(r"(?<![\w-])" + short + r"[ `,]", text)
                if long not in documented and not named_short:
                    missing.append(f"{' '.join(path)} {long}")
        self.assertFalse(missing, "options in --help that their command's docs/cli.md section "
                                  f"never names: {missing}")

    def test_every_option_of_a_heading_exists(self):
        for name in subcommands(help_text()):
            heading, _ = sections(name)
            known = options(help_text(name))
            for sub in subcommands(help_text(name)):
                known |= options(help_text(name, sub))
            unknown = set(OPTION.findall(heading)) - known - {"--help"}
            self.assertFalse(unknown, f"docs/cli.md's heading of `migscope {name}` shows options "
                                      f"its --help does not have: {sorted(unknown)}")

    def test_the_readmes_example_is_what_plan_prints(self):
        # README's worked example: its command, run here, prints its table rows as shown and
        # its recommendation (the prose lines are wrapped there; the table is not).
        with open(f"{SOURCE}/README.md", encoding="utf-8") as f:
            readme = f.read()
        example = readme.split("## An example", 1)[1]
        blocks = re.findall(r"```(?:sh)?\n(.*?)```", example, re.DOTALL)
        command, shown = blocks[0], blocks[1]
        argv = command.replace("\\\n", " ").split()
        self.assertEqual(argv[0], "build/tools/migscope/migscope")
        done = subprocess.run([MIGSCOPE, *argv[1:]], capture_output=True, text=True, cwd=SOURCE)
        self.assertEqual(done.returncode, 0, done.stderr)
        printed = done.stdout.splitlines()
        first = shown.splitlines()[0]
        self.assertTrue(first.startswith("Recommendation: "))
        self.assertIn(first, printed)
        rows = shown.split("\n\n", 1)[1].strip().splitlines()
        self.assertGreaterEqual(len(rows), 3)
        for row in rows:
            self.assertIn(row, printed, f"README's example row is not what plan prints now: {row}")

    def test_the_checks_can_fail(self):
        # A section that names none of its options is caught: the check is not vacuous.
        self.assertTrue(options(help_text("plan")))
        self.assertIn("--objective", options(help_text("plan")))
        self.assertEqual(sections("no-such-command"), ("", ""))


if __name__ == "__main__":
    MIGSCOPE, SOURCE = sys.argv[1], sys.argv[2]
    with open(f"{SOURCE}/docs/cli.md", encoding="utf-8") as f:
        DOC = f.read()
    unittest.main(argv=sys.argv[:1], verbosity=2)
