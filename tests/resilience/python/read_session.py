"""Reads one session the way the Python OpenProgram store does, with Python's own json module.

Usage: python3 read_session.py <sessions root> <session id>

Checks what the Python store relies on (see shared PYTHON-COMPAT.md): the index
entry, meta.json, history files named <seq:04>-<role letter>-<id>.json holding
the node fields in order, seq 0..n-1, every caller and predecessor naming a
node of the session, the head reachable, and each file byte-for-byte what
Python's json.dumps writes for it. Prints a JSON summary on success; exits 1
naming the first problem otherwise.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from strict_store import fail, read_history, read_json, read_meta  # noqa: E402


def main(root, session_id):
    _, index = read_json(os.path.join(root, "index.json"))
    if session_id not in index:
        fail(f"index.json has no entry for {session_id}")
    session_dir = os.path.join(root, session_id)
    meta = read_meta(session_dir)
    if meta.get("id") != session_id:
        fail(f"meta.json id is {meta.get('id')!r}")
    nodes = read_history(session_dir)
    by_id = {node["id"]: node for node in nodes}
    for node in nodes:
        if node["caller"] not in ("", None) and node["caller"] not in by_id:
            fail(f"node {node['id']}: caller {node['caller']} is not in the session")
        if node["predecessor"] not in (None, "", "ROOT") and node["predecessor"] not in by_id:
            fail(f"node {node['id']}: predecessor {node['predecessor']} is not in the session")

    # The active branch, as Python renders it: predecessors back from the head.
    branch = []
    current = meta.get("head_id")
    while current not in (None, "", "ROOT"):
        if current not in by_id or len(branch) > len(nodes):
            fail(f"the branch from head_id {meta.get('head_id')} does not reach a root")
        branch.append(current)
        current = by_id[current]["predecessor"]

    print(
        json.dumps(
            {
                "ids": [node["id"] for node in nodes],
                "branch": list(reversed(branch)),
                "top_level": [[node["name"], node["metadata"].get("status")] for node in nodes if node["caller"] == ""],
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: read_session.py <sessions root> <session id>")
    main(sys.argv[1], sys.argv[2])
