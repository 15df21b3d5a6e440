# The same 4-node turn as bench/turn.ts, through Python OpenProgram's own
# SessionStore (append_message x 4, then commit_turn), for a same-run
# comparison. Usage: python3 python-turn.py <python source dir> <root> <turns>
# Prints one JSON line: per-turn milliseconds and CPU seconds of the loop.
import json
import os
import sys
import time
from pathlib import Path

source, root, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, source)
from openprogram.store.session.session_store import SessionStore  # noqa: E402

store = SessionStore(Path(root))
store.create_session("bench_python", "main", title="bench")
previous = None
times = []
cpu_started = os.times()
for turn in range(turns):
    started = time.perf_counter()
    for index in range(4):
        node_id = f"t{turn:04d}n{index}"
        message = {
            "role": "user" if index % 2 == 0 else "assistant",
            "content": "survey agent reliability: 1. exp A 2. exp B 3. exp C",
            "id": node_id,
        }
        if previous is not None:
            message["predecessor"] = previous
        store.append_message("bench_python", message)
        previous = node_id
    store.commit_turn("bench_python", f"turn {turn}")
    times.append((time.perf_counter() - started) * 1000)
cpu = os.times()
print(json.dumps({
    "times": times,
    "cpu_seconds": (cpu.user - cpu_started.user) + (cpu.system - cpu_started.system)
    + (cpu.children_user - cpu_started.children_user) + (cpu.children_system - cpu_started.children_system),
}))
