"""Reads a compacted session as Python OpenProgram's store does, and renders its history by Python's rule.

Usage: python3 render_compacted.py <sessions root> <session id> [<head id>]

Reads with Python's own json module and checks what the Python store relies on
(../../shared/PYTHON-COMPAT.md): meta.json and every history file are exactly
what json.dumps writes for them, node files are named <seq:04>-<role letter>-<id>.json
and hold the node fields in order, seq 0..n-1. Then applies Python's
render_context to the branch ending at the head (meta.json head_id unless
given): the predecessor spine from the head; the active summary is the newest
node (by seq) carrying metadata.covers_ids, which must be the one meta.json's
_last_summary_id names; when every id it covers lies on the spine, those ids
are dropped and the summary stands at the first one's place; otherwise the
spine renders raw. Prints {"head", "active", "rendered": [ids], "summaries": [...]}
or exits 1 naming the first problem.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from strict_store import fail, read_history, read_meta  # noqa: E402


def main(root, session_id, head=None):
    session_dir = os.path.join(root, session_id)
    meta = read_meta(session_dir)
    ordered = read_history(session_dir)
    nodes = {node["id"]: node for node in ordered}

    summaries = []
    for node in ordered:
        covers = (node.get("metadata") or {}).get("covers_ids")
        if isinstance(covers, list) and covers:
            if node["role"] != "llm" or node["name"] != "context/summary" or node["caller"] != "":
                fail(f"summary {node['id']} is not an llm context/summary node at the top level")
            if not str(node["output"]).startswith("[Previous conversation summary]\n"):
                fail(f"summary {node['id']} output lacks the summary line")
            if any(str(entry).startswith("summary_") for entry in covers):
                fail(f"summary {node['id']} covers another summary")
            summaries.append(node)
    active = max(summaries, key=lambda node: node["seq"]) if summaries else None
    if active is not None and meta.get("_last_summary_id") != active["id"]:
        fail(f"_last_summary_id {meta.get('_last_summary_id')!r} is not the newest summary {active['id']}")
    if active is not None and meta.get("_last_summary_text") is None:
        fail("_last_summary_text is missing")

    head = head or meta.get("head_id")
    spine = []
    seen = set()
    current = head
    while current and current in nodes and current not in seen:
        seen.add(current)
        spine.append(current)
        current = nodes[current]["predecessor"]
    spine.reverse()
    rendered = spine
    if active is not None:
        covered = [str(entry) for entry in active["metadata"]["covers_ids"]]
        if active["id"] not in spine and all(entry in spine for entry in covered):
            dropped = set(covered)
            rendered = []
            for node_id in spine:
                if node_id == covered[0]:
                    rendered.append(active["id"])
                if node_id not in dropped:
                    rendered.append(node_id)
    print(json.dumps({
        "head": head,
        "active": active["id"] if active else None,
        "rendered": rendered,
        "summaries": [{"id": node["id"], "covers_ids": node["metadata"]["covers_ids"], "predecessor": node["predecessor"]} for node in summaries],
    }))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        fail("usage: render_compacted.py <sessions root> <session id> [<head id>]")
    main(*sys.argv[1:])
