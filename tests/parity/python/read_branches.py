"""Reads a session's branches, head, rendered branch and archive flag as Python OpenProgram does.

Usage: python3 read_branches.py <sessions root> <session id>

With OPENPROGRAM_PYTHON_SRC set to a checkout of Python OpenProgram, it asks
that store itself (SessionStore.list_branches, get_session, get_branch,
list_sessions). Without it, it applies the same rules (PYTHON-COMPAT.md,
Branches and Archive) with Python's own json module. Prints one JSON object:
{"reader", "head_id", "branch", "tips": [[head_msg_id, name]], "listed", "listed_all", "branches_meta"}.
"""

import json
import os
import sys


def with_store(root, session_id):
    sys.path.insert(0, os.environ["OPENPROGRAM_PYTHON_SRC"])
    from openprogram.store.session.session_store import SessionStore

    store = SessionStore(root)
    session = store.get_session(session_id) or {}
    return {
        "reader": "python-openprogram",
        "head_id": session.get("head_id"),
        "branch": [message.get("id") for message in store.get_branch(session_id)],
        "tips": [[tip["head_msg_id"], tip["name"]] for tip in store.list_branches(session_id)],
        "listed": [row["id"] for row in store.list_sessions()],
        "listed_all": [row["id"] for row in store.list_sessions(include_archived=True)],
        "branches_meta": session.get("branches") or {},
    }


def edge(value):
    return value or None


def with_rules(root, session_id):
    with open(os.path.join(root, "index.json"), encoding="utf-8") as handle:
        index = json.load(handle)
    session_dir = os.path.join(root, session_id)
    with open(os.path.join(session_dir, "meta.json"), encoding="utf-8") as handle:
        meta = json.load(handle)
    history = os.path.join(session_dir, "history")
    nodes = []
    for name in sorted(os.listdir(history)):
        with open(os.path.join(history, name), encoding="utf-8") as handle:
            nodes.append(json.load(handle))
    by_id = {node["id"]: node for node in nodes}
    children = {}
    for node in nodes:
        if edge(node["predecessor"]):
            children.setdefault(node["predecessor"], []).append(node["id"])

    def conversational(node):
        return node["role"] in ("user", "llm")

    def inside_run(node):
        caller = edge(node["caller"])
        if not caller or caller == "ROOT":
            return False
        caller_node = by_id.get(caller)
        return caller_node is not None and not conversational(caller_node)

    def continues(child_id):
        child = by_id.get(child_id)
        if child is None or not conversational(child):
            return False
        if (child["metadata"] or {}).get("display") in ("root", "runtime"):
            return False
        if child["name"].startswith("context/") or inside_run(child):
            return False
        return True

    labels = meta.get("branches") or {}
    tips = []
    for node in nodes:
        caller = edge(node["caller"])
        if caller and caller != "ROOT" and (not conversational(node) or inside_run(node)):
            continue
        if node["name"].startswith("context/"):
            continue
        if any(continues(kid) for kid in children.get(node["id"], [])):
            continue
        label = labels.get(node["id"])
        name = label.get("name") if isinstance(label, dict) else label
        updated = label.get("updated_at") if isinstance(label, dict) else node["created_at"]
        tips.append((node["id"], name, updated or 0))
    roots = [n for n in nodes if not edge(n["caller"]) and (edge(n["predecessor"]) or "ROOT") == "ROOT"]
    if roots:
        current = min(roots, key=lambda n: n["created_at"])["id"]
        seen = set()
        while current not in seen and children.get(current):
            seen.add(current)
            current = children[current][0]
        if not any(tip[0] == current for tip in tips):
            label = labels.get(current)
            tips.append((current, label.get("name") if isinstance(label, dict) else label, by_id[current]["created_at"]))
    tips = [tip for tip in tips if not tip[0].startswith("summary_")]
    tips.sort(key=lambda tip: tip[2], reverse=True)

    branch = []
    current = meta.get("head_id")
    while current and current != "ROOT" and current in by_id and current not in branch:
        branch.append(current)
        current = by_id[current]["predecessor"]
    rows = sorted(index.values(), key=lambda row: row.get("updated_at") or 0, reverse=True)
    return {
        "reader": "rules",
        "head_id": meta.get("head_id"),
        "branch": list(reversed(branch)),
        "tips": [[tip[0], tip[1]] for tip in tips],
        "listed": [row["id"] for row in rows if not row.get("archived")],
        "listed_all": [row["id"] for row in rows],
        "branches_meta": labels,
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: read_branches.py <sessions root> <session id>", file=sys.stderr)
        sys.exit(2)
    reader = with_store if os.environ.get("OPENPROGRAM_PYTHON_SRC") else with_rules
    print(json.dumps(reader(sys.argv[1], sys.argv[2])))
