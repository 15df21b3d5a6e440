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
import re
import sys

NODE_FIELDS = ["id", "created_at", "seq", "role", "name", "input", "output", "caller", "predecessor", "reads", "metadata"]
FILE_NAME = re.compile(r"^(\d{4,})-([ulc])-([0-9a-zA-Z_]+)\.json$")


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def read_json(path):
    with open(path, "r", encoding="utf-8") as handle:
        text = handle.read()
    try:
        return text, json.loads(text)
    except ValueError as error:
        fail(f"{path}: not JSON: {error}")


def main(root, session_id):
    _, index = read_json(os.path.join(root, "index.json"))
    if session_id not in index:
        fail(f"index.json has no entry for {session_id}")
    session_dir = os.path.join(root, session_id)
    meta_text, meta = read_json(os.path.join(session_dir, "meta.json"))
    if meta_text != json.dumps(meta):
        fail("meta.json is not what json.dumps writes for it")
    if meta.get("id") != session_id:
        fail(f"meta.json id is {meta.get('id')!r}")

    history = os.path.join(session_dir, "history")
    nodes = []
    for name in sorted(entry for entry in os.listdir(history) if not entry.startswith(".")):
        match = FILE_NAME.match(name)
        if not match:
            fail(f"history/{name}: not a node file name")
        text, node = read_json(os.path.join(history, name))
        if list(node.keys()) != NODE_FIELDS:
            fail(f"history/{name}: fields {list(node.keys())}")
        if text != json.dumps(node):
            fail(f"history/{name}: not what json.dumps writes for it")
        if int(match.group(1)) != node["seq"] or match.group(2) != node["role"][0] or match.group(3) != node["id"]:
            fail(f"history/{name}: the name does not match seq {node['seq']}, role {node['role']}, id {node['id']}")
        nodes.append(node)

    by_id = {node["id"]: node for node in nodes}
    if [node["seq"] for node in nodes] != list(range(len(nodes))):
        fail("seq numbers are not 0..n-1 in file order")
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
