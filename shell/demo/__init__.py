"""``bin/connect demo``: ``script`` holds its five scenes, their narration and the verdict as plain
values; ``play`` plays them against the stand-in and the connector; ``worker`` is the demo worker
the connector starts in place of Claude Code."""
