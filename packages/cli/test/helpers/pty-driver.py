"""Runs a command on a pseudo-terminal and plays a dialogue with it.

Usage: python3 pty-driver.py <config.json>
config: {"argv": [...], "env": {...}, "cwd": "...", "timeout": seconds,
         "steps": [{"expect": "<regex>", "send": "<text>"}, ...]}
Each step waits until the terminal output (since the previous match) matches
`expect`, then types `send`. Prints one JSON object: {"exit_code", "signal",
"output", "timed_out", "pending_step"}.
"""
import json
import os
import pty
import re
import select
import signal
import sys
import time

config = json.load(open(sys.argv[1]))
pid, fd = pty.fork()
if pid == 0:
    os.chdir(config.get("cwd") or os.getcwd())
    os.execvpe(config["argv"][0], config["argv"], config["env"])

output = b""
cursor = 0
steps = list(config.get("steps", []))
deadline = time.time() + config.get("timeout", 60)
timed_out = False
while True:
    if time.time() > deadline:
        timed_out = True
        os.kill(pid, signal.SIGKILL)
        break
    ready, _, _ = select.select([fd], [], [], 0.05)
    if ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    if steps:
        text = output[cursor:].decode("utf8", "replace")
        match = re.search(steps[0]["expect"], text)
        if match:
            cursor += len(text[: match.end()].encode("utf8"))
            os.write(fd, steps[0]["send"].encode("utf8"))
            steps.pop(0)

_, status = os.waitpid(pid, 0)
print(json.dumps({
    "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
    "output": output.decode("utf8", "replace"),
    "timed_out": timed_out,
    "pending_step": steps[0] if steps else None,
}))
