"""A 1.0 agent that fails its first try at each task (for the retry test): the first run for a task leaves a
mark in AGL_MARKS and exits with an error; a later run plays the hello task (agents/examples/agl1_hello.py)."""

import os

from agl1_hello import HelloAgent


class FlakyHelloAgent:
    def run(self) -> None:
        mark = os.path.join(os.environ["AGL_MARKS"], os.environ["AGL_TASK"])
        if not os.path.exists(mark):
            open(mark, "w").close()
            raise RuntimeError("first try fails on purpose")
        HelloAgent().run()
