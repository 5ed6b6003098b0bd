"""The demo's ending: what each place holds, what the stand-in's record says, and the verdict.

Rules:
1. The verdict is ``shell.demo.verdict.judge`` over the POSTs the stand-in recorded since the
   demo began (its own record, read back over its control API), against every scene's
   expectations. The ledger has no say in it.
2. What each place holds is read back from the stand-in as the agent would list it: every
   message, whoever wrote it, abbreviated to one line.
3. The demo passes only when the verdict passes and no scene had a problem; the last line says
   which, and ``Ending.passed`` is what the exit code follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.destinations import MessageKind
from core.text import message_text
from shell.demo.narration import abbreviate
from shell.demo.scenes import Played
from shell.demo.standin_link import Said, StandInLink
from shell.demo.verdict import DemoTally, judge, posted_messages, verdict_line


@dataclass(frozen=True, slots=True)
class Holding:
    """One place and what it holds."""

    scene: int
    name: str
    messages: tuple[Said, ...]


@dataclass(frozen=True, slots=True)
class Ending:
    verdict: DemoTally
    posts: int
    holdings: tuple[Holding, ...]
    problems: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """Rule 3."""
        return self.verdict.passed and not self.problems

    def line(self) -> str:
        return verdict_line(self.verdict, len(self.problems))

    def lines(self, wall_seconds: float) -> list[str]:
        said = ["", "What each place holds (read back from the stand-in):"]
        for holding in self.holdings:
            said.append(f"  scene {holding.scene}, {holding.name}:")
            said += [
                f"    {message.author:<14} {abbreviate(message_text(message.content), 64)}"
                for message in holding.messages
            ] or ["    (nothing)"]
        said.append("")
        said.append(
            f"The stand-in's record: {self.posts} POSTs by the agent's side (connector and worker) since the "
            f"demo began; {len(self.verdict.posted)} created a message."
        )
        said += [
            f"  doubled: {posted.place.describe()}: '{abbreviate(posted.words)}'"
            for posted in self.verdict.doubled
        ]
        said += [f"  missing: scene {wanted.scene}, {wanted.label} ({wanted.place.describe()})"
                 for wanted in self.verdict.missing]  # fmt: skip
        said += [f"  unexpected: {posted.place.describe()}: '{abbreviate(posted.words)}'"
                 for posted in self.verdict.unexpected]  # fmt: skip
        said += [f"  problem: {problem}" for problem in self.problems]
        said.append(f"demo wall time: {wall_seconds:.1f} s")
        said.append(self.line())
        return said

    def to_json(self) -> dict[str, Any]:
        verdict = self.verdict
        return {
            "record": {"posts": self.posts, "created": len(verdict.posted)},
            "places": [
                {
                    "scene": holding.scene,
                    "place": holding.name,
                    "messages": [
                        {"id": said.id, "author": said.author, "words": message_text(said.content)}
                        for said in holding.messages
                    ],
                }
                for holding in self.holdings
            ],
            "verdict": {
                "posted": len(verdict.posted),
                "by_kind": verdict.by_kind(),
                "doubled": [{"place": p.place.describe(), "words": p.words} for p in verdict.doubled],
                "missing": [
                    {"scene": e.scene, "label": e.label, "place": e.place.describe()} for e in verdict.missing
                ],
                "unexpected": [{"place": p.place.describe(), "words": p.words} for p in verdict.unexpected],
                "passed": verdict.passed,
            },
            "problems": list(self.problems),
            "passed": self.passed,
            "line": self.line(),
        }


def ending(link: StandInLink, mark: int, played: list[Played]) -> Ending:
    """Rules 1 and 2: read the record and the places back, and judge."""
    posts = link.posts(mark)
    expected = [wanted for scene in played for wanted in scene.expected]
    verdict = judge(posted_messages(posts, link.account_id), expected)
    holdings = []
    for scene in played:
        for place in scene.places():
            name = scene.place_name if place.kind is not MessageKind.boost else "boosts on the request"
            holdings.append(Holding(scene.scene.number, name, tuple(link.messages(place))))
    problems = tuple(problem for scene in played for problem in scene.problems)
    return Ending(verdict, len(posts), tuple(holdings), problems)
