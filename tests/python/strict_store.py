"""Reads a session's files as Python OpenProgram's store relies on them, strictly, with Python's own json module.

Shared by the parity and resilience read-back scripts (see ../../shared/PYTHON-COMPAT.md):
meta.json and every history file must be exactly what json.dumps writes for them, node files
are named <seq:04>-<role letter>-<id>.json and hold the node fields in order, and seqs run
0..n-1 in file order. Any difference exits 1 naming the first problem.
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
    """(text, value) of a JSON file; exits naming the file when it is not JSON."""
    with open(path, "r", encoding="utf-8") as handle:
        text = handle.read()
    try:
        return text, json.loads(text)
    except ValueError as error:
        fail(f"{path}: not JSON: {error}")


def read_meta(session_dir):
    """meta.json, which must be byte for byte what json.dumps writes for it."""
    text, meta = read_json(os.path.join(session_dir, "meta.json"))
    if text != json.dumps(meta):
        fail("meta.json is not what json.dumps writes for it")
    return meta


def read_history(session_dir):
    """Every node of history/, in file order, each checked against its file name and json.dumps."""
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
    if [node["seq"] for node in nodes] != list(range(len(nodes))):
        fail("seq numbers are not 0..n-1 in file order")
    return nodes
